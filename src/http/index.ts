/**
 * Framework-free pieces of the HTTP integrations (`routemate/express`, `routemate/fastify`):
 * options, token transport (header, cookie) and the per-request scope.
 *
 * @module
 */

export { beforeHeaders, setOrAppendHeader } from './before-headers.js'
export { checkTokenSupport } from './check-token-support.js'
export type {
  AutoRoleOptions,
  RoutemateHttpOptions,
  TokenCookieOptions,
  TokenTransportOptions,
} from './http-options.js'
export { parseCookie } from './parse-cookie.js'
export { asToken, MAX_TOKEN_LENGTH, type RequestHeaders, readRequestToken } from './read-request-token.js'
export { type RequestScope, runInRequestScope } from './request-scope.js'
export {
  DEFAULT_READ_METHODS,
  DEFAULT_TOKEN_HEADER,
  type ResolvedHttpOptions,
  type ResolvedTokenCookie,
  resolveHttpOptions,
} from './resolve-http-options.js'
export { responseTokenHeaders } from './response-token-headers.js'
export { type CookieAttributes, isCookieName, isCookiePath, serializeCookie } from './serialize-cookie.js'
