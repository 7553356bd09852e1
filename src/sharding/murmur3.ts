import type { ShardKey } from './shard-resolver.js'

/**
 * MurmurHash3, x86 32-bit variant (Austin Appleby's `MurmurHash3_x86_32`), over bytes; returns
 * an unsigned 32-bit integer. Byte-for-byte the reference algorithm (little-endian blocks), so it
 * agrees with Guava's `Hashing.murmur3_32_fixed(seed).hashBytes(bytes).asInt() >>> 0`, Python's
 * `mmh3.hash(bytes, seed, signed=False)` and the SMHasher verification value `0xB0F57EE3`.
 *
 * Default seed: 0. Allocates nothing.
 *
 * @example
 * ```ts
 * murmur3_32(new TextEncoder().encode('Hello, world!'), 1234) // 0xfaf6cdb3
 * murmur3_32(keyBytes('user-12345')) // 0xa8e286a0, what the hash strategy uses
 * ```
 */
export function murmur3_32(bytes: Uint8Array, seed = 0): number {
  return murmur3Range(bytes, bytes.length, seed)
}

/**
 * The bytes the hashing strategies (`hash`, `jump`) hash for a key; a new array on each call.
 *
 * - a string: its UTF-8 encoding, as `TextEncoder` makes it (a lone surrogate becomes U+FFFD);
 * - a number: must be a safe integer (`Number.isSafeInteger`), else a `TypeError` (1.5, NaN,
 *   2 ** 60 are ambiguous: 2 ** 60 + 1 === 2 ** 60 in floating point). Encoded as the UTF-8 of its
 *   decimal string, so `42`, `'42'` and `42n` give the same bytes and land on the same shard, and
 *   `-0` is `'0'`;
 * - a bigint: the UTF-8 of its decimal string (any size);
 * - anything else: a `TypeError` (a missing key is an error, never a silent default).
 *
 * Other languages reproduce the mapping by hashing the same bytes: the UTF-8 of the id's decimal
 * string for integer ids, the UTF-8 of the string otherwise.
 *
 * @example
 * ```ts
 * keyBytes(42) // Uint8Array [0x34, 0x32], the same as keyBytes('42') and keyBytes(42n)
 * keyBytes('한') // Uint8Array [0xed, 0x95, 0x9c]
 * ```
 */
export function keyBytes(key: ShardKey): Uint8Array {
  const length = encodeKey(key) // first: it may replace the buffer with a bigger one
  return scratch.slice(0, length)
}

/** Buffer the hot path encodes keys into (no allocation per resolve); grown on demand. */
let scratch = new Uint8Array(256)

/**
 * Writes the bytes of {@link keyBytes} into the shared buffer and returns how many; validates the
 * key. Hash them at once: the next call overwrites them.
 */
function encodeKey(key: ShardKey): number {
  if (typeof key === 'string') return encodeString(key)
  if (typeof key === 'number') {
    if (!Number.isSafeInteger(key)) {
      throw new TypeError(
        `shard key ${key} is not a safe integer: number keys must be integers between ` +
          '-(2 ** 53 - 1) and 2 ** 53 - 1; pass larger ids as a bigint or a string',
      )
    }
    return encodeSafeInteger(key)
  }
  if (typeof key === 'bigint') return encodeString(key.toString())
  throw new TypeError(
    `invalid shard key (${key === null ? 'null' : typeof key}): expected a string, a number or a bigint`,
  )
}

