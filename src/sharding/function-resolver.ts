import { describeKey } from './describe-key.js'
import { ShardCheck } from './shard-check.js'
import type { ShardKey, ShardResolver } from './shard-resolver.js'

/** A custom sharding function: the key and the configured shard names in, a shard name out. */
export type ShardResolveFunction = (key: ShardKey, shardNames: readonly string[]) => string | Promise<string>

/**
 * Turns a plain function into a {@link ShardResolver} (what `sharding: { strategy: fn }` does),
 * checking each answer: a name that is not one of `shardNames` throws an `Error` naming the
 * function, and so does `undefined` / `null` (never a silent default). A promise is awaited and
 * checked the same way. The key's type is checked before the call (string, number or bigint).
 *
 * Default name: the function's own name, else `'custom'`.
 *
 * @example
 * ```ts
 * const byRegion = (key: ShardKey) => (String(key).startsWith('eu-') ? 'eu' : 'us')
 * new FunctionResolver(byRegion).resolve('eu-42', ['eu', 'us']) // 'eu'
 * ```
 */
export class FunctionResolver implements ShardResolver {
  readonly name: string
  readonly #fn: ShardResolveFunction
  readonly #check: ShardCheck

  constructor(fn: ShardResolveFunction, name: string = fn.name || 'custom') {
    if (typeof fn !== 'function') {
      throw new TypeError(`invalid sharding function (${describeKey(fn)}): expected a function`)
    }
    this.#fn = fn
    this.name = name
    this.#check = new ShardCheck(`custom resolver '${name}'`)
  }

  resolve(key: ShardKey, shardNames: readonly string[]): string | Promise<string> {
    const type = typeof key
    if (type !== 'string' && type !== 'number' && type !== 'bigint') {
      throw new TypeError(`invalid shard key (${describeKey(key)}): expected a string, a number or a bigint`)
    }
    return this.#check.answer(key, this.#fn(key, shardNames), shardNames)
  }
}
