import { ConfigError } from '../errors/config-error.js'
import { createShardResolver } from '../sharding/create-shard-resolver.js'
import { LookupResolver, type ShardLookup } from '../sharding/lookup-resolver.js'
import type { ShardResolver } from '../sharding/shard-resolver.js'
import { checkKeys, checkObject, describe } from './config-checks.js'
import type { ResolvedSharding } from './resolved-config.js'

const SHARDING_KEYS = ['strategy', 'ranges', 'numberAs', 'lookup', 'defaultShard']

/**
 * Validates the `sharding` option against the configured shard names: builds the resolver
 * (`hash`, `jump`, `range`, `java-hashcode`, `lookup`, a function or a `ShardResolver`), runs its
 * startup check, and checks `defaultShard`. Errors name `sharding.*` paths.
 */
export function resolveSharding(value: unknown, shardNames: readonly string[]): ResolvedSharding {
  if (value === undefined) {
    throw new ConfigError(
      'sharding',
      "required with shards; e.g. { strategy: 'hash' } ('hash', 'jump', 'range', 'java-hashcode', 'lookup', a function or a ShardResolver)",
    )
  }
  const o = checkObject(value, 'sharding', 'an object { strategy, ... }')
  checkKeys(o, 'sharding', SHARDING_KEYS)
  if (o.strategy === undefined) throw new ConfigError('sharding.strategy', 'required')
  let resolver: ShardResolver
  try {
    if (o.strategy === 'lookup') {
      if (o.lookup === undefined) {
        throw new TypeError(
          "strategy 'lookup' needs the lookup option: a Map, an object or a function key => shard",
        )
      }
      resolver = new LookupResolver(o.lookup as ShardLookup)
    } else {
      if (o.lookup !== undefined) throw new TypeError("the lookup option applies only to strategy 'lookup'")
      const options: Record<string, unknown> = {}
      if (o.ranges !== undefined) options.ranges = o.ranges
      if (o.numberAs !== undefined) options.numberAs = o.numberAs
      resolver = createShardResolver(o.strategy as Parameters<typeof createShardResolver>[0], options)
    }
    resolver.validate?.(shardNames)
  } catch (cause) {
    if (cause instanceof ConfigError) throw cause
    const message = cause instanceof Error ? cause.message : String(cause)
    throw new ConfigError('sharding.strategy', message, { cause })
  }
  let defaultShard: string | undefined
  if (o.defaultShard !== undefined) {
    if (typeof o.defaultShard !== 'string' || !shardNames.includes(o.defaultShard)) {
      throw new ConfigError(
        'sharding.defaultShard',
        `expected one of the shard names (${shardNames.join(', ')}), got ${describe(o.defaultShard)}`,
      )
    }
    defaultShard = o.defaultShard
  }
  return Object.freeze({ resolver, shardNames, defaultShard })
}