/** UTF-8, WHATWG style (lone surrogates become U+FFFD, as with `TextEncoder`). */
function encodeString(s: string): number {
  const n = s.length
  if (scratch.length < n * 3) scratch = new Uint8Array(Math.max(n * 3, scratch.length * 2))
  const b = scratch
  let p = 0
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i)
    if (c < 0x80) {
      b[p++] = c
    } else if (c < 0x800) {
      b[p++] = 0xc0 | (c >> 6)
      b[p++] = 0x80 | (c & 0x3f)
    } else {
      if (c >= 0xd800 && c <= 0xdfff) {
        const d = c <= 0xdbff && i + 1 < n ? s.charCodeAt(i + 1) : 0
        if (d >= 0xdc00 && d <= 0xdfff) {
          const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00)
          b[p++] = 0xf0 | (cp >> 18)
          b[p++] = 0x80 | ((cp >> 12) & 0x3f)
          b[p++] = 0x80 | ((cp >> 6) & 0x3f)
          b[p++] = 0x80 | (cp & 0x3f)
          i++
          continue
        }
        c = 0xfffd
      }
      b[p++] = 0xe0 | (c >> 12)
      b[p++] = 0x80 | ((c >> 6) & 0x3f)
      b[p++] = 0x80 | (c & 0x3f)
    }
  }
  return p
}

/** The decimal digits of a safe integer, as ASCII (what `String(v)` gives, without the string). */
function encodeSafeInteger(v: number): number {
  const b = scratch // 17 bytes at most ('-' and 16 digits); the buffer is never smaller than 256
  let p = 0
  if (v < 0) {
    b[p++] = 0x2d // '-'
    v = -v
  }
  if (v < 1e9) return writeDigits(b, p, v, 1)
  // Split in two int32-sized halves (a double % is slow): v = high * 1e9 + low, 0 <= low < 1e9.
  let high = Math.floor(v / 1e9)
  let low = v - high * 1e9 // exact; the division may have rounded high up or down by one
  if (low < 0) {
    high--
    low += 1e9
  } else if (low >= 1e9) {
    high++
    low -= 1e9
  }
  return writeDigits(b, writeDigits(b, p, high, 1), low, 9)
}

/** Writes `x` (an integer in [0, 1e9)) in decimal at `b[p]`, zero-padded to `width`; returns the end. */
function writeDigits(b: Uint8Array, p: number, x: number, width: number): number {
  let digits = 1
  for (let t = x; t >= 10; t = (t / 10) | 0) digits++
  if (digits < width) digits = width
  const end = p + digits
  for (let i = end - 1; i >= p; i--) {
    const q = (x / 10) | 0
    b[i] = 0x30 + x - q * 10
    x = q
  }
  return end
}

/**
 * `murmur3_32(keyBytes(key), seed)` without allocating: an all-ASCII string (the usual id) is
 * hashed straight from its UTF-16 code units, anything else through the shared buffer.
 * @internal
 */
export function hashKey(key: ShardKey, seed: number): number {
  if (typeof key === 'string') {
    const h = murmurAscii(key, seed)
    if (h >= 0) return h
  }
  const length = encodeKey(key) // first: it may replace the buffer with a bigger one
  return murmur3Range(scratch, length, seed)
}

/**
 * Where {@link hashKey2} leaves its two hashes (no allocation per call).
 * @internal
 */
export const hashPair = { first: 0, second: 0 }

/**
 * `murmur3_32(keyBytes(key), seedA)` and `murmur3_32(keyBytes(key), seedB)` in one pass, left in
 * {@link hashPair} (`first`, `second`); an all-ASCII string is read straight from its code units.
 * @internal
 */
export function hashKey2(key: ShardKey, seedA: number, seedB: number): void {
  if (typeof key === 'string' && murmurAscii2(key, seedA, seedB)) return
  const length = encodeKey(key)
  const b = scratch
  let h1 = seedA | 0
  let h2 = seedB | 0
  const blocksEnd = length & ~3
  let i = 0
  for (; i < blocksEnd; i += 4) {
    const k = b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)
    h1 = mixBlock(h1, k)
    h2 = mixBlock(h2, k)
  }
  const rest = length & 3
  if (rest > 0) {
    const k = b[i]! | (rest > 1 ? b[i + 1]! << 8 : 0) | (rest > 2 ? b[i + 2]! << 16 : 0)
    h1 = mixTail(h1, k)
    h2 = mixTail(h2, k)
  }
  hashPair.first = finish(h1, length)
  hashPair.second = finish(h2, length)
}

