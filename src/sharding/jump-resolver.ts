import { hashKey2, hashPair } from './murmur3.js'
import type { ShardKey, ShardResolver } from './shard-resolver.js'

/**
 * Jump consistent hash (Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm",
 * 2014): growing from `n` to `n + 1` shards moves only about `1/(n + 1)` of the keys, all of them
 * to the new last shard; no ring, no state, O(ln n) steps.
 *
 * The 64-bit jump key is built from the key's `keyBytes` with MurmurHash3 x86_32 twice:
 * `key64 = murmur3_32(bytes, 0) << 32 | murmur3_32(bytes, 0x9747b28c)` (both unsigned), then the
 * bucket is the paper's `JumpConsistentHash(key64, shardNames.length)` and the shard is
 * `shardNames[bucket]`. Any language can reproduce it from that line; the tests publish vectors.
 *
 * Caveats: shards can only be added or removed at the end of the list (removing a middle shard
 * renumbers the ones after it); `42`, `'42'` and `42n` land on the same shard; a number that is not
 * a safe integer throws a `TypeError`.
 *
 * @example
 * ```ts
 * createRouter({ driver, shards: { s0, s1, s2, s3 }, sharding: { strategy: 'jump' } })
 * new JumpResolver().resolve('user-12345', ['s0', 's1']) // 's1'; with 10 shards still 's1'
 * ```
 */
export class JumpResolver implements ShardResolver {
  readonly name = 'jump'

  resolve(key: ShardKey, shardNames: readonly string[]): string {
    const n = shardNames.length
    if (n === 0) throw new RangeError('jump resolver: no shards configured')
    // Seeds 0 (high half) and 0x9747b28c (low half), inline: see jumpConsistentHash. Also
    // validates the key, even with one shard.
    hashKey2(key, 0, 0x9747b28c)
    return shardNames[jumpConsistentHash(hashPair.first, hashPair.second, n)]!
  }
}

/**
 * The paper's `JumpConsistentHash(key, buckets)` for a 64-bit key given as two 32-bit halves
 * (`key = keyHi * 2 ** 32 + keyLo`, signed or unsigned halves alike); returns a bucket in
 * `[0, buckets)` (`buckets` must be at least 1; with less it returns -1).
 *
 * Exactly the reference C code (same LCG modulo 2^64, same double-precision division), computed
 * in 32-bit integer halves instead of BigInt: a step costs a few nanoseconds and allocates
 * nothing, and there are about `ln(buckets) + 1` steps.
 *
 * @example
 * ```ts
 * jumpConsistentHash(0, 1, 1000) // 549, as JumpConsistentHash(1, 1000) in C or Java
 * ```
 */
export function jumpConsistentHash(keyHi: number, keyLo: number, buckets: number): number {
  let hi = keyHi | 0
  let lo = keyLo | 0
  let b = -1
  let j = 0
  while (j < buckets) {
    b = j
    // key = key * 2862933555777941757 + 1 (mod 2^64), in int32 halves. The multiplier is
    // 0x27bb2ee6_87b0b0fd; lo * 0x87b0b0fd needs its high 32 bits too, so it is done in 16-bit
    // pieces (each product < 2^32). Constants are written inline: module-level ones above 2^31
    // would be heap numbers loaded on every step once bundled.
    const a0 = lo & 0xffff
    const a1 = lo >>> 16
    const p00 = Math.imul(a0, 0xb0fd)
    const p01 = Math.imul(a0, 0x87b0)
    const p10 = Math.imul(a1, 0xb0fd)
    const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff) // < 3 * 2^16
    let carry = (Math.imul(a1, 0x87b0) + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16)) | 0 // high half
    const newLo = (((mid << 16) | (p00 & 0xffff)) + 1) | 0 // the LCG's + 1 (int32 wrap-around) ...
    if (newLo === 0) carry = (carry + 1) | 0 // ... carries into the high half
    hi = (carry + Math.imul(hi, 0x87b0b0fd) + Math.imul(lo, 0x27bb2ee6)) | 0
    lo = newLo
    // j = (b + 1) * (2^31 / ((key >>> 33) + 1)), truncated (always positive: floor).
    j = Math.floor((b + 1) * (2147483648 / ((hi >>> 1) + 1)))
  }
  return b
}
