import type { IsolationLevel } from '../router/driver.js'
import type { TransactionOptions } from '../router/router.js'
import { type AsyncMethod, type RoutedMethodDecorator, routedMethod } from './routed-method.js'
import type { RouterSource } from './use-router.js'

/** Options of `@Transactional()`. */
export interface TransactionalOptions {
  /** Run on one replica with `BEGIN READ ONLY`. Default: `true` when called inside a `readOnly` scope, else `false` (the primary). */
  readOnly?: boolean
  /** Isolation level. Default: the server's. */
  isolation?: IsolationLevel
  /** The router to use (or a function returning it, called on every call). Default: the one registered with `useRouter` / by `RoutemateModule`. */
  router?: RouterSource
}

/**
 * Runs every call of the decorated method in `router.transaction(...)`: one connection, committed
 * when the method's promise resolves, rolled back if it rejects or throws.
 *
 * Called inside another transaction, it becomes a savepoint on the same connection (the outermost
 * transaction wins). The method always returns a promise (a synchronous method's value or throw
 * becomes one, hence the type only accepts methods returning a promise); `this` and the arguments
 * are passed through. The router is looked up when the method is called, not when the class is
 * defined; with none, the call rejects with `NoRouterError`. Works with standard (TC39) and legacy
 * (`experimentalDecorators`, NestJS) decorators.
 *
 * @example
 * ```ts
 * class Orders {
 *   @Transactional({ isolation: 'serializable' })
 *   async place(order: Order) {
 *     await router.query('INSERT INTO orders ...', [order.id])
 *     await router.query('UPDATE stock ...', [order.item])
 *   }
 *   @Transactional({ readOnly: true })
 *   async report() { ... }   // one replica, BEGIN READ ONLY, a consistent snapshot
 * }
 * ```
 */
export function Transactional(options: TransactionalOptions = {}): RoutedMethodDecorator<AsyncMethod> {
  const txOptions: TransactionOptions = {}
  if (options.readOnly !== undefined) txOptions.readOnly = options.readOnly
  if (options.isolation !== undefined) txOptions.isolation = options.isolation
  Object.freeze(txOptions)
  return routedMethod('Transactional', options.router, true, (router, call) =>
    router.transaction(call, txOptions),
  )
}
