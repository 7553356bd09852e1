/**
 * One logging method, pino style: `(obj, msg)` or `(msg)`. A pino, bunyan-style or
 * {@link consoleLogger} method fits.
 */
export interface LogFn {
  (obj: object, msg?: string): void
  (msg: string): void
}

/**
 * The logger routemate writes to: four leveled methods with pino's signature, so a `pino()`
 * instance (or a child of one) can be passed as is.
 *
 * @example
 * ```ts
 * import pino from 'pino'
 * attachLogger(router, pino({ name: 'db' }))
 * ```
 */
export interface Logger {
  debug: LogFn
  info: LogFn
  warn: LogFn
  error: LogFn
}

/** A log level, lowest first. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

/** Levels by rank (higher is more severe). */
export const LOG_LEVELS: Readonly<Record<LogLevel, number>> = Object.freeze({
  debug: 10,
  info: 20,
  warn: 30,
  error: 40,
})
