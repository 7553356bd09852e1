import { type AnyMethod, type RoutedMethodDecorator, routedMethod } from './routed-method.js'
import type { RouterSource } from './use-router.js'

/** Options of `@ReadOnly()` and `@UsePrimary()`. */
export interface ScopeDecoratorOptions {
  /** The router to use (or a function returning it, called on every call). Default: the one registered with `useRouter` / by `RoutemateModule`. */
  router?: RouterSource
}

/**
 * Runs every call of the decorated method in `router.readOnly(...)`: its queries go to a usable
 * replica, and a write inside throws `ReadOnlyViolationError`.
 *
 * The method's return value is returned as is (sync stays sync; a promise's work stays in the
 * scope, which follows the async call chain). Inside a transaction it changes nothing: statements
 * stay on the transaction's connection. `this` and the arguments are passed through. The router is
 * looked up on each call; with none, the call throws `NoRouterError`. Works with standard (TC39)
 * and legacy (`experimentalDecorators`, NestJS) decorators.
 *
 * @example
 * ```ts
 * class Users {
 *   @ReadOnly()
 *   async findById(id: number) {
 *     return (await router.query('SELECT * FROM users WHERE id = $1', [id])).rows[0]   // a replica
 *   }
 * }
 * ```
 */
export function ReadOnly(options: ScopeDecoratorOptions = {}): RoutedMethodDecorator<AnyMethod> {
  return routedMethod('ReadOnly', options.router, false, (router, call) => router.readOnly(call))
}
