import type { IncomingMessage, ServerResponse } from 'node:http'
import { beforeHeaders, setOrAppendHeader } from '../http/before-headers.js'
import { checkTokenSupport } from '../http/check-token-support.js'
import type { RoutemateHttpOptions } from '../http/http-options.js'
import { readRequestToken } from '../http/read-request-token.js'
import { runInRequestScope } from '../http/request-scope.js'
import { resolveHttpOptions } from '../http/resolve-http-options.js'
import { responseTokenHeaders } from '../http/response-token-headers.js'
import type { Router } from '../router/router.js'

/**
 * The middleware made by {@link routemate}: an Express 5 (or Connect / plain Node.js) middleware,
 * typed by the Node.js request and response it uses, so it needs no `express` import.
 */
export type RoutemateMiddleware = (
  req: IncomingMessage,
  res: ServerResponse,
  next: (err?: unknown) => void,
) => void

/**
 * Express 5 middleware that runs the rest of the request (every later middleware and the route
 * handler, async ones included) in a routemate scope:
 *
 * - a read-your-writes session resumed from the request's consistency token (header
 *   `x-routemate-token` by default, or a cookie; an empty session without one);
 * - with `auto`, a `readOnly` scope for GET/HEAD/OPTIONS (reads to replicas, writes rejected;
 *   wrap a write in `router.primary(...)`) and the default scope (primary) for the other methods;
 *   a GET carrying a fresh token still runs `readOnly`, the router's read-your-writes logic routes
 *   its reads to a caught-up replica or the primary.
 *
 * When the session wrote during the request, the response carries the new token (header and/or
 * `Set-Cookie`). It is set just before the headers are sent, so it reflects the writes finished by
 * then: a handler that streams (writes the body before its last write) sends the token of its
 * writes before the first byte. Cross-origin browser clients need the header in
 * `Access-Control-Expose-Headers`.
 *
 * Mount it before the routes (`app.use`). Express 5 and its body parsers keep the scope across
 * `await` and `next()`; a third-party middleware that resumes `next()` from a raw stream event
 * without binding it (`AsyncResource`) can lose it: mount routemate after such middleware.
 * Errors of async handlers reach Express's error handler unchanged.
 *
 * Defaults: `token: { header: 'x-routemate-token' }`, `auto: false`. Throws `ConfigError` for
 * invalid options, and (path `token`) when tokens are on but the router was made with
 * `readYourWrites: false`, which would ignore them.
 *
 * @example
 * ```ts
 * import express from 'express'
 * import { routemate } from 'routemate/express'
 * const app = express()
 * app.use(routemate(router, { auto: true }))
 * app.get('/notes/:id', async (req, res) => {             // readOnly: a replica
 *   res.json((await router.query('SELECT * FROM notes WHERE id = $1', [req.params.id])).rows[0])
 * })
 * ```
 */
export function routemate(router: Router, options?: RoutemateHttpOptions): RoutemateMiddleware {
  if (typeof (router as Partial<Router> | undefined)?.withConsistencyToken !== 'function')
    throw new TypeError('routemate(router): expected a router made by createRouter')
  const resolved = resolveHttpOptions(options)
  checkTokenSupport(router, resolved)
  const transport = resolved.header !== undefined || resolved.cookie !== undefined
  return function routemateMiddleware(req, res, next) {
    const token = transport ? readRequestToken(resolved, req.headers) : undefined
    runInRequestScope(router, resolved, req.method, token, (scope) => {
      if (transport) {
        beforeHeaders(res, () => {
          const t = scope.tokenToSend()
          if (t === undefined) return
          for (const [name, value] of responseTokenHeaders(resolved, t)) setOrAppendHeader(res, name, value)
        })
      }
      next()
    })
  }
}
