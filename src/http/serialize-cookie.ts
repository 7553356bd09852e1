/** Attributes of a `Set-Cookie` header written by {@link serializeCookie}. */
export interface CookieAttributes {
  /** `Path`. Default: none (the browser uses the request's directory). */
  path?: string
  /** `Max-Age` in seconds (an integer >= 0). Default: none (a browser-session cookie). */
  maxAgeSeconds?: number
  /** `SameSite`. Default: none (the browser's default). */
  sameSite?: 'lax' | 'strict' | 'none'
  /** `Secure`. Default: `false`. */
  secure?: boolean
  /** `HttpOnly`. Default: `false`. */
  httpOnly?: boolean
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** RFC 6265 cookie-octet: visible ASCII except `"` `,` `;` `\` and space. */
const COOKIE_OCTETS = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*$/
/** A path attribute value: visible ASCII and space, no `;`. */
const PATH = /^\/[\x20-\x3A\x3C-\x7E]*$/

/** Whether `name` can be a cookie name (an RFC 6265 token). */
export function isCookieName(name: string): boolean {
  return TOKEN.test(name)
}

/** Whether `path` can be a cookie `Path` attribute: starts with `/`, no `;` nor control characters. */
export function isCookiePath(path: string): boolean {
  return PATH.test(path)
}

/**
 * A `Set-Cookie` header value. The value is written as is when it is made of RFC 6265 cookie
 * octets (consistency tokens are URL-safe base64 and always are), else percent-encoded (which
 * {@link parseCookie} decodes). Throws a `TypeError` for a bad name or attribute, so a header can
 * never be split or smuggled.
 *
 * @example
 * ```ts
 * serializeCookie('rm_token', 'rm1.eyJ3Ijo', { path: '/', sameSite: 'lax', httpOnly: true })
 * // 'rm_token=rm1.eyJ3Ijo; Path=/; SameSite=Lax; HttpOnly'
 * ```
 */
export function serializeCookie(name: string, value: string, attributes: CookieAttributes = {}): string {
  if (!isCookieName(name)) throw new TypeError(`invalid cookie name ${JSON.stringify(name)}`)
  const v = COOKIE_OCTETS.test(value) ? value : encodeURIComponent(value)
  let out = `${name}=${v}`
  const { path, maxAgeSeconds, sameSite, secure, httpOnly } = attributes
  if (path !== undefined) {
    if (!isCookiePath(path)) throw new TypeError(`invalid cookie path ${JSON.stringify(path)}`)
    out += `; Path=${path}`
  }
  if (maxAgeSeconds !== undefined) {
    if (!Number.isInteger(maxAgeSeconds) || maxAgeSeconds < 0)
      throw new TypeError(`invalid cookie Max-Age ${String(maxAgeSeconds)}`)
    out += `; Max-Age=${maxAgeSeconds}`
  }
  if (sameSite !== undefined) {
    if (sameSite === 'lax') out += '; SameSite=Lax'
    else if (sameSite === 'strict') out += '; SameSite=Strict'
    else if (sameSite === 'none') out += '; SameSite=None'
    else throw new TypeError(`invalid cookie SameSite ${String(sameSite)}`)
  }
  if (secure === true) out += '; Secure'
  if (httpOnly === true) out += '; HttpOnly'
  return out
}
