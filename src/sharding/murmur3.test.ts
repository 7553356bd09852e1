import { describe, expect, it } from 'vitest'
import { hashKey, hashKey2, hashPair, keyBytes, murmur3_32 } from './murmur3.js'
import type { ShardKey } from './shard-resolver.js'

const utf8 = (s: string) => new TextEncoder().encode(s)

/**
 * MurmurHash3 x86_32 in the plainest possible form (BigInt arithmetic modulo 2^32, a DataView for
 * the little-endian blocks), written apart from the implementation to cross-check it.
 */
function referenceMurmur3(bytes: Uint8Array, seed: number): number {
  const M = 2n ** 32n
  const mul = (a: bigint, b: bigint) => (a * b) % M
  const rotl = (x: bigint, r: bigint) => ((x << r) | (x >> (32n - r))) % M
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const c1 = 0xcc9e2d51n
  const c2 = 0x1b873593n
  let h = BigInt(seed >>> 0)
  const nblocks = Math.floor(bytes.length / 4)
  for (let i = 0; i < nblocks; i++) {
    let k = BigInt(view.getUint32(i * 4, true))
    k = mul(rotl(mul(k, c1), 15n), c2)
    h = rotl(h ^ k, 13n)
    h = (h * 5n + 0xe6546b64n) % M
  }
  let k = 0n
  const tail = nblocks * 4
  for (let i = bytes.length - 1; i >= tail; i--) k = (k << 8n) | BigInt(bytes[i]!)
  if (bytes.length > tail) h ^= mul(rotl(mul(k, c1), 15n), c2)
  h ^= BigInt(bytes.length)
  h ^= h >> 16n
  h = mul(h, 0x85ebca6bn)
  h ^= h >> 13n
  h = mul(h, 0xc2b2ae35n)
  h ^= h >> 16n
  return Number(h)
}

