import type { LogFn, Logger } from './logger.js'

function method(write: (line: string) => void): LogFn {
  return (obj: object | string, msg?: string): void => {
    if (typeof obj === 'string') write(`[routemate] ${obj}`)
    else if (msg !== undefined) write(`[routemate] ${msg}`)
    else write(`[routemate] ${safeJson(obj)}`)
  }
}

function safeJson(obj: object): string {
  try {
    return JSON.stringify(obj)
  } catch {
    return String(obj)
  }
}

/**
 * A {@link Logger} writing one line per call to `console.debug/info/warn/error`, prefixed with
 * `[routemate]`. The message is logged; the structured object only when there is no message
 * (routemate's messages already hold its details).
 *
 * @example
 * ```ts
 * attachLogger(router, consoleLogger) // [routemate] node "replica1" (replica, cluster "default") is down ...
 * ```
 */
export const consoleLogger: Logger = Object.freeze({
  debug: method((line) => console.debug(line)),
  info: method((line) => console.info(line)),
  warn: method((line) => console.warn(line)),
  error: method((line) => console.error(line)),
})
