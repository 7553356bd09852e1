import type { ShardKey } from '../sharding/shard-resolver.js'
import type { ScopeDecoratorOptions } from './read-only.js'
import { type AsyncMethod, type RoutedMethodDecorator, routedMethod } from './routed-method.js'

/**
 * Runs every call of the decorated method in `router.withShard(key, ...)`, with the shard key
 * taken from the call's arguments by `selector` (called with the same `this` and arguments).
 *
 * Every router call inside goes to that shard's cluster; combine it with `@Transactional()` or
 * `@ReadOnly()` written *below* it (the shard scope must be outside the transaction). The method
 * always returns a promise (the type only accepts methods returning one); a selector that throws,
 * a key no shard takes, or a missing router rejects it. Works with standard (TC39) and legacy
 * (`experimentalDecorators`, NestJS) decorators.
 *
 * @example
 * ```ts
 * class Mailboxes {
 *   @WithShard((userId: number) => userId)
 *   @Transactional()
 *   async deliver(userId: number, mail: Mail) { ... }   // one transaction on the user's shard
 * }
 * ```
 */
export function WithShard(
  // biome-ignore lint/suspicious/noExplicitAny: the selector receives the decorated method's arguments, whatever they are
  selector: (...args: any[]) => ShardKey,
  options: ScopeDecoratorOptions = {},
): RoutedMethodDecorator<AsyncMethod> {
  if (typeof selector !== 'function') {
    throw new TypeError(
      `@WithShard(selector): expected a function returning the shard key, got ${String(selector)}`,
    )
  }
  return routedMethod('WithShard', options.router, true, (router, call, thisArg, args) =>
    router.withShard(selector.apply(thisArg, args), call),
  )
}
