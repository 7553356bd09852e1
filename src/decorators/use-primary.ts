import type { ScopeDecoratorOptions } from './read-only.js'
import { type AnyMethod, type RoutedMethodDecorator, routedMethod } from './routed-method.js'

/**
 * Runs every call of the decorated method in `router.primary(...)`: everything inside, reads
 * included, goes to the primary (e.g. a read that must see a write made just before).
 *
 * The method's return value is returned as is. Inside a transaction it changes nothing:
 * statements stay on the transaction's connection. `this` and the arguments are passed through.
 * The router is looked up on each call; with none, the call throws `NoRouterError`. Works with
 * standard (TC39) and legacy (`experimentalDecorators`, NestJS) decorators.
 *
 * @example
 * ```ts
 * class Accounts {
 *   @UsePrimary()
 *   async balanceAfterPayment(id: number) {
 *     return (await router.query('SELECT balance FROM accounts WHERE id = $1', [id])).rows[0]
 *   }
 * }
 * ```
 */
export function UsePrimary(options: ScopeDecoratorOptions = {}): RoutedMethodDecorator<AnyMethod> {
  return routedMethod('UsePrimary', options.router, false, (router, call) => router.primary(call))
}
