import { ConfigError } from '../errors/config-error.js'

/** Where a {@link ConfigFileError} points. */
export interface ConfigFileErrorInit {
  /** Absolute path of the file. */
  readonly file: string
  /** The file as shown in the message (relative to the working directory when inside it). */
  readonly displayName: string
  /** Path of the offending option inside the file (`replicas[1].url`); `''` for the file itself. */
  readonly path: string
  /** What is wrong, without the location prefix (passwords already redacted). */
  readonly reason: string
  /** 1-based line, when the format allows locating the path. */
  readonly line?: number | undefined
  /** 1-based column, with `line`. */
  readonly column?: number | undefined
  readonly cause?: unknown
}

/**
 * A configuration file that cannot be used: missing, unreadable, a syntax error, an unset
 * environment variable, or an option `createRouter` rejects. A {@link ConfigError} (code
 * `ROUTEMATE_CONFIG`) whose message is prefixed with the file and, where known, the line and
 * column: `routemate.config.yaml:4:12 primary.url: environment variable DB_PASSWORD is not set`.
 * Passwords never appear in the message.
 *
 * @example
 * ```ts
 * try { await loadConfig() } catch (e) { if (e instanceof ConfigFileError) console.error(e.line, e.path, e.reason) }
 * ```
 */
export class ConfigFileError extends ConfigError {
  /** Absolute path of the file. */
  readonly file: string
  /** 1-based line of the offending option, when known. */
  readonly line: number | undefined
  /** 1-based column, when known. */
  readonly column: number | undefined
  /** The message without the location prefix. */
  readonly reason: string

  constructor(init: ConfigFileErrorInit) {
    super(init.path, init.reason, init.cause === undefined ? undefined : { cause: init.cause })
    this.file = init.file
    this.line = init.line
    this.column = init.column
    this.reason = init.reason
    const where =
      init.line === undefined
        ? `${init.displayName}:`
        : `${init.displayName}:${init.line}:${init.column ?? 1}`
    this.message = `${where} ${init.path ? `${init.path}: ` : ''}${init.reason}`
  }
}
