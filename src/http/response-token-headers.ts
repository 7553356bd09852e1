import type { ResolvedHttpOptions } from './resolve-http-options.js'
import { serializeCookie } from './serialize-cookie.js'

/**
 * The response headers that carry a new consistency token: `[name, value]` pairs, the token header
 * and/or a `set-cookie` (which the caller must append to, not replace, other cookies).
 *
 * @example
 * ```ts
 * responseTokenHeaders(resolveHttpOptions({ token: { cookie: 'rm' } }), 'rm1.eyJ3Ijo')
 * // [['set-cookie', 'rm=rm1.eyJ3Ijo; Path=/; SameSite=Lax; HttpOnly']]
 * ```
 */
export function responseTokenHeaders(options: ResolvedHttpOptions, token: string): Array<[string, string]> {
  const out: Array<[string, string]> = []
  if (options.header !== undefined) out.push([options.header, token])
  const c = options.cookie
  if (c !== undefined) {
    out.push([
      'set-cookie',
      serializeCookie(c.name, token, {
        path: c.path,
        maxAgeSeconds: c.maxAgeSeconds,
        sameSite: c.sameSite,
        secure: c.secure,
        httpOnly: c.httpOnly,
      }),
    ])
  }
  return out
}
