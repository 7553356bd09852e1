import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'

/**
 * Calls `listener` once, just before `res` sends its headers (on `writeHead`, which Node.js calls
 * implicitly on the first `write`/`end`), while headers can still be set. Headers passed to
 * `writeHead(status, headers)` as an object are applied first, so `listener` sees (and can append
 * to) them. Works for any Node.js `ServerResponse` (Express, Connect, plain `http`).
 *
 * @example
 * ```ts
 * beforeHeaders(res, () => res.setHeader('x-served-at', String(Date.now())))
 * ```
 */
export function beforeHeaders(res: ServerResponse, listener: () => void): void {
  const writeHead = res.writeHead
  let fired = false
  res.writeHead = function (this: ServerResponse, statusCode: number, ...rest: unknown[]) {
    if (fired) return writeHead.apply(this, [statusCode, ...rest] as Parameters<typeof writeHead>)
    fired = true
    // (status), (status, headers), (status, reason), (status, reason, headers)
    const args: unknown[] = [statusCode]
    let headers: unknown = rest[0]
    if (typeof rest[0] === 'string') {
      args.push(rest[0])
      headers = rest[1]
    }
    if (typeof headers === 'object' && headers !== null && !Array.isArray(headers)) {
      for (const [name, value] of Object.entries(headers as OutgoingHttpHeaders))
        if (value !== undefined) this.setHeader(name, value)
    } else if (headers !== undefined) {
      args.push(headers) // raw [name, value, ...] array: passed through as given
    }
    if (!this.headersSent) listener()
    return writeHead.apply(this, args as Parameters<typeof writeHead>)
  } as typeof res.writeHead
}

/**
 * Sets a response header, appending (never replacing) when it is `set-cookie`.
 *
 * @example
 * ```ts
 * setOrAppendHeader(res, 'set-cookie', 'rm=rm1.eyJ3Ijo; Path=/')
 * ```
 */
export function setOrAppendHeader(res: ServerResponse, name: string, value: string): void {
  if (name !== 'set-cookie') {
    res.setHeader(name, value)
    return
  }
  const prev = res.getHeader('set-cookie')
  if (prev === undefined) res.setHeader(name, value)
  else res.setHeader(name, [...(Array.isArray(prev) ? prev : [String(prev)]), value])
}
