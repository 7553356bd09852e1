import type { FastifyPluginCallback, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { checkTokenSupport } from '../http/check-token-support.js'
import type { RoutemateHttpOptions } from '../http/http-options.js'
import { readRequestToken } from '../http/read-request-token.js'
import { type RequestScope, runInRequestScope } from '../http/request-scope.js'
import { resolveHttpOptions } from '../http/resolve-http-options.js'
import { responseTokenHeaders } from '../http/response-token-headers.js'
import type { Router } from '../router/router.js'

/** Options of {@link routematePlugin}: the router, then the HTTP options. */
export interface RoutematePluginOptions extends RoutemateHttpOptions {
  /** The router whose scope every request runs in. Required. */
  router: Router
}

/**
 * The plugin itself (before `fastify-plugin` wraps it): three hooks.
 * - `onRequest` opens the request's scope (session, and `readOnly` in auto mode) and calls `done`
 *   inside it, so the rest of the lifecycle inherits it through the callback chain.
 * - `preValidation` re-enters it: Fastify parses a request body from the request stream's events,
 *   which fire outside the scope, and resumes the lifecycle (preValidation, preHandler, handler)
 *   from there.
 * - `onSend` sets the token header / cookie when the session wrote.
 */
const plugin: FastifyPluginCallback<RoutematePluginOptions> = (fastify, options, done) => {
  const { router, ...rest } = options ?? ({} as RoutematePluginOptions)
  if (typeof (router as Partial<Router> | undefined)?.withConsistencyToken !== 'function') {
    done(new TypeError('routemate plugin: expected { router } with a router made by createRouter'))
    return
  }
  let resolved: ReturnType<typeof resolveHttpOptions>
  try {
    resolved = resolveHttpOptions(rest)
    checkTokenSupport(router, resolved)
  } catch (err) {
    done(err as Error)
    return
  }
  const transport = resolved.header !== undefined || resolved.cookie !== undefined
  const scopes = new WeakMap<FastifyRequest, RequestScope>()

  fastify.addHook('onRequest', (request, _reply, next) => {
    const token = transport ? readRequestToken(resolved, request.headers) : undefined
    runInRequestScope(router, resolved, request.method, token, (scope) => {
      scopes.set(request, scope)
      next()
    })
  })

  fastify.addHook('preValidation', (request, _reply, next) => {
    const scope = scopes.get(request)
    if (scope === undefined) next()
    else scope.run(() => next())
  })

  if (transport) {
    fastify.addHook('onSend', (request, reply, payload, next) => {
      const t = scopes.get(request)?.tokenToSend()
      if (t !== undefined) {
        // reply.header appends to set-cookie rather than replacing it.
        for (const [name, value] of responseTokenHeaders(resolved, t)) reply.header(name, value)
      }
      next(null, payload)
    })
  }
  done()
}

/**
 * Fastify 5 plugin that runs each request (its hooks from `preParsing` on and its handler, async
 * ones included) in a routemate scope:
 *
 * - a read-your-writes session resumed from the request's consistency token (header
 *   `x-routemate-token` by default, or a cookie; an empty session without one);
 * - with `auto`, a `readOnly` scope for GET/HEAD/OPTIONS (reads to replicas, writes rejected;
 *   wrap a write in `router.primary(...)`) and the default scope (primary) for the other methods;
 *   a GET carrying a fresh token still runs `readOnly`, the router's read-your-writes logic routes
 *   its reads to a caught-up replica or the primary.
 *
 * When the session wrote, the response carries the new token (set in `onSend`, so it reflects the
 * writes finished before the reply was sent; a hijacked reply gets none). Wrapped with
 * `fastify-plugin`, so its hooks apply to every route of the instance it is registered on:
 * register it before the routes and before other `onRequest` / `preValidation` hooks that query.
 *
 * Defaults: `token: { header: 'x-routemate-token' }`, `auto: false`. Registration fails with
 * `ConfigError` for invalid options, and (path `token`) when tokens are on but the router was made
 * with `readYourWrites: false`, which would ignore them.
 *
 * @example
 * ```ts
 * import Fastify from 'fastify'
 * import { routematePlugin } from 'routemate/fastify'
 * const app = Fastify()
 * await app.register(routematePlugin, { router, auto: true })
 * app.get('/notes/:id', async (req) => (await router.query('SELECT ...')).rows[0]) // a replica
 * ```
 */
export const routematePlugin: FastifyPluginCallback<RoutematePluginOptions> = fp(plugin, {
  fastify: '5.x',
  name: 'routemate',
})
