import { describe, expect, it } from 'vitest'
import { HashResolver } from './hash-resolver.js'
import type { ShardKey } from './shard-resolver.js'

const names = (n: number) => Object.freeze(Array.from({ length: n }, (_, i) => `s${i}`))

function shares(keys: Iterable<ShardKey>, shardCount: number): number[] {
  const r = new HashResolver()
  const shardNames = names(shardCount)
  const counts = new Map<string, number>(shardNames.map((s) => [s, 0]))
  for (const key of keys) {
    const s = r.resolve(key, shardNames)
    counts.set(s, counts.get(s)! + 1)
  }
  return [...counts.values()]
}

function* range(from: number, to: number): Generator<number> {
  for (let i = from; i <= to; i++) yield i
}

describe('HashResolver', () => {
  it("is named 'hash'", () => {
    expect(new HashResolver().name).toBe('hash')
  })

  // Published vectors: shard index = murmur3_32(utf8(key), 0) % n. Generated with Guava 32.1.3,
  // Integer.toUnsignedLong(Hashing.murmur3_32_fixed(0).hashBytes(key.getBytes(UTF_8)).asInt()) % n.
  // [key, murmur3_32, index with 2, 3, 4, 10 shards]
  const vectors: [string, number, number, number, number, number][] = [
    ['', 0x0, 0, 0, 0, 0],
    ['a', 0x3c2569b2, 0, 2, 2, 0],
    ['0', 0xd271c07f, 1, 0, 3, 7],
    ['42', 0xbc58a436, 0, 2, 2, 4],
    ['-1', 0x71ba248a, 0, 2, 2, 8],
    ['user-12345', 0xa8e286a0, 0, 1, 0, 8],
    ['alice@example.com', 0xc10e04e6, 0, 0, 2, 6],
    ['한글', 0x9471d4d2, 0, 2, 2, 8],
    ['emoji 😀', 0x75ea4fd, 1, 2, 1, 3],
    ['9007199254740991', 0x64fc5365, 1, 2, 1, 1],
    ['-9007199254740991', 0xfcf319d3, 1, 2, 3, 1],
    ['18446744073709551616', 0xa4303650, 0, 1, 0, 6],
    ['The quick brown fox jumps over the lazy dog', 0x2e4ff723, 1, 2, 3, 7],
  ]

  it.each(vectors)(
    '%j (murmur3 %i) -> shards %i, %i, %i, %i of 2, 3, 4, 10',
    (key, hash, i2, i3, i4, i10) => {
      const r = new HashResolver()
      expect([hash % 2, hash % 3, hash % 4, hash % 10]).toEqual([i2, i3, i4, i10])
      expect(r.resolve(key, names(2))).toBe(`s${i2}`)
      expect(r.resolve(key, names(3))).toBe(`s${i3}`)
      expect(r.resolve(key, names(4))).toBe(`s${i4}`)
      expect(r.resolve(key, names(10))).toBe(`s${i10}`)
    },
  )

  it('puts 42, "42" and 42n on the same shard (integers hash as their decimal string)', () => {
    const r = new HashResolver()
    for (const n of [0, 42, -1, 2 ** 40, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]) {
      for (const count of [2, 3, 10, 64]) {
        const expected = r.resolve(String(n), names(count))
        expect(r.resolve(n, names(count))).toBe(expected)
        expect(r.resolve(BigInt(n), names(count))).toBe(expected)
      }
    }
    expect(r.resolve(2n ** 64n, names(10))).toBe('s6') // '18446744073709551616' in the table
  })

  it('spreads 100,000 sequential string ids over 4 shards within 5% (max/min share)', () => {
    const counts = shares(
      (function* () {
        for (const i of range(1, 100_000)) yield String(i)
      })(),
      4,
    )
    expect(Math.max(...counts) / Math.min(...counts)).toBeLessThanOrEqual(1.05)
  })

  it('spreads 100,000 sequential number ids over 4 shards within 5%, as their strings', () => {
    const counts = shares(range(1, 100_000), 4)
    expect(Math.max(...counts) / Math.min(...counts)).toBeLessThanOrEqual(1.05)
    expect(counts).toEqual(
      shares(
        (function* () {
          for (const i of range(1, 100_000)) yield String(i)
        })(),
        4,
      ),
    )
  })

  it('spreads over 10 and 7 shards too', () => {
    for (const n of [7, 10]) {
      const counts = shares(range(1, 100_000), n)
      expect(Math.max(...counts) / Math.min(...counts)).toBeLessThanOrEqual(1.1)
    }
  })

  it('rejects a number key that is not a safe integer, and a non-key, with a TypeError', () => {
    const r = new HashResolver()
    expect(() => r.resolve(1.5, names(2))).toThrow(TypeError)
    expect(() => r.resolve(2 ** 53, names(2))).toThrow(TypeError)
    expect(() => r.resolve(undefined as unknown as string, names(2))).toThrow(TypeError)
  })

  it('rejects an empty shard list with a RangeError', () => {
    expect(() => new HashResolver().resolve('a', [])).toThrow(RangeError)
  })
})
