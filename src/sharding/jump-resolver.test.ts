import { describe, expect, it } from 'vitest'
import { JumpResolver, jumpConsistentHash } from './jump-resolver.js'
import { keyBytes, murmur3_32 } from './murmur3.js'

const names = (n: number) => Object.freeze(Array.from({ length: n }, (_, i) => `s${i}`))

/** The paper's C code, transcribed with BigInt (uint64 arithmetic), to cross-check the fast version. */
function referenceJump(key: bigint, buckets: number): number {
  let k = BigInt.asUintN(64, key)
  let b = -1n
  let j = 0n
  while (j < BigInt(buckets)) {
    b = j
    k = BigInt.asUintN(64, k * 2862933555777941757n + 1n)
    j = BigInt(Math.floor(Number(b + 1n) * (2 ** 31 / Number((k >> 33n) + 1n))))
  }
  return Number(b)
}

const split = (key: bigint): [number, number] => [Number(key >> 32n), Number(key & 0xffffffffn)]

function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

describe('jumpConsistentHash', () => {
  // Published vectors on raw 64-bit keys. Generated in Java (JDK 17) with the paper's code
  // (long arithmetic, `>>>` for the unsigned shift), and checked against Guava 32.1.3's
  // Hashing.consistentHash(key, 1000), which agrees on every row.
  // [key, buckets 1, 2, 10, 1000, 65536]
  const vectors: [bigint, number, number, number, number, number][] = [
    [0x0n, 0, 0, 0, 0, 0],
    [0x1n, 0, 0, 6, 549, 21134],
    [0x2an, 0, 1, 2, 571, 5747],
    [0xdead10ccn, 0, 1, 5, 361, 6591],
    [0x100n, 0, 1, 3, 520, 8799],
    [0xffffffffffffffffn, 0, 1, 9, 313, 18311],
    [0x8000000000000000n, 0, 1, 5, 453, 53854],
    [0x7fffffffffffffffn, 0, 0, 8, 972, 8550],
    [0x123456789abcdefn, 0, 0, 0, 194, 33301],
  ]

  it.each(vectors)('key %i -> %i, %i, %i, %i, %i for 1, 2, 10, 1000, 65536 buckets', (key, ...expected) => {
    const [hi, lo] = split(key)
    expect([1, 2, 10, 1000, 65536].map((n) => jumpConsistentHash(hi, lo, n))).toEqual(expected)
    expect([1, 2, 10, 1000, 65536].map((n) => referenceJump(key, n))).toEqual(expected)
  })

  it('agrees with the BigInt transcription of the paper on random keys and bucket counts', () => {
    const random = mulberry32(7)
    for (let i = 0; i < 3000; i++) {
      const hi = Math.floor(random() * 2 ** 32)
      const lo = Math.floor(random() * 2 ** 32)
      const buckets = 1 + Math.floor(random() ** 3 * 100_000)
      expect(jumpConsistentHash(hi, lo, buckets)).toBe(
        referenceJump((BigInt(hi) << 32n) | BigInt(lo), buckets),
      )
    }
  })

  it('takes the halves as signed or unsigned 32-bit integers alike', () => {
    expect(jumpConsistentHash(-1, -1, 1000)).toBe(313)
    expect(jumpConsistentHash(-2147483648, 0, 1000)).toBe(453)
  })
})