/** A seeded generator (mulberry32) so the fuzz cases are the same on every run. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

describe('murmur3_32', () => {
  // Generated with Guava 32.1.3: Hashing.murmur3_32_fixed(seed).hashBytes(s.getBytes(UTF_8)).asInt(),
  // printed unsigned. The first rows match the widely published vectors ('' seed 1 = 0x514e28b7,
  // 'Hello, world!' seed 1234 = 0xfaf6cdb3, the fox seed 0 = 0x2e4ff723, the 0x9747b28c ones).
  const vectors: [string, number, number][] = [
    ['', 0x0, 0x0],
    ['', 0x1, 0x514e28b7],
    ['', 0x9747b28c, 0xebb6c228],
    ['', 0x4d2, 0xf2cc00b],
    ['', 0xffffffff, 0x81f16f39],
    ['a', 0x0, 0x3c2569b2],
    ['a', 0x1, 0x588adce8],
    ['a', 0x9747b28c, 0x7fa09ea6],
    ['a', 0x4d2, 0x51ea5fd8],
    ['a', 0xffffffff, 0x2a684527],
    ['ab', 0x0, 0x9bbfd75f],
    ['ab', 0x1, 0xb8079b46],
    ['ab', 0x9747b28c, 0x74875592],
    ['ab', 0x4d2, 0x7879fbda],
    ['ab', 0xffffffff, 0xaf7dbde5],
    ['abc', 0x0, 0xb3dd93fa],
    ['abc', 0x1, 0xaa75e9ff],
    ['abc', 0x9747b28c, 0xc84a62dd],
    ['abc', 0x4d2, 0xe6260426],
    ['abc', 0xffffffff, 0xfc80c2af],
    ['abcd', 0x0, 0x43ed676a],
    ['abcd', 0x1, 0x9bf54592],
    ['abcd', 0x9747b28c, 0xf0478627],
    ['abcd', 0x4d2, 0x353a5c63],
    ['abcd', 0xffffffff, 0x2b7dc558],
    ['aaaa', 0x0, 0x7eeed987],
    ['aaaa', 0x1, 0xc1c90132],
    ['aaaa', 0x9747b28c, 0x5a97808a],
    ['aaaa', 0x4d2, 0x53a42d66],
    ['aaaa', 0xffffffff, 0x93a9b5c0],
    ['Hello, world!', 0x0, 0xc0363e43],
    ['Hello, world!', 0x1, 0xaa5dc85b],
    ['Hello, world!', 0x9747b28c, 0x24884cba],
    ['Hello, world!', 0x4d2, 0xfaf6cdb3],
    ['Hello, world!', 0xffffffff, 0x7d2b7b4],
    ['ππππ', 0x0, 0x2f05b8aa],
    ['ππππ', 0x1, 0xb3fbd7ec],
    ['ππππ', 0x9747b28c, 0x474dc9a8],
    ['ππππ', 0x4d2, 0x9036312f],
    ['ππππ', 0xffffffff, 0x28831eb8],
    ['The quick brown fox jumps over the lazy dog', 0x0, 0x2e4ff723],
    ['The quick brown fox jumps over the lazy dog', 0x1, 0x78e69e27],
    ['The quick brown fox jumps over the lazy dog', 0x9747b28c, 0x2fa826cd],
    ['The quick brown fox jumps over the lazy dog', 0x4d2, 0x2783dc8d],
    ['The quick brown fox jumps over the lazy dog', 0xffffffff, 0x23347cbe],
    ['한글', 0x0, 0x9471d4d2],
    ['한글', 0x1, 0xcf7fbb1f],
    ['한글', 0x9747b28c, 0xb21ca27d],
    ['한글', 0x4d2, 0x1525f21e],
    ['한글', 0xffffffff, 0x663cf053],
    ['emoji 😀', 0x0, 0x75ea4fd],
    ['emoji 😀', 0x1, 0x38cf3664],
    ['emoji 😀', 0x9747b28c, 0xb574963c],
    ['emoji 😀', 0x4d2, 0xee3d2c84],
    ['emoji 😀', 0xffffffff, 0x1e21b9aa],
    ['user-12345', 0x0, 0xa8e286a0],
    ['user-12345', 0x1, 0xbef664c3],
    ['user-12345', 0x9747b28c, 0x49fcb7c],
    ['user-12345', 0x4d2, 0x71941a5c],
    ['user-12345', 0xffffffff, 0x60613bf1],
    ['0123456789abcdef', 0x0, 0x36c7e0df],
    ['0123456789abcdef', 0x1, 0x5394bde2],
    ['0123456789abcdef', 0x9747b28c, 0x2ada2fcc],
    ['0123456789abcdef', 0x4d2, 0x7d14b6bf],
    ['0123456789abcdef', 0xffffffff, 0x3a726886],
  ]

  it.each(vectors)('murmur3_32(utf8(%j), %i) is the published value', (s, seed, expected) => {
    expect(murmur3_32(utf8(s), seed)).toBe(expected)
    expect(murmur3_32(keyBytes(s), seed)).toBe(expected)
  })

  // Raw bytes, seed 0 (Guava as above; the same values as in the widely copied test list).
  const raw: [number[], number][] = [
    [[0x0, 0x0, 0x0, 0x0], 0x2362f9de],
    [[0x0], 0x514e28b7],
    [[0x0, 0x0], 0x30f4c306],
    [[0x0, 0x0, 0x0], 0x85f0b427],
    [[0xff, 0xff, 0xff, 0xff], 0x76293b50],
    [[0x21, 0x43, 0x65, 0x87], 0xf55b516b],
    [[0x21, 0x43, 0x65], 0x7e4a8634],
    [[0x21, 0x43], 0xa0f7b07a],
    [[0x21], 0x72661cf4],
  ]

  it.each(raw)('murmur3_32(%j) is the published value', (bytes, expected) => {
    expect(murmur3_32(Uint8Array.from(bytes))).toBe(expected)
  })

  it("defaults the seed to 0 and treats seeds as 32-bit (0x5082edee for '\\x21\\x43\\x65\\x87' gives 0x2362f9de)", () => {
    expect(murmur3_32(utf8('user-12345'))).toBe(0xa8e286a0)
    expect(murmur3_32(Uint8Array.from([0x21, 0x43, 0x65, 0x87]), 0x5082edee)).toBe(0x2362f9de)
    expect(murmur3_32(utf8('a'), -1)).toBe(murmur3_32(utf8('a'), 0xffffffff))
  })

  it('passes the SMHasher verification test (0xB0F57EE3 for MurmurHash3_x86_32)', () => {
    // Hash {}, {0}, {0, 1}, ..., {0..254} with seed 256 - i, store the hashes little-endian, then
    // hash those 1,024 bytes with seed 0: SMHasher's VerificationTest.
    const key = new Uint8Array(256)
    const hashes = new Uint8Array(1024)
    const view = new DataView(hashes.buffer)
    for (let i = 0; i < 256; i++) {
      key[i] = i
      view.setUint32(i * 4, murmur3_32(key.subarray(0, i), 256 - i), true)
    }
    expect(murmur3_32(hashes, 0)).toBe(0xb0f57ee3)
  })

  it('agrees with a plain BigInt implementation on random bytes of every length 0..80', () => {
    const random = mulberry32(1)
    for (let length = 0; length <= 80; length++) {
      for (let round = 0; round < 5; round++) {
        const bytes = Uint8Array.from({ length }, () => Math.floor(random() * 256))
        const seed = Math.floor(random() * 2 ** 32)
        expect(murmur3_32(bytes, seed)).toBe(referenceMurmur3(bytes, seed))
      }
    }
  })

  it('hashes a view (subarray) by its own bytes only', () => {
    const buffer = utf8('xxuser-12345yy')
    expect(murmur3_32(buffer.subarray(2, 12))).toBe(0xa8e286a0)
  })

  it('returns an unsigned 32-bit integer', () => {
    const random = mulberry32(2)
    for (let i = 0; i < 1000; i++) {
      const h = murmur3_32(utf8(String(random())), i)
      expect(Number.isInteger(h) && h >= 0 && h < 2 ** 32).toBe(true)
    }
  })
})

describe('keyBytes', () => {
  it('is the UTF-8 of a string, exactly as TextEncoder makes it', () => {
    for (const s of [
      '',
      'a',
      'user-12345',
      'é',
      '€',
      '한글',
      'emoji 😀',
      '𝄞',
      '\u0000',
      '\u007f\u0080\u07ff\u0800\uffff',
    ]) {
      expect(keyBytes(s)).toEqual(utf8(s))
    }
  })

  it('turns lone surrogates into U+FFFD, as TextEncoder does', () => {
    for (const s of ['\ud800', '\udc00', 'a\ud83d', '\ude00b', '\udbff\udbff\udfff', '\udfff\ud800']) {
      expect(keyBytes(s)).toEqual(utf8(s))
    }
    expect(keyBytes('\ud800')).toEqual(Uint8Array.from([0xef, 0xbf, 0xbd]))
  })

  it('matches TextEncoder on random strings of random UTF-16 code units', () => {
    const random = mulberry32(3)
    const pick = () => {
      const r = random()
      if (r < 0.4) return Math.floor(random() * 0x80)
      if (r < 0.6) return 0x80 + Math.floor(random() * 0x780)
      if (r < 0.8) return 0xd800 + Math.floor(random() * 0x800) // surrogates, paired or not
      return Math.floor(random() * 0x10000)
    }
    const differ: string[] = [] // compared byte for byte, one expect (3,000 deep toEqual calls took seconds)
    for (let i = 0; i < 3000; i++) {
      const s = String.fromCharCode(...Array.from({ length: Math.floor(random() * 40) }, pick))
      if (Buffer.compare(keyBytes(s), utf8(s)) !== 0) differ.push(s)
    }
    expect(differ).toEqual([])
  })

  it('handles long strings (beyond the internal buffer)', () => {
    for (const s of ['x'.repeat(100_000), '한'.repeat(50_000), '😀'.repeat(30_000)]) {
      // Buffer.equals: a deep toEqual over 100k bytes is slow enough to time out on a busy machine
      expect(Buffer.from(keyBytes(s)).equals(Buffer.from(utf8(s)))).toBe(true)
    }
  })

  it('encodes integers as their decimal string: 42, "42" and 42n give the same bytes', () => {
    expect(keyBytes(42)).toEqual(utf8('42'))
    expect(keyBytes(42n)).toEqual(utf8('42'))
    expect(keyBytes('42')).toEqual(utf8('42'))
    for (const n of [
      0,
      1,
      9,
      10,
      99,
      100,
      -1,
      -10,
      2 ** 31,
      -(2 ** 31),
      2 ** 32,
      1e15,
      Number.MAX_SAFE_INTEGER,
      Number.MIN_SAFE_INTEGER,
    ]) {
      expect(keyBytes(n)).toEqual(utf8(String(n)))
      expect(keyBytes(BigInt(n))).toEqual(utf8(String(n)))
    }
    expect(keyBytes(-0)).toEqual(utf8('0'))
    expect(keyBytes(2n ** 64n)).toEqual(utf8('18446744073709551616'))
    expect(keyBytes(-(2n ** 100n))).toEqual(utf8((-(2n ** 100n)).toString()))
  })

  it('matches String(n) around the 1e9 split, with zero-padded low digits', () => {
    const highs = [0, 1, 9, 10, 123, 999_999, 9_007_198]
    const lows = [0, 1, 7, 9, 10, 100_000_000, 999_999_999, 123_456_789]
    for (const high of highs) {
      for (const low of lows) {
        const n = high * 1e9 + low
        if (!Number.isSafeInteger(n)) continue
        expect(keyBytes(n)).toEqual(utf8(String(n)))
        expect(keyBytes(-n)).toEqual(utf8(String(-n)))
      }
    }
    for (let n = 999_999_990; n <= 1_000_000_010; n++) expect(keyBytes(n)).toEqual(utf8(String(n)))
    for (let n = Number.MAX_SAFE_INTEGER - 2000; n <= Number.MAX_SAFE_INTEGER; n++) {
      expect(keyBytes(n)).toEqual(utf8(String(n)))
    }
  })

  it('matches String(n) for random safe integers', () => {
    const random = mulberry32(4)
    for (let i = 0; i < 5000; i++) {
      const magnitude = 10 ** Math.floor(random() * 16)
      const n = Math.round((random() * 2 - 1) * magnitude * 9)
      expect(keyBytes(n)).toEqual(utf8(String(n)))
    }
  })

  it('rejects numbers that are not safe integers with a TypeError', () => {
    for (const n of [1.5, -0.1, Number.NaN, Infinity, -Infinity, 2 ** 53, -(2 ** 53), 1e300]) {
      expect(() => keyBytes(n)).toThrow(TypeError)
    }
    expect(() => keyBytes(1.5)).toThrow('shard key 1.5 is not a safe integer')
  })

  it('rejects anything that is not a string, number or bigint with a TypeError', () => {
    for (const bad of [undefined, null, {}, [], true, Symbol('k'), () => 1]) {
      expect(() => keyBytes(bad as unknown as string)).toThrow(TypeError)
    }
    expect(() => keyBytes(undefined as unknown as string)).toThrow(
      'invalid shard key (undefined): expected a string, a number or a bigint',
    )
  })

  it('returns a new array each time (not a shared buffer)', () => {
    const a = keyBytes('aaaa')
    const b = keyBytes('bbbb')
    expect(a).toEqual(utf8('aaaa'))
    expect(b).toEqual(utf8('bbbb'))
    expect(a.buffer).not.toBe(b.buffer)
  })
})

describe("hashKey and hashKey2 (the resolvers' allocation-free paths)", () => {
  const check = (key: ShardKey) => {
    const bytes = keyBytes(key)
    expect(hashKey(key, 0)).toBe(murmur3_32(bytes, 0))
    expect(hashKey(key, 0x9747b28c)).toBe(murmur3_32(bytes, 0x9747b28c))
    hashKey2(key, 0, 0x9747b28c)
    expect([hashPair.first, hashPair.second]).toEqual([murmur3_32(bytes, 0), murmur3_32(bytes, 0x9747b28c)])
  }

  it('equal murmur3_32(keyBytes(key), seed) for ASCII, non-ASCII, numbers and bigints', () => {
    const keys: ShardKey[] = [
      '',
      'a',
      'ab',
      'abc',
      'abcd',
      'user-12345',
      '0123456789abcdef',
      'é',
      'aé',
      'abcé',
      'abcdé',
    ]
    keys.push('한글', 'emoji 😀', '\ud800', 'x'.repeat(1000), '한'.repeat(1000), `${'x'.repeat(999)}é`)
    keys.push(0, 42, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 0n, 2n ** 64n, -(2n ** 70n))
    for (const key of keys) check(key)
  })

  it('equal murmur3_32(keyBytes(key), seed) on random strings (ASCII or not, any length)', () => {
    const random = mulberry32(5)
    for (let i = 0; i < 3000; i++) {
      const ascii = random() < 0.5
      const length = Math.floor(random() ** 2 * 400)
      const units = Array.from({ length }, () => Math.floor(random() * (ascii ? 0x80 : 0x10000)))
      check(String.fromCharCode(...units))
    }
  })

  it('validate the key like keyBytes', () => {
    expect(() => hashKey(1.5, 0)).toThrow(TypeError)
    expect(() => hashKey2(undefined as unknown as string, 0, 1)).toThrow(TypeError)
  })
})
