import { describe, expect, it } from 'vitest'
import { parseCookie } from './parse-cookie.js'

describe('parseCookie', () => {
  it('finds a cookie among others, spaces tolerated', () => {
    expect(parseCookie('a=1; rm=rm1.abc_-; b=2', 'rm')).toBe('rm1.abc_-')
    expect(parseCookie('rm=x', 'rm')).toBe('x')
    expect(parseCookie('  a=1 ;rm = v ; b=2', 'rm')).toBe('v')
    expect(parseCookie('a=1;rm=last', 'rm')).toBe('last')
  })

  it('returns undefined when absent, for an empty header and for undefined', () => {
    expect(parseCookie('a=1; b=2', 'rm')).toBeUndefined()
    expect(parseCookie('', 'rm')).toBeUndefined()
    expect(parseCookie(undefined, 'rm')).toBeUndefined()
    expect(parseCookie('rm', 'rm')).toBeUndefined()
    expect(parseCookie('rm;a=1', 'rm')).toBeUndefined()
  })

  it('matches the whole name only', () => {
    expect(parseCookie('xrm=1; rmx=2', 'rm')).toBeUndefined()
    expect(parseCookie('xrm=1; rm=3', 'rm')).toBe('3')
  })

  it('first occurrence wins', () => {
    expect(parseCookie('rm=first; rm=second', 'rm')).toBe('first')
  })

  it('keeps "=" inside the value, unquotes and percent-decodes, leaves bad encodings as is', () => {
    expect(parseCookie('rm=a=b==', 'rm')).toBe('a=b==')
    expect(parseCookie('rm="quoted"', 'rm')).toBe('quoted')
    expect(parseCookie('rm=a%20b', 'rm')).toBe('a b')
    expect(parseCookie('rm=%E0%A4%A', 'rm')).toBe('%E0%A4%A')
    expect(parseCookie('rm=', 'rm')).toBe('')
  })

  it('reads an array of headers (the first that has it)', () => {
    expect(parseCookie(['a=1', 'rm=2; rm=3'], 'rm')).toBe('2')
    expect(parseCookie([], 'rm')).toBeUndefined()
  })

  it('is linear on a huge hostile header: characters scanned and copied, counted, stay within 3x its length', () => {
    const hostile = [`${';'.repeat(1_000_000)}${'='.repeat(1_000_000)}; rm=ok`, `${'a;'.repeat(500_000)}x=1`]
    const [first, second] = hostile.map((header) => {
      const { result, work } = countStringWork(() => parseCookie(header, 'rm'))
      return { result, work, length: header.length }
    })
    expect(first?.result).toBe('ok')
    expect(second?.result).toBeUndefined()
    for (const run of [first, second]) expect(run?.work).toBeLessThanOrEqual(3 * (run?.length ?? 0))
  })
})

/**
 * Runs `fn` and counts the characters it makes `String.prototype.indexOf` scan and `slice` copy:
 * a measure of work that does not depend on how busy the machine is (unlike a duration). The two
 * methods are swapped for counting wrappers for the (synchronous) call only — plain functions,
 * not `vi.spyOn`, which would record each of the million calls and take seconds.
 */
function countStringWork<T>(fn: () => T): { result: T; work: number } {
  const proto = String.prototype
  const { indexOf, slice } = proto
  let work = 0
  proto.indexOf = function (this: string, search: string, from?: number): number {
    const start = Math.max(0, from ?? 0)
    const at = indexOf.call(this, search, start)
    work += (at === -1 ? this.length : at + search.length) - start
    return at
  }
  proto.slice = function (this: string, begin?: number, end?: number): string {
    const out = slice.call(this, begin, end)
    work += out.length
    return out
  }
  try {
    return { result: fn(), work }
  } finally {
    proto.indexOf = indexOf
    proto.slice = slice
  }
}
