import { hashKey } from './murmur3.js'
import type { ShardKey, ShardResolver } from './shard-resolver.js'

/**
 * Modulo hashing: `shardNames[murmur3_32(keyBytes(key), 0) % shardNames.length]`.
 *
 * Even spread, no state, allocation-free for string and number keys. Keys are hashed as
 * `keyBytes` describes: `42`, `'42'` and `42n` land on the same shard; a number that is not a
 * safe integer throws a `TypeError`. Adding or removing a shard moves most keys (about
 * `1 - 1/n` of them); use `jump` when shards will be added, or `range` when keys must stay put.
 * Reproducible in any language: MurmurHash3 x86_32, seed 0, over the key's UTF-8 (integers as
 * their decimal string), unsigned, modulo the shard count, indexing the shards in configured order.
 *
 * @example
 * ```ts
 * createRouter({ driver, shards: { s0, s1, s2, s3 }, sharding: { strategy: 'hash' } })
 * new HashResolver().resolve('user-12345', ['s0', 's1', 's2', 's3']) // 's0' (0xa8e286a0 % 4 = 0)
 * ```
 */
export class HashResolver implements ShardResolver {
  readonly name = 'hash'

  resolve(key: ShardKey, shardNames: readonly string[]): string {
    const n = shardNames.length
    if (n === 0) throw new RangeError('hash resolver: no shards configured')
    return shardNames[hashKey(key, 0) % n]!
  }
}
