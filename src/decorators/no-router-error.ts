import { RoutemateError } from '../errors/routemate-error.js'

/**
 * A routemate decorator (`@Transactional()`, `@ReadOnly()`, `@UsePrimary()`, `@WithShard()`) ran
 * and found no router: none passed as its `router` option, none registered with `useRouter`, and
 * no `RoutemateModule` initialised. Raised when the decorated method is called, not when the class
 * is defined, so the router may be registered after the class is loaded.
 *
 * @example
 * ```ts
 * class Users { @ReadOnly() find() { ... } }
 * new Users().find() // NoRouterError: @ReadOnly() on find(): no router registered: call useRouter(router) or import RoutemateModule
 * useRouter(router)  // now it works
 * ```
 */
export class NoRouterError extends RoutemateError {
  constructor(decorator: string, method: string) {
    super(
      'ROUTEMATE_NO_ROUTER',
      `@${decorator}() on ${method}(): no router registered: call useRouter(router) or import RoutemateModule`,
    )
  }
}
