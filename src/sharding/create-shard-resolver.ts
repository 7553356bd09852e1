import { describeKey } from './describe-key.js'
import { FunctionResolver, type ShardResolveFunction } from './function-resolver.js'
import { HashResolver } from './hash-resolver.js'
import { JavaHashCodeResolver, type JavaNumberType } from './java-hashcode-resolver.js'
import { JumpResolver } from './jump-resolver.js'
import { RangeResolver, type ShardRange } from './range-resolver.js'
import type { ShardingStrategyName, ShardResolver } from './shard-resolver.js'

/** Options of {@link createShardResolver}; each applies to one strategy only. */
export interface ShardResolverOptions {
  /** For `'range'` (required there): the ranges, see {@link RangeResolver}. */
  ranges?: readonly ShardRange[]
  /** For `'java-hashcode'`: the Java type of number keys. Default: `'long'`; see {@link JavaHashCodeResolver}. */
  numberAs?: JavaNumberType
}

const BUILT_INS: Readonly<Record<ShardingStrategyName, (options: ShardResolverOptions) => ShardResolver>> =
  Object.freeze({
    hash: () => new HashResolver(),
    jump: () => new JumpResolver(),
    range: (options) => {
      if (options.ranges === undefined) {
        throw new TypeError("sharding strategy 'range' needs the ranges option: [{ shard, from?, to? }, ...]")
      }
      return new RangeResolver(options.ranges)
    },
    'java-hashcode': (options) =>
      new JavaHashCodeResolver(options.numberAs === undefined ? {} : { numberAs: options.numberAs }),
  })

/** Which strategy each option belongs to. */
const OPTION_OWNERS: Readonly<Record<keyof ShardResolverOptions, ShardingStrategyName>> = Object.freeze({
  ranges: 'range',
  numberAs: 'java-hashcode',
})

/**
 * The names of the built-in sharding strategies, in documentation order.
 *
 * @example
 * ```ts
 * SHARDING_STRATEGIES.includes(options.sharding.strategy) // a known name?
 * ```
 */
export const SHARDING_STRATEGIES: readonly ShardingStrategyName[] = Object.freeze(
  Object.keys(BUILT_INS) as ShardingStrategyName[],
)

/**
 * Whether `x` looks like a {@link ShardResolver}: an object with a `resolve` function. Checks the
 * shape only.
 *
 * @example
 * ```ts
 * isShardResolver(new HashResolver()) // true
 * isShardResolver('hash') // false
 * ```
 */
export function isShardResolver(x: unknown): x is ShardResolver {
  return typeof x === 'object' && x !== null && typeof (x as { resolve?: unknown }).resolve === 'function'
}

/**
 * Turns the `sharding.strategy` option (and its options) into a {@link ShardResolver}; the router
 * makes one per router.
 *
 * - a built-in name: a new instance (`'range'` requires `options.ranges`; `'java-hashcode'` takes
 *   `options.numberAs`, default `'long'`);
 * - a `ShardResolver` object: returned as is;
 * - a function `(key, shardNames) => name | Promise<name>`: wrapped in a {@link FunctionResolver},
 *   which checks each answer is a configured shard.
 *
 * Throws a `TypeError` listing the valid names for an unknown name or any other value, and for an
 * option given to a strategy it does not apply to (`ranges` with `'hash'`...), so a misplaced option
 * is not silently ignored.
 *
 * @example
 * ```ts
 * createShardResolver('jump')
 * createShardResolver('range', { ranges: [{ shard: 's0', to: 1000 }, { shard: 's1', from: 1000 }] })
 * createShardResolver('java-hashcode', { numberAs: 'int' })
 * createShardResolver((key) => (String(key).startsWith('eu-') ? 'eu' : 'us'))
 * ```
 */
export function createShardResolver(
  spec: ShardingStrategyName | ShardResolver | ShardResolveFunction,
  options: ShardResolverOptions = {},
): ShardResolver {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`invalid sharding options (${describeKey(options)}): expected an object`)
  }
  const strategy = typeof spec === 'string' ? spec : undefined
  for (const option of Object.keys(OPTION_OWNERS) as (keyof ShardResolverOptions)[]) {
    const owner = OPTION_OWNERS[option]
    if (options[option] !== undefined && strategy !== owner) {
      throw new TypeError(
        `sharding option '${option}' applies only to strategy '${owner}', not to ${
          strategy === undefined ? 'a custom resolver' : `'${strategy}'`
        }`,
      )
    }
  }
  if (typeof spec === 'string') {
    if (Object.hasOwn(BUILT_INS, spec)) return BUILT_INS[spec](options)
    throw new TypeError(`unknown sharding strategy '${spec}': expected one of ${listNames()}`)
  }
  if (typeof spec === 'function') return new FunctionResolver(spec)
  if (isShardResolver(spec)) return spec
  throw new TypeError(
    `invalid sharding strategy (${describeKey(spec)}): expected one of ${listNames()}, ` +
      'an object with a resolve function, or a function (key, shardNames) => shard name',
  )
}

function listNames(): string {
  return SHARDING_STRATEGIES.map((name) => `'${name}'`).join(', ')
}
