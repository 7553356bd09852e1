import { describe, expect, it } from 'vitest'
import {
  gtidFormat,
  gtidReached,
  mergeGtidPositions,
  parseMariaDbPosition,
  parseMysqlGtidSet,
} from './gtid.js'

const A = '3e11fa47-71ca-11e1-9e33-c80aa9429562'
const B = '8a94f357-aab4-11df-86ab-c80aa9429562'

describe('gtidFormat', () => {
  it('tells MariaDB positions from MySQL sets', () => {
    expect(gtidFormat('0-1-42')).toBe('mariadb')
    expect(gtidFormat('0-1-42,1-2-3')).toBe('mariadb')
    expect(gtidFormat(`${A}:1-5`)).toBe('mysql')
    expect(gtidFormat('')).toBeUndefined()
    expect(gtidFormat(' \n ')).toBeUndefined()
  })
})

describe('parseMariaDbPosition', () => {
  it('parses domains and drops server ids', () => {
    expect(parseMariaDbPosition('0-1-42,1-2-7')).toEqual(
      new Map([
        [0, 42n],
        [1, 7n],
      ]),
    )
  })
  it('keeps the highest sequence number of a repeated domain', () => {
    expect(parseMariaDbPosition('0-1-42,0-2-40')).toEqual(new Map([[0, 42n]]))
  })
  it('accepts the empty position and whitespace', () => {
    expect(parseMariaDbPosition('')?.size).toBe(0)
    expect(parseMariaDbPosition(' 0-1-1 ,\n 1-1-2 ')?.size).toBe(2)
  })
  it('handles 64-bit sequence numbers exactly', () => {
    expect(parseMariaDbPosition('0-1-18446744073709551615')?.get(0)).toBe(18446744073709551615n)
  })
  it('rejects what is not a position', () => {
    for (const bad of ['0-1', 'x-1-2', '0-1-2,', '0-1-2-3', `${A}:1-5`, '0--1-2']) {
      expect(parseMariaDbPosition(bad), bad).toBeUndefined()
    }
  })
})

describe('parseMysqlGtidSet', () => {
  it('parses, lowercases, sorts and merges intervals', () => {
    const set = parseMysqlGtidSet(`${A.toUpperCase()}:7-9:1-3:4-5:11,\n${B}:1`)
    expect(set).toEqual(
      new Map([
        [
          A,
          [
            [1n, 5n],
            [7n, 9n],
            [11n, 11n],
          ],
        ],
        [B, [[1n, 1n]]],
      ]),
    )
  })
  it('merges entries of the same uuid', () => {
    expect(parseMysqlGtidSet(`${A}:1-3,${A}:4-6`)).toEqual(new Map([[A, [[1n, 6n]]]]))
  })
  it('keys tagged GTIDs (MySQL 8.3+) apart', () => {
    const set = parseMysqlGtidSet(`${A}:1-5:batch:1-2:Other:3`)
    expect(set?.get(A)).toEqual([[1n, 5n]])
    expect(set?.get(`${A}:batch`)).toEqual([[1n, 2n]])
    expect(set?.get(`${A}:other`)).toEqual([[3n, 3n]])
  })
  it('rejects what is not a GTID set', () => {
    for (const bad of ['0-1-2', `${A}`, `${A}:5-1`, `${A}:0`, 'not-a-uuid:1-5', `${A}:1-2,`, `${A}:1-x`]) {
      expect(parseMysqlGtidSet(bad), bad).toBeUndefined()
    }
  })
})

describe('gtidReached (MariaDB)', () => {
  const cases: [replay: string, target: string, reached: boolean][] = [
    ['0-1-10', '0-1-10', true],
    ['0-1-11', '0-1-10', true],
    ['0-1-9', '0-1-10', false],
    ['0-2-10', '0-1-10', true], // server id ignored (failover within the domain)
    ['0-1-10,1-1-5', '0-1-10,1-1-5', true],
    ['0-1-10,1-1-4', '0-1-10,1-1-5', false],
    ['0-1-10', '0-1-10,1-1-5', false], // missing domain
    ['0-1-10,1-1-5,2-1-1', '1-1-5', true], // extra domains in replay are fine
    ['1-1-5,0-1-10', '0-1-10,1-1-5', true], // order does not matter
    [' 0-1-10,\n1-1-5 ', '0-1-10, 1-1-5', true],
    ['', '0-1-1', false],
    ['0-1-1', '', false], // '' is the router's "unknown position": never reached
    ['', '', false],
    ['0-1-100', '0-1-99', true],
    ['0-1-99', '0-1-100', false], // numeric, not string, comparison
    ['0-1-18446744073709551615', '0-1-18446744073709551614', true],
    ['garbage', '0-1-1', false],
    ['0-1-5', 'garbage', false],
    [`${A}:1-5`, '0-1-1', false], // mixed formats
    // single GTIDs (the fast path) against the general parse: leading zeros, domains, lengths
    ['00-1-5', '0-1-5', true],
    ['0-1-010', '0-1-9', true],
    ['0-1-9', '0-1-010', false],
    ['1-1-5', '0-1-5', false], // another domain
    ['10-1-5', '1-1-5', false],
    ['0-1-10', '0-1-9', true], // longer sequence number
    ['0-1-9', '0-1-10', false],
    ['0-1-123456789012345678', '0-1-123456789012345677', true],
    ['0-1-123456789012345677', '0-1-123456789012345678', false],
    ['0-1-5', '0-1-5,1-1-1', false],
    ['0-1-5,1-1-1', '0-1-5', true],
    ['0-1-', '0-1-1', false],
    ['0-1-1', '0--1', false],
    ['-0-1-1', '0-1-1', false],
    ['0-1-1-1', '0-1-1', false],
    ['0-1-123456789012345678901', '0-1-1', false], // sequence number too long for a GTID
  ]
  for (const [replay, target, reached] of cases) {
    it(`${JSON.stringify(replay)} reached ${JSON.stringify(target)}: ${reached}`, () => {
      expect(gtidReached(replay, target)).toBe(reached)
    })
  }
})

