/**
 * `routemate/fastify`: Fastify 5 plugin that runs each request in a routemate scope and session
 * (read-your-writes token in a header or cookie; optional automatic read/write role).
 *
 * @example
 * ```ts
 * import { routematePlugin } from 'routemate/fastify'
 * await app.register(routematePlugin, { router, auto: true })
 * ```
 *
 * @module
 */
export type {
  AutoRoleOptions,
  RoutemateHttpOptions,
  TokenCookieOptions,
  TokenTransportOptions,
} from '../http/http-options.js'
export { DEFAULT_TOKEN_HEADER } from '../http/resolve-http-options.js'
export { type RoutematePluginOptions, routematePlugin } from './routemate-plugin.js'
