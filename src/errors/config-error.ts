import { RoutemateError } from './routemate-error.js'

/**
 * Invalid configuration, raised once by `createRouter` (never at query time). The message and the
 * `path` name the offending option (`replicas[1].url`) and what was expected. Passwords in
 * connection strings are redacted.
 *
 * @example
 * ```ts
 * createRouter({ driver, primary: 'not a url' }) // ConfigError: primary: expected a connection URL ...
 * ```
 */
export class ConfigError extends RoutemateError {
  /** Path of the offending option, e.g. `replicas[1].url`; `''` for the options object itself. */
  readonly path: string

  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super('ROUTEMATE_CONFIG', path ? `${path}: ${message}` : message, options)
    this.path = path
  }
}