describe('gtidReached (MySQL)', () => {
  const cases: [replay: string, target: string, reached: boolean][] = [
    [`${A}:1-5`, `${A}:1-5`, true],
    [`${A}:1-9`, `${A}:3-5`, true],
    [`${A}:1-4`, `${A}:1-5`, false],
    [`${A}:1-5:7-9`, `${A}:6`, false], // a gap
    [`${A}:1-5:7-9`, `${A}:1-5:8`, true],
    [`${A}:1-5:6-9`, `${A}:4-7`, true], // adjacent intervals merge
    [`${A}:1-5,${B}:1-3`, `${A}:1-5,${B}:1-3`, true],
    [`${A}:1-5,${B}:1-2`, `${A}:1-5,${B}:1-3`, false],
    [`${A}:1-5`, `${A}:1-5,${B}:1`, false], // missing uuid
    [`${A}:1-5,\n${B}:1-3`, `${B}:2`, true], // MySQL prints newlines after commas
    [`${A.toUpperCase()}:1-5`, `${A}:5`, true], // uuid case
    [`${A}:1-5`, `${A.toUpperCase()}:1-5`, true],
    [`${A}:1-5:tag:1-2`, `${A}:tag:2`, true],
    [`${A}:1-5`, `${A}:tag:1`, false], // tags are their own sequence
    ['', `${A}:1`, false],
    [`${A}:1`, '', false],
    [`${A}:1`, ' \n', false],
    [`${A}:1-5`, '0-1-1', false], // mixed formats
    ['0-1-1', `${A}:1`, false],
    [`${A}:1-18446744073709551`, `${A}:18446744073709550`, true],
  ]
  for (const [replay, target, reached] of cases) {
    it(`${JSON.stringify(replay)} reached ${JSON.stringify(target)}: ${reached}`, () => {
      expect(gtidReached(replay, target)).toBe(reached)
    })
  }

  it('gives the same answers from its cache', () => {
    for (let i = 0; i < 3; i++) {
      expect(gtidReached(`${A}:1-10`, `${A}:1-10`)).toBe(true)
      expect(gtidReached(`${A}:1-9`, `${A}:1-10`)).toBe(false)
    }
  })

  it('keeps working past the cache limit', () => {
    for (let i = 1; i < 1500; i++) expect(gtidReached(`${A}:1-${i + 1}`, `${A}:${i}`)).toBe(true)
    for (let i = 1; i < 1500; i++) expect(gtidReached(`0-1-${i}`, `0-1-${i + 1}`)).toBe(false)
  })
})

describe('mergeGtidPositions', () => {
  it('MariaDB: per domain, the higher sequence number (server ids kept for printing)', () => {
    expect(mergeGtidPositions('0-1-5', '0-1-9')).toBe('0-1-9')
    expect(mergeGtidPositions('0-1-9', '0-2-5')).toBe('0-1-9')
    expect(mergeGtidPositions('0-1-5,1-2-7', '0-1-9')).toBe('0-1-9,1-2-7')
    expect(mergeGtidPositions('0-1-5', '2-1-3')).toBe('0-1-5,2-1-3')
  })

  it('MariaDB: the merge is reached exactly when both are (several domains)', () => {
    const merged = mergeGtidPositions('0-1-5', '1-1-3') as string
    expect(gtidReached('0-1-5,1-1-3', merged)).toBe(true)
    expect(gtidReached('0-1-5', merged)).toBe(false) // domain 1 missing: a session's write there is not replayed
    expect(gtidReached('0-1-4,1-1-9', merged)).toBe(false)
  })

  it('MySQL: the union of the sets (tags included)', () => {
    expect(mergeGtidPositions(`${A}:1-3`, `${A}:5`)).toBe(`${A}:1-3:5`)
    expect(mergeGtidPositions(`${A}:1-3`, `${A}:4`)).toBe(`${A}:1-4`)
    expect(mergeGtidPositions(`${A}:7`, `${B}:2`)).toBe(`${A}:7,${B}:2`)
    const merged = mergeGtidPositions(`${A}:7`, `${A}:tag1:2`) as string
    expect(gtidReached(`${A}:1-7:tag1:1-2`, merged)).toBe(true)
    expect(gtidReached(`${A}:1-7`, merged)).toBe(false)
  })

  it('an empty side gives the other; garbage or two formats give undefined', () => {
    expect(mergeGtidPositions('', '0-1-5')).toBe('0-1-5')
    expect(mergeGtidPositions('0-1-5', ' ')).toBe('0-1-5')
    expect(mergeGtidPositions('', '')).toBeUndefined()
    expect(mergeGtidPositions('0-1-5', `${A}:1`)).toBeUndefined()
    expect(mergeGtidPositions('0-1-x', '0-1-5')).toBeUndefined()
  })
})
