import { ConfigError } from '../errors/config-error.js'
import type { RoutemateHttpOptions } from './http-options.js'
import { isCookieName, isCookiePath } from './serialize-cookie.js'

/** The default token header. */
export const DEFAULT_TOKEN_HEADER = 'x-routemate-token'

/** The default read methods of auto mode. */
export const DEFAULT_READ_METHODS: readonly string[] = Object.freeze(['GET', 'HEAD', 'OPTIONS'])

/** A validated cookie transport, every default filled in. */
export interface ResolvedTokenCookie {
  readonly name: string
  readonly path: string
  readonly maxAgeSeconds: number | undefined
  readonly sameSite: 'lax' | 'strict' | 'none'
  readonly secure: boolean
  readonly httpOnly: boolean
}

/** Validated, frozen HTTP options. */
export interface ResolvedHttpOptions {
  /** Lower-case header name, or undefined when the header transport is off. */
  readonly header: string | undefined
  readonly cookie: ResolvedTokenCookie | undefined
  /** Upper-case methods run `readOnly`, or undefined when auto mode is off. */
  readonly readMethods: ReadonlySet<string> | undefined
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

function fail(path: string, expected: string, got: unknown): never {
  const shown = typeof got === 'string' ? JSON.stringify(got) : String(got)
  throw new ConfigError(path, `expected ${expected}, got ${shown}`)
}

function resolveCookie(raw: unknown): ResolvedTokenCookie | undefined {
  if (raw === undefined) return undefined
  const c = typeof raw === 'string' ? { name: raw } : raw
  if (!isObject(c)) fail('token.cookie', 'a cookie name or { name, ... }', raw)
  if (typeof c.name !== 'string' || !isCookieName(c.name))
    fail('token.cookie.name', 'a cookie name (RFC 6265 token characters)', c.name)
  const path = c.path ?? '/'
  if (typeof path !== 'string' || !isCookiePath(path))
    fail('token.cookie.path', 'a path starting with "/" without ";" or control characters', c.path)
  const maxAge = c.maxAgeSeconds
  if (maxAge !== undefined && (typeof maxAge !== 'number' || !Number.isInteger(maxAge) || maxAge < 0))
    fail('token.cookie.maxAgeSeconds', 'an integer >= 0', maxAge)
  const sameSite = c.sameSite ?? 'lax'
  if (sameSite !== 'lax' && sameSite !== 'strict' && sameSite !== 'none')
    fail('token.cookie.sameSite', "'lax', 'strict' or 'none'", sameSite)
  for (const key of ['secure', 'httpOnly'] as const) {
    if (c[key] !== undefined && typeof c[key] !== 'boolean') fail(`token.cookie.${key}`, 'a boolean', c[key])
  }
  const secure = c.secure === true
  if (sameSite === 'none' && !secure)
    throw new ConfigError(
      'token.cookie.secure',
      "must be true with sameSite 'none' (browsers drop the cookie)",
    )
  return Object.freeze({
    name: c.name,
    path,
    maxAgeSeconds: maxAge as number | undefined,
    sameSite,
    secure,
    httpOnly: c.httpOnly !== false,
  })
}

function resolveReadMethods(auto: unknown): ReadonlySet<string> | undefined {
  if (auto === undefined || auto === false) return undefined
  if (auto === true) return new Set(DEFAULT_READ_METHODS)
  if (!isObject(auto)) fail('auto', 'a boolean or { readMethods }', auto)
  const methods = auto.readMethods ?? DEFAULT_READ_METHODS
  if (!Array.isArray(methods)) fail('auto.readMethods', 'an array of HTTP method names', methods)
  const out = new Set<string>()
  methods.forEach((m: unknown, i) => {
    if (typeof m !== 'string' || !HEADER_NAME.test(m))
      fail(`auto.readMethods[${i}]`, 'an HTTP method name', m)
    out.add(m.toUpperCase())
  })
  return out
}

/**
 * Validates the HTTP options once (throwing `ConfigError` naming the bad option), fills in the
 * defaults and freezes the result.
 *
 * @example
 * ```ts
 * resolveHttpOptions({ auto: true }) // { header: 'x-routemate-token', cookie: undefined, readMethods: Set {GET, HEAD, OPTIONS} }
 * ```
 */
export function resolveHttpOptions(options: RoutemateHttpOptions = {}): ResolvedHttpOptions {
  if (!isObject(options)) fail('', 'an options object', options)
  const token: unknown = options.token ?? {}
  const readMethods = resolveReadMethods(options.auto)
  if (token === false) return Object.freeze({ header: undefined, cookie: undefined, readMethods })
  if (!isObject(token)) fail('token', 'false or { header?, cookie? }', token)
  const cookie = resolveCookie(token.cookie)
  let header: string | undefined
  if (token.header !== undefined) {
    if (typeof token.header !== 'string' || !HEADER_NAME.test(token.header))
      fail('token.header', 'an HTTP header name', token.header)
    header = token.header.toLowerCase()
  } else if (cookie === undefined) {
    header = DEFAULT_TOKEN_HEADER
  }
  return Object.freeze({ header, cookie, readMethods })
}
