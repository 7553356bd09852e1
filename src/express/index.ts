/**
 * `routemate/express`: Express 5 middleware that runs each request in a routemate scope and
 * session (read-your-writes token in a header or cookie; optional automatic read/write role).
 *
 * @example
 * ```ts
 * import { routemate } from 'routemate/express'
 * app.use(routemate(router, { auto: true }))
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
export { type RoutemateMiddleware, routemate } from './routemate.js'