describe('JumpResolver', () => {
  it("is named 'jump'", () => {
    expect(new JumpResolver().name).toBe('jump')
  })

  // Published vectors: key64 = murmur3_32(utf8(key), 0) << 32 | murmur3_32(utf8(key), 0x9747b28c),
  // shard = JumpConsistentHash(key64, n). Generated in Java (JDK 17) with Guava 32.1.3's
  // Hashing.murmur3_32_fixed and the paper's jump code.
  // [key, key64, shard index with 1, 2, 5, 10, 1000 shards]
  const vectors: [string, bigint, number, number, number, number, number][] = [
    ['', 0xebb6c228n, 0, 0, 0, 0, 448],
    ['a', 0x3c2569b27fa09ea6n, 0, 1, 4, 9, 550],
    ['42', 0xbc58a436025330d8n, 0, 0, 0, 0, 335],
    ['-1', 0x71ba248a0a8c265en, 0, 0, 3, 3, 749],
    ['user-12345', 0xa8e286a0049fcb7cn, 0, 1, 1, 1, 624],
    ['alice@example.com', 0xc10e04e60e20f5een, 0, 1, 4, 8, 327],
    ['0123456789abcdef', 0x36c7e0df2ada2fccn, 0, 1, 4, 9, 658],
    ['한글', 0x9471d4d2b21ca27dn, 0, 0, 3, 9, 498],
    ['emoji 😀', 0x75ea4fdb574963cn, 0, 0, 3, 6, 968],
    ['9007199254740991', 0x64fc5365b8015692n, 0, 0, 3, 8, 980],
    ['18446744073709551615', 0xded02f8b4c5d322an, 0, 1, 2, 7, 120],
  ]

  it.each(vectors)(
    '%j (key64 %i) -> shards %i, %i, %i, %i, %i of 1, 2, 5, 10, 1000',
    (key, key64, ...expected) => {
      const bytes = keyBytes(key)
      expect((BigInt(murmur3_32(bytes, 0)) << 32n) | BigInt(murmur3_32(bytes, 0x9747b28c))).toBe(key64)
      const r = new JumpResolver()
      expect([1, 2, 5, 10, 1000].map((n) => r.resolve(key, names(n)))).toEqual(expected.map((i) => `s${i}`))
    },
  )

  it('puts 42, "42" and 42n on the same shard; numbers and bigints hash as their decimal string', () => {
    const r = new JumpResolver()
    expect(r.resolve(42, names(1000))).toBe('s335')
    expect(r.resolve(42n, names(1000))).toBe('s335')
    expect(r.resolve(-1, names(1000))).toBe('s749')
    expect(r.resolve(Number.MAX_SAFE_INTEGER, names(1000))).toBe('s980')
    expect(r.resolve(2n ** 64n - 1n, names(1000))).toBe('s120')
  })

  it('growing from 4 to 5 shards moves 15-25% of 100,000 keys, all of them to the new shard', () => {
    const r = new JumpResolver()
    const four = names(4)
    const five = names(5)
    let moved = 0
    for (let i = 1; i <= 100_000; i++) {
      const before = r.resolve(i, four)
      const after = r.resolve(i, five)
      if (before !== after) {
        moved++
        expect(after).toBe('s4')
      }
    }
    expect(moved / 100_000).toBeGreaterThanOrEqual(0.15)
    expect(moved / 100_000).toBeLessThanOrEqual(0.25)
  })

  it('only ever moves keys to the newly added last shard, from 1 up to 40 shards', () => {
    const r = new JumpResolver()
    const keys = Array.from({ length: 2000 }, (_, i) => `user-${i}`)
    let previous = keys.map((k) => r.resolve(k, names(1)))
    for (let n = 2; n <= 40; n++) {
      const current = keys.map((k) => r.resolve(k, names(n)))
      let moved = 0
      current.forEach((s, i) => {
        if (s !== previous[i]) {
          moved++
          expect(s).toBe(`s${n - 1}`)
        }
      })
      expect(moved / keys.length).toBeGreaterThan(0.5 / n) // about 1/n move
      expect(moved / keys.length).toBeLessThan(2 / n)
      previous = current
    }
  })

  it('spreads 100,000 sequential ids over 4 shards within 5% (max/min share)', () => {
    const r = new JumpResolver()
    const shardNames = names(4)
    for (const asString of [false, true]) {
      const counts = new Map<string, number>()
      for (let i = 1; i <= 100_000; i++) {
        const s = r.resolve(asString ? String(i) : i, shardNames)
        counts.set(s, (counts.get(s) ?? 0) + 1)
      }
      expect(counts.size).toBe(4)
      expect(Math.max(...counts.values()) / Math.min(...counts.values())).toBeLessThanOrEqual(1.05)
    }
  })

  it('rejects bad keys with a TypeError even with one shard, and no shards with a RangeError', () => {
    const r = new JumpResolver()
    expect(() => r.resolve(1.5, names(1))).toThrow(TypeError)
    expect(() => r.resolve(null as unknown as string, names(1))).toThrow(TypeError)
    expect(() => r.resolve('a', [])).toThrow(RangeError)
  })
})