/** {@link murmur3_32} over the first `length` bytes of `b`. */
function murmur3Range(b: Uint8Array, length: number, seed: number): number {
  let h = seed | 0
  const blocksEnd = length & ~3
  let i = 0
  for (; i < blocksEnd; i += 4) {
    h = mixBlock(h, b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24))
  }
  const rest = length & 3
  if (rest > 0) h = mixTail(h, b[i]! | (rest > 1 ? b[i + 1]! << 8 : 0) | (rest > 2 ? b[i + 2]! << 16 : 0))
  return finish(h, length)
}

/**
 * {@link murmur3_32} of an all-ASCII string's bytes (its code units), or -1 as soon as a code unit
 * is not ASCII (the caller then encodes it as UTF-8).
 */
function murmurAscii(s: string, seed: number): number {
  const length = s.length
  let h = seed | 0
  const blocksEnd = length & ~3
  let i = 0
  for (; i < blocksEnd; i += 4) {
    const c0 = s.charCodeAt(i)
    const c1 = s.charCodeAt(i + 1)
    const c2 = s.charCodeAt(i + 2)
    const c3 = s.charCodeAt(i + 3)
    if ((c0 | c1 | c2 | c3) > 0x7f) return -1
    h = mixBlock(h, c0 | (c1 << 8) | (c2 << 16) | (c3 << 24))
  }
  const rest = length & 3
  if (rest > 0) {
    const c0 = s.charCodeAt(i)
    const c1 = rest > 1 ? s.charCodeAt(i + 1) : 0
    const c2 = rest > 2 ? s.charCodeAt(i + 2) : 0
    if ((c0 | c1 | c2) > 0x7f) return -1
    h = mixTail(h, c0 | (c1 << 8) | (c2 << 16))
  }
  return finish(h, length)
}

/** {@link murmurAscii} with two seeds in one pass, into {@link hashPair}; false if not ASCII. */
function murmurAscii2(s: string, seedA: number, seedB: number): boolean {
  const length = s.length
  let h1 = seedA | 0
  let h2 = seedB | 0
  const blocksEnd = length & ~3
  let i = 0
  for (; i < blocksEnd; i += 4) {
    const c0 = s.charCodeAt(i)
    const c1 = s.charCodeAt(i + 1)
    const c2 = s.charCodeAt(i + 2)
    const c3 = s.charCodeAt(i + 3)
    if ((c0 | c1 | c2 | c3) > 0x7f) return false
    const k = c0 | (c1 << 8) | (c2 << 16) | (c3 << 24)
    h1 = mixBlock(h1, k)
    h2 = mixBlock(h2, k)
  }
  const rest = length & 3
  if (rest > 0) {
    const c0 = s.charCodeAt(i)
    const c1 = rest > 1 ? s.charCodeAt(i + 1) : 0
    const c2 = rest > 2 ? s.charCodeAt(i + 2) : 0
    if ((c0 | c1 | c2) > 0x7f) return false
    const k = c0 | (c1 << 8) | (c2 << 16)
    h1 = mixTail(h1, k)
    h2 = mixTail(h2, k)
  }
  hashPair.first = finish(h1, length)
  hashPair.second = finish(h2, length)
  return true
}

// The constants below are written inline, not as module-level consts: once bundled those become
// `var`s, and values above 2^31 would be heap numbers loaded on every block.

/** One 4-byte block (little-endian `k`) into the state. */
function mixBlock(h: number, k: number): number {
  k = Math.imul(k, 0xcc9e2d51)
  k = (k << 15) | (k >>> 17)
  k = Math.imul(k, 0x1b873593)
  h ^= k
  h = (h << 13) | (h >>> 19)
  return (Math.imul(h, 5) + 0xe6546b64) | 0
}

/** The last 1-3 bytes (little-endian `k`) into the state. */
function mixTail(h: number, k: number): number {
  k = Math.imul(k, 0xcc9e2d51)
  k = (k << 15) | (k >>> 17)
  k = Math.imul(k, 0x1b873593)
  return h ^ k
}

/** Length and the final avalanche (fmix32); unsigned result. */
function finish(h: number, length: number): number {
  h ^= length
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}
