/**
 * `routemate/sharding`: the shard resolvers behind `sharding.strategy` and their hash functions,
 * to place keys outside a router (a migration script, another service) or to build a resolver of
 * your own. Another language reproduces a placement with the same functions: `murmur3_32` over
 * `keyBytes(key)` (`'hash'`), `jumpConsistentHash` (`'jump'`), `javaStringHashCode` /
 * `javaLongHashCode` (`'java-hashcode'`); test vectors are in `src/sharding/*.test.ts`.
 *
 * @example
 * ```ts
 * import { HashResolver, keyBytes, murmur3_32 } from 'routemate/sharding'
 * const shard = new HashResolver().resolve('user-42', ['s0', 's1']) // the shard of router.withShard('user-42', ...)
 * const h = murmur3_32(keyBytes('user-42'))                          // its hash: h % 2 picks the shard
 * ```
 *
 * @module
 */
export {
  createShardResolver,
  isShardResolver,
  SHARDING_STRATEGIES,
  type ShardResolverOptions,
} from './create-shard-resolver.js'
export { FunctionResolver, type ShardResolveFunction } from './function-resolver.js'
export { HashResolver } from './hash-resolver.js'
export {
  JavaHashCodeResolver,
  type JavaHashCodeResolverOptions,
  type JavaNumberType,
  javaLongHashCode,
  javaStringHashCode,
} from './java-hashcode-resolver.js'
export { JumpResolver, jumpConsistentHash } from './jump-resolver.js'
export { LookupResolver, type ShardLookup } from './lookup-resolver.js'
export { keyBytes, murmur3_32 } from './murmur3.js'
export { type RangeBound, RangeResolver, type ShardRange } from './range-resolver.js'
export type { ShardingStrategyName, ShardKey, ShardResolver } from './shard-resolver.js'
