import { ConfigError } from '../errors/config-error.js'
import type { Router } from '../router/router.js'
import type { ResolvedHttpOptions } from './resolve-http-options.js'

/**
 * Throws `ConfigError` (path `token`) when the HTTP options carry consistency tokens (a header or
 * a cookie: the default) but the router cannot honour them (`readYourWrites: false`): the promise
 * "the next request that sends the token back reads its own writes" would silently not hold.
 *
 * @example
 * ```ts
 * checkTokenSupport(router, resolveHttpOptions(options)) // at setup, before the first request
 * ```
 */
export function checkTokenSupport(router: Router, options: ResolvedHttpOptions): void {
  if (options.header === undefined && options.cookie === undefined) return
  if ((router as Partial<Router>).readYourWritesMode !== 'off') return
  throw new ConfigError(
    'token',
    'the router was created with readYourWrites: false, so a consistency token would route nothing ' +
      '(a read after a write could be stale, on any instance); remove readYourWrites: false (the ' +
      'default, position mode, honours tokens) or pass token: false (no token is read or written)',
  )
}
