import { AsyncResource } from 'node:async_hooks'
import type { Router } from '../router/router.js'
import type { ResolvedHttpOptions } from './resolve-http-options.js'

/** One request's routing scope, as the HTTP integrations hold it. */
export interface RequestScope {
  /** Whether the request runs in a `readOnly` scope (auto mode and a read method). */
  readonly readOnly: boolean
  /**
   * The token to send back: the session's token if the session wrote since the request began,
   * else `undefined`. Reflects the writes done (awaited) by the time it is called.
   */
  tokenToSend(): string | undefined
  /**
   * Runs `fn` back inside the request's scope, for framework callbacks that a stream or event
   * emitter resumes outside it (a body parser's `end` event, for instance).
   */
  run<R>(fn: () => R): R
}

/**
 * Runs `fn` in a request's scope: a read-your-writes session resumed from `token` (an empty one
 * without a token), `readOnly` when auto mode is on and `method` is a read method, else the
 * default scope (the primary). `fn` receives the {@link RequestScope}; everything it starts
 * (synchronously or through promises) inherits the scope.
 *
 * Why auto mode ignores the token: a read request that carries the token of a recent write still
 * runs `readOnly`, because the router's read-your-writes logic already routes its reads correctly
 * (`position` mode: a replica that has replayed the write, else the primary; `window` mode: the
 * primary during `windowMs`), read by read, keeping the `ReadOnlyViolationError` guard. Sending
 * it to the primary scope instead would route every later request of a client holding a token
 * (a cookie lives on) to the primary.
 *
 * @example
 * ```ts
 * runInRequestScope(router, options, req.method, readRequestToken(options, req.headers), (scope) => next())
 * ```
 */
export function runInRequestScope<R>(
  router: Router,
  options: ResolvedHttpOptions,
  method: string | undefined,
  token: string | undefined,
  fn: (scope: RequestScope) => R,
): R {
  const readOnly = options.readMethods?.has(method?.toUpperCase() ?? '') === true
  return router.withConsistencyToken(token, () => {
    const start = () => {
      const resource = new AsyncResource('routemate.request')
      const run = <T>(f: () => T): T => resource.runInAsyncScope(f)
      const initial = router.consistencyToken()
      const scope: RequestScope = {
        readOnly,
        tokenToSend() {
          const now = run(() => router.consistencyToken())
          return now !== undefined && now !== initial ? now : undefined
        },
        run,
      }
      return fn(scope)
    }
    return readOnly ? router.readOnly(start) : start()
  })
}
