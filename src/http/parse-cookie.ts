/**
 * The value of one cookie in a `Cookie` request header, or `undefined` if it is not there. The
 * first occurrence wins (browsers send the most specific path first); a quoted value is unquoted
 * and a percent-encoded one decoded (left as is when it does not decode). Linear in the header's
 * length, no regular expressions, never throws.
 *
 * @example
 * ```ts
 * parseCookie('a=1; rm_token=rm1.eyJ3Ijo; b=2', 'rm_token') // 'rm1.eyJ3Ijo'
 * parseCookie(undefined, 'rm_token')                       // undefined
 * ```
 */
export function parseCookie(
  header: string | readonly string[] | undefined,
  name: string,
): string | undefined {
  if (header === undefined) return undefined
  if (typeof header !== 'string') {
    for (const h of header) {
      const v = parseCookie(h, name)
      if (v !== undefined) return v
    }
    return undefined
  }
  let start = 0
  let eq = -1 // the first '=' at or after start, searched again only once start passes it
  while (start < header.length) {
    let end = header.indexOf(';', start)
    if (end === -1) end = header.length
    if (eq < start) eq = header.indexOf('=', start)
    if (eq === -1) return undefined
    if (eq < end && header.slice(start, eq).trim() === name) {
      return decodeValue(header.slice(eq + 1, end).trim())
    }
    start = end + 1
  }
  return undefined
}

function decodeValue(raw: string): string {
  let v = raw
  if (v.length >= 2 && v.charCodeAt(0) === 34 && v.charCodeAt(v.length - 1) === 34) v = v.slice(1, -1)
  if (!v.includes('%')) return v
  try {
    return decodeURIComponent(v)
  } catch {
    return v
  }
}
