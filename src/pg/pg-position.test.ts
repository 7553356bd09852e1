import { describe, expect, it } from 'vitest'
import { lsnReached } from './pg-position.js'

/** The reference: both parts parsed whole as hexadecimal `BigInt`s (null when not a pg_lsn). */
function reference(replay: string, target: string): boolean {
  const parse = (s: string): bigint | null => {
    const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(s)
    return m === null ? null : (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`)
  }
  const a = parse(replay)
  const b = parse(target)
  return a !== null && b !== null && a >= b
}

describe('lsnReached', () => {
  it.each([
    ['0/3000060', '0/3000028', true],
    ['0/3000028', '0/3000060', false],
    ['0/3000060', '0/3000060', true],
    ['1/0', '0/FFFFFFFF', true],
    ['0/FFFFFFFF', '1/0', false],
    ['16/B374D848', '16/b374d848', true],
    ['A/10', '9/FFFFFFFF', true],
    ['0/10', '0/F', true],
    ['0/F', '0/10', false],
    ['FFFFFFFF/FFFFFFFF', 'FFFFFFFF/FFFFFFFE', true],
  ])('%s has reached %s: %s', (replay, target, expected) => {
    expect(lsnReached(replay, target)).toBe(expected)
    expect(reference(replay, target)).toBe(expected)
  })

  it.each([
    ['0/1G', '0/1'],
    ['0/1', '0/1G'],
    ['/1', '0/1'],
    ['0/', '0/0'],
    ['01', '0/1'],
    ['0/123456789', '0/1'],
    ['0/1 ', '0/1'],
    ['-1/0', '0/0'],
    ['0x1/0', '0/0'],
    ['', ''],
    ['0/1/2', '0/1'],
  ])('unparsable %j vs %j never counts as reached', (replay, target) => {
    expect(lsnReached(replay, target)).toBe(false)
    expect(lsnReached(target, replay)).toBe(false)
  })

  it('agrees with a BigInt reference on random positions', () => {
    let seed = 7
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed % n
    }
    const hex = (len: number) => Array.from({ length: len }, () => '0123456789ABCDEFabcdef'[rnd(22)]).join('')
    for (let i = 0; i < 5000; i++) {
      const hi = hex(1 + rnd(2))
      const a = `${hi}/${hex(1 + rnd(8))}`
      const b = `${rnd(4) === 0 ? hex(1 + rnd(2)) : hi}/${hex(1 + rnd(8))}`
      expect(lsnReached(a, b)).toBe(reference(a, b))
      expect(lsnReached(b, a)).toBe(reference(b, a))
    }
  })
})
