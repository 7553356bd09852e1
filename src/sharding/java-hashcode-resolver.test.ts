import { describe, expect, it } from 'vitest'
import { JavaHashCodeResolver, javaLongHashCode, javaStringHashCode } from './java-hashcode-resolver.js'

const names = (n: number) => Object.freeze(Array.from({ length: n }, (_, i) => `s${i}`))

/*
 * Expected values generated with OpenJDK 17.0.15 by a throwaway program that printed, for each key,
 * key.hashCode() (String.hashCode / Long.hashCode / Integer.hashCode) and Math.floorMod(h, 2),
 * Math.floorMod(h, 3), Math.floorMod(h, 4), e.g.
 *   for (String s : strings) System.out.println(s + ", " + s.hashCode() + ", " + Math.floorMod(s.hashCode(), 2) + ...);
 *   for (long v : longs) System.out.println(v + "n, " + Long.hashCode(v) + ", " + Math.floorMod(Long.hashCode(v), 2) + ...);
 * Rows: [key, hashCode, floorMod(h, 2), floorMod(h, 3), floorMod(h, 4)].
 */
const STRINGS: [string, number, number, number, number][] = [
  ['', 0, 0, 0, 0],
  ['a', 97, 1, 1, 1],
  ['Aa', 2112, 0, 0, 0],
  ['BB', 2112, 0, 0, 0], // collides with 'Aa'
  ['polygenelubricants', -2147483648, 0, 1, 0], // Integer.MIN_VALUE
  ['GydZG_', -2147483648, 0, 1, 0],
  ['DESIGNING WORKHOUSES', -2147483648, 0, 1, 0],
  ['한글', 1737764, 0, 2, 0],
  ['emoji 😀', 1164498813, 1, 0, 1], // a surrogate pair counts as two code units
  ['😀', 1772899, 1, 1, 3],
  ['\ud83d', 55357, 1, 1, 1], // a lone high surrogate
  ['\ude00x', 1761912, 0, 0, 0], // a lone low surrogate
  ['user-12345', 440384433, 1, 0, 1],
  ['user-12346', 440384434, 0, 1, 2],
  ['alice@example.com', 2145772861, 1, 1, 1],
  ['The quick brown fox jumps over the lazy dog', -609428141, 1, 1, 3],
  ['42', 1662, 0, 0, 2],
  ['-1', 1444, 0, 1, 0],
]

const LONGS: [bigint, number, number, number, number][] = [
  [0n, 0, 0, 0, 0],
  [1n, 1, 1, 1, 1],
  [-1n, 0, 0, 0, 0],
  [5n, 5, 1, 2, 1],
  [-5n, 4, 0, 1, 0],
  [42n, 42, 0, 0, 2],
  [-42n, 41, 1, 2, 1],
  [2147483647n, 2147483647, 1, 1, 3],
  [2147483648n, -2147483648, 0, 1, 0],
  [-2147483648n, 2147483647, 1, 1, 3],
  [-2147483649n, -2147483648, 0, 1, 0],
  [4294967295n, -1, 1, 2, 3],
  [4294967296n, 1, 1, 1, 1],
  [-4294967296n, -1, 1, 2, 3],
  [12345678901n, -539222985, 1, 0, 3],
  [-12345678901n, -539222986, 0, 2, 2],
  [9007199254740991n, -2097152, 0, 1, 0],
  [-9007199254740991n, -2097151, 1, 2, 1],
  [9223372036854775807n, -2147483648, 0, 1, 0], // Long.MAX_VALUE
  [-9223372036854775808n, -2147483648, 0, 1, 0], // Long.MIN_VALUE
]

