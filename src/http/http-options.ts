/**
 * How the consistency-token cookie is written. Every field has a safe default.
 *
 * @example
 * ```ts
 * const cookie: TokenCookieOptions = { name: 'rm_token', secure: true, sameSite: 'strict' }
 * ```
 */
export interface TokenCookieOptions {
  /** Cookie name (an RFC 6265 token: letters, digits and `!#$%&'*+-.^_\`|~`). */
  name: string
  /** `Path` attribute. Default: `'/'`. */
  path?: string
  /**
   * `Max-Age` attribute, in seconds. Default: none (a browser-session cookie). An old token is
   * harmless: once replicas have replayed it, it routes nothing differently.
   */
  maxAgeSeconds?: number
  /** `SameSite` attribute. Default: `'lax'`. `'none'` requires `secure: true`. */
  sameSite?: 'lax' | 'strict' | 'none'
  /** `Secure` attribute (HTTPS only). Default: `false`. */
  secure?: boolean
  /** `HttpOnly` attribute (hidden from page scripts). Default: `true`. */
  httpOnly?: boolean
}

/**
 * Where the read-your-writes consistency token travels between requests.
 *
 * - `header`: after a request whose session wrote, the response carries the new token in this
 *   header; the client sends it back in the same request header. Clients keep the last token they
 *   received (a response of a request that did not write carries none).
 * - `cookie`: the same through a cookie, for browsers (a string is the cookie's name).
 *
 * With both, the request header wins over the cookie and both are written. With neither (`{}`),
 * the default header is used.
 *
 * @example
 * ```ts
 * const transport: TokenTransportOptions = { cookie: { name: 'rm_token', secure: true } }
 * ```
 */
export interface TokenTransportOptions {
  /** Header name (case-insensitive). Default: `'x-routemate-token'` when no cookie is given. */
  header?: string
  /** Cookie name, or the cookie's options. Default: none. */
  cookie?: string | TokenCookieOptions
}

/**
 * Automatic role switching (Rails-style): requests with a read method run in a `readOnly` scope
 * (their reads go to replicas, a write throws `ReadOnlyViolationError`), the others in the default
 * scope (everything on the primary).
 *
 * A request carrying a token of a recent write still runs `readOnly`: the router's own
 * read-your-writes logic then serves its reads from a replica that has replayed the write, or the
 * primary (`position` mode, the router's default), or the primary for `windowMs` (`window` mode).
 * A router made with `readYourWrites: false` cannot honour tokens: the integrations refuse a token
 * transport with it (`ConfigError`).
 *
 * @example
 * ```ts
 * const auto: AutoRoleOptions = { readMethods: ['GET', 'HEAD'] }
 * ```
 */
export interface AutoRoleOptions {
  /** Methods that run `readOnly` (case-insensitive). Default: `['GET', 'HEAD', 'OPTIONS']`. */
  readMethods?: string[]
}

/**
 * Options of the HTTP integrations (`routemate/express`, `routemate/fastify`). Every request runs
 * in a read-your-writes session resumed from the token it carries (an empty one without a token).
 *
 * @example
 * ```ts
 * app.use(routemate(router, { auto: true, token: { cookie: 'rm_token' } }))
 * ```
 */
export interface RoutemateHttpOptions {
  /**
   * Read-your-writes token transport. Default: `{ header: 'x-routemate-token' }` (response header
   * set after a write, request header read). `false`: no token is read or written (each request
   * is a fresh session; its own writes are still visible to its later reads). Tokens need a router
   * whose `readYourWrites` is not `false` (`ConfigError` at setup otherwise); the router validates
   * every token it receives (see `tokens` in the router options to sign them).
   */
  token?: false | TokenTransportOptions
  /**
   * Rails-style automatic role switching: requests with a read method (GET/HEAD/OPTIONS) run in a
   * `readOnly` scope, the others in the default (primary) scope. A read request carrying the token
   * of a recent write runs `readOnly` too: the router's read-your-writes logic keeps it consistent
   * (see {@link AutoRoleOptions}). Default: `false` (every request in the default scope; use
   * `router.readOnly` in handlers).
   */
  auto?: boolean | AutoRoleOptions
}
