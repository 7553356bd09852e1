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