const INTS: [number, number, number, number, number][] = [
  [0, 0, 0, 0, 0],
  [1, 1, 1, 1, 1],
  [-1, -1, 1, 2, 3],
  [5, 5, 1, 2, 1],
  [-5, -5, 1, 1, 3],
  [42, 42, 0, 0, 2],
  [-42, -42, 0, 0, 2],
  [1000000007, 1000000007, 1, 2, 3],
  [2147483647, 2147483647, 1, 1, 3], // Integer.MAX_VALUE
  [-2147483648, -2147483648, 0, 1, 0], // Integer.MIN_VALUE
]

const isSafe = (v: bigint) => v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)

describe('JavaHashCodeResolver', () => {
  it("is named 'java-hashcode' and hashes numbers as Java longs by default", () => {
    const r = new JavaHashCodeResolver()
    expect(r.name).toBe('java-hashcode')
    expect(r.numberAs).toBe('long')
  })

  describe('strings: String.hashCode()', () => {
    it.each(STRINGS)('%j: hashCode %i, shards %i / %i / %i of 2 / 3 / 4', (key, hash, m2, m3, m4) => {
      const r = new JavaHashCodeResolver()
      expect(javaStringHashCode(key)).toBe(hash)
      expect(r.hashCode(key)).toBe(hash)
      expect(r.resolve(key, names(2))).toBe(`s${m2}`)
      expect(r.resolve(key, names(3))).toBe(`s${m3}`)
      expect(r.resolve(key, names(4))).toBe(`s${m4}`)
    })

    it('does not depend on numberAs', () => {
      for (const numberAs of ['int', 'long', 'auto'] as const) {
        expect(new JavaHashCodeResolver({ numberAs }).resolve('polygenelubricants', names(3))).toBe('s1')
      }
    })

    it('agrees with the definition s[0]*31^(n-1) + ... + s[n-1] mod 2^32 on random strings', () => {
      let seed = 99
      const random = () => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
        return seed / 2 ** 32
      }
      for (let i = 0; i < 2000; i++) {
        const units = Array.from({ length: Math.floor(random() * 30) }, () => Math.floor(random() * 0x10000))
        const s = String.fromCharCode(...units)
        let sum = 0n
        units.forEach((u, j) => {
          sum += BigInt(u) * 31n ** BigInt(units.length - 1 - j)
        })
        expect(javaStringHashCode(s)).toBe(Number(BigInt.asIntN(32, sum)))
      }
    })

    it("matches Java's `userId.hashCode() % 2 == 0 ? first : second` with two shards", () => {
      const r = new JavaHashCodeResolver()
      for (let i = 0; i < 5000; i++) {
        const userId = `user${i * 7919}@example.com`
        const h = javaStringHashCode(userId)
        const java = h % 2 === 0 ? 's0' : 's1' // Java's % keeps the sign: -1 for odd negatives
        expect(r.resolve(userId, names(2))).toBe(java)
      }
    })

    it('treats "42" and 42 differently, as Java does', () => {
      const r = new JavaHashCodeResolver()
      expect(r.hashCode('42')).toBe(1662)
      expect(r.hashCode(42)).toBe(42)
    })
  })

  describe("numbers as Java longs (numberAs: 'long', the default): Long.hashCode()", () => {
    it.each(LONGS)('%i: hashCode %i, shards %i / %i / %i of 2 / 3 / 4', (key, hash, m2, m3, m4) => {
      const r = new JavaHashCodeResolver({ numberAs: 'long' })
      expect(javaLongHashCode(key)).toBe(hash)
      expect(r.hashCode(key)).toBe(hash)
      expect([2, 3, 4].map((n) => r.resolve(key, names(n)))).toEqual([`s${m2}`, `s${m3}`, `s${m4}`])
      if (isSafe(key)) {
        expect(javaLongHashCode(Number(key))).toBe(hash)
        expect(r.hashCode(Number(key))).toBe(hash)
        expect(new JavaHashCodeResolver().resolve(Number(key), names(3))).toBe(`s${m3}`)
      }
    })

    it('refuses bigints outside the signed 64-bit range and unsafe numbers with a TypeError', () => {
      const r = new JavaHashCodeResolver()
      expect(() => r.resolve(2n ** 63n, names(2))).toThrow(
        'shard key 9223372036854775808n does not fit in a Java long (signed 64 bits)',
      )
      expect(() => r.resolve(-(2n ** 63n) - 1n, names(2))).toThrow(TypeError)
      expect(() => r.resolve(2 ** 53, names(2))).toThrow('is not a safe integer')
      expect(() => r.resolve(1.5, names(2))).toThrow(TypeError)
      expect(() => r.resolve(Number.NaN, names(2))).toThrow(TypeError)
    })
  })

  describe("numbers as Java ints (numberAs: 'int'): Integer.hashCode()", () => {
    it.each(INTS)('%i: hashCode %i, shards %i / %i / %i of 2 / 3 / 4', (key, hash, m2, m3, m4) => {
      const r = new JavaHashCodeResolver({ numberAs: 'int' })
      expect(r.hashCode(key)).toBe(hash)
      expect(r.hashCode(BigInt(key))).toBe(hash) // a bigint key follows numberAs too
      expect([2, 3, 4].map((n) => r.resolve(key, names(n)))).toEqual([`s${m2}`, `s${m3}`, `s${m4}`])
    })

    it('refuses keys outside the int range with a TypeError pointing at numberAs', () => {
      const r = new JavaHashCodeResolver({ numberAs: 'int' })
      expect(() => r.resolve(2 ** 31, names(2))).toThrow(
        "shard key 2147483648 does not fit in a Java int (numberAs: 'int'); use numberAs: 'long' if the Java key is a long",
      )
      expect(() => r.resolve(-(2 ** 31) - 1, names(2))).toThrow(TypeError)
      expect(() => r.resolve(2n ** 31n, names(2))).toThrow('shard key 2147483648n does not fit in a Java int')
    })
  })

  describe("numberAs: 'auto' (Integer when it fits, Long beyond: what Jackson gives an untyped Object)", () => {
    it('uses Integer.hashCode inside the int range and Long.hashCode outside', () => {
      const r = new JavaHashCodeResolver({ numberAs: 'auto' })
      for (const [key, hash] of INTS) {
        expect(r.hashCode(key)).toBe(hash)
        expect(r.hashCode(BigInt(key))).toBe(hash)
      }
      for (const [key, hash] of LONGS) {
        if (key >= -(2n ** 31n) && key < 2n ** 31n) continue
        expect(r.hashCode(key)).toBe(hash)
        if (isSafe(key)) expect(r.hashCode(Number(key))).toBe(hash)
      }
    })
  })

  it('the int/long choice matters only for negative values that fit in an int', () => {
    const asLong = new JavaHashCodeResolver({ numberAs: 'long' })
    const asInt = new JavaHashCodeResolver({ numberAs: 'int' })
    for (let v = 0; v < 1000; v++) expect(asLong.hashCode(v)).toBe(asInt.hashCode(v))
    expect(asLong.hashCode(2 ** 31 - 1)).toBe(asInt.hashCode(2 ** 31 - 1))
    // Long.hashCode(-1L) = 0 but Integer.hashCode(-1) = -1: shard 0 vs shard 2 of 3.
    expect(asLong.resolve(-1, names(3))).toBe('s0')
    expect(asInt.resolve(-1, names(3))).toBe('s2')
    for (let v = -1; v > -1000; v--) expect(asLong.hashCode(v)).toBe(-v - 1) // ~v
  })

  it('rejects an invalid numberAs, non-keys and an empty shard list', () => {
    expect(() => new JavaHashCodeResolver({ numberAs: 'short' as 'int' })).toThrow(
      "invalid numberAs 'short': expected 'long', 'int' or 'auto'",
    )
    const r = new JavaHashCodeResolver()
    expect(() => r.resolve(undefined as unknown as string, names(2))).toThrow(TypeError)
    expect(() => r.resolve('a', [])).toThrow(RangeError)
  })
})
