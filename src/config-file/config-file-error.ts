import { ConfigError } from '../errors/config-error.js'

/** One problem of a config file, as given to {@link ConfigFileError}. */
export interface ConfigFileProblemInit {
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

/** Where a {@link ConfigFileError} points. */
export interface ConfigFileErrorInit extends ConfigFileProblemInit {
  /** Absolute path of the file. */
  readonly file: string
  /** The file as shown in the message (relative to the working directory when inside it). */
  readonly displayName: string
  /** Further problems of the same file; all of them are put in file order. */
  readonly more?: readonly ConfigFileProblemInit[] | undefined
  /** Set when problems were left out (more than the reporting limit). */
  readonly truncated?: boolean | undefined
}

/** One problem of a config file (an entry of {@link ConfigFileError.errors}). */
export interface ConfigFileProblem {
  /** 1-based line, when known. */
  readonly line: number | undefined
  /** 1-based column, when known. */
  readonly column: number | undefined
  /** Path of the offending option (`replicas[1].url`); `''` for the file itself. */
  readonly path: string
  /** What is wrong, without the location prefix. */
  readonly reason: string
  /** The located line: `routemate.config.yaml:4:12 primary.url: ...`. */
  readonly message: string
}

/**
 * A configuration file that cannot be used: missing, unreadable, too large, a syntax error, an
 * alias cycle or bomb, an unset environment variable, or options `createRouter` rejects. A
 * {@link ConfigError} (code `ROUTEMATE_CONFIG`) reporting every problem found in one pass, in file
 * order, in {@link ConfigFileError.errors}; `line`, `column`, `path` and `reason` are the first's.
 * With one problem the message is its located line
 * (`routemate.config.yaml:4:12 primary.url: environment variable DB_PASSWORD is not set`); with
 * several, a `routemate.config.yaml: 3 errors` line, then one indented line each. Passwords never
 * appear in the message.
 *
 * @example
 * ```ts
 * try { await loadConfig() } catch (e) {
 *   if (e instanceof ConfigFileError) for (const p of e.errors) console.error(p.line, p.path, p.reason)
 * }
 * ```
 */
export class ConfigFileError extends ConfigError {
  /** Absolute path of the file. */
  readonly file: string
  /** 1-based line of the (first) offending option, when known. */
  readonly line: number | undefined
  /** 1-based column, when known. */
  readonly column: number | undefined
  /** The (first) problem without the location prefix. */
  readonly reason: string
  /** Every problem found, in file order (those without a line first); at least one. */
  readonly errors: readonly ConfigFileProblem[]

  constructor(init: ConfigFileErrorInit) {
    const sorted = [init, ...(init.more ?? [])]
      .map((p, i) => ({ p, i }))
      .sort((a, b) => (a.p.line ?? 0) - (b.p.line ?? 0) || (a.p.column ?? 0) - (b.p.column ?? 0) || a.i - b.i)
      .map(({ p }) => p)
    const first = sorted[0]!
    super(first.path, first.reason, first.cause === undefined ? undefined : { cause: first.cause })
    this.file = init.file
    this.line = first.line
    this.column = first.column
    this.reason = first.reason
    this.errors = Object.freeze(
      sorted.map((p) =>
        Object.freeze({
          line: p.line,
          column: p.line === undefined ? undefined : (p.column ?? 1),
          path: p.path,
          reason: p.reason,
          message: locatedLine(init.displayName, p),
        }),
      ),
    )
    const lines = this.errors.map((p) => p.message)
    if (lines.length === 1 && init.truncated !== true) {
      this.message = lines[0]!
    } else {
      const more = init.truncated === true ? ' (stopped there: more were not reported)' : ''
      this.message = `${init.displayName}: ${lines.length} errors${more}\n${lines.map((l) => `  ${l}`).join('\n')}`
    }
  }
}

function locatedLine(displayName: string, p: ConfigFileProblemInit): string {
  const where = p.line === undefined ? `${displayName}:` : `${displayName}:${p.line}:${p.column ?? 1}`
  return `${where} ${p.path ? `${p.path}: ` : ''}${p.reason}`
}
