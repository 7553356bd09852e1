import { parseCookie } from './parse-cookie.js'
import type { ResolvedHttpOptions } from './resolve-http-options.js'

/** Request headers as Node.js parses them (`IncomingMessage.headers`): lower-case names. */
export type RequestHeaders = Readonly<Record<string, string | readonly string[] | undefined>>

/** Longest token accepted (a session token of a few shards is well under 1 KiB). */
export const MAX_TOKEN_LENGTH = 8192

/** A consistency token's alphabet: `rm1.` and URL-safe base64. */
const TOKEN_CHARS = /^[A-Za-z0-9._-]+$/

/** `value` if it can be a consistency token (URL-safe characters, bounded length), else undefined. */
export function asToken(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const v = value.trim()
  return v.length > 0 && v.length <= MAX_TOKEN_LENGTH && TOKEN_CHARS.test(v) ? v : undefined
}

/**
 * The consistency token a request carries: the token header, else the token cookie (when those
 * transports are on). A value that cannot be a token (garbage, oversized, repeated headers joined
 * with commas) counts as none; a well-formed one is validated by the router (forged or altered
 * parts are dropped, see `router.withConsistencyToken`). Either way it can make reads less fresh,
 * never misroute a write, never hold reads on the primary.
 *
 * @example
 * ```ts
 * readRequestToken(resolveHttpOptions(), { 'x-routemate-token': 'rm1.eyJ3Ijo' }) // 'rm1.eyJ3Ijo'
 * ```
 */
export function readRequestToken(options: ResolvedHttpOptions, headers: RequestHeaders): string | undefined {
  if (options.header !== undefined) {
    const raw = headers[options.header]
    const token = asToken(typeof raw === 'string' ? raw : raw?.[0])
    if (token !== undefined) return token
  }
  if (options.cookie !== undefined) return asToken(parseCookie(headers.cookie, options.cookie.name))
  return undefined
}
