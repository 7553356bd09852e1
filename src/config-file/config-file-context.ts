import type { Document, LineCounter } from 'yaml'
import { passwordsIn, redactSecrets, redactUrl } from '../util/redact.js'
import { ConfigFileError, type ConfigFileProblemInit } from './config-file-error.js'
import { CONFIG_FILE_LIMITS } from './config-file-limits.js'
import type { FoundConfigFile } from './find-config-file.js'
import { locatePath, type YamlIdentity } from './locate-path.js'

/** The `yaml` module, loaded on first use. */
export type YamlModule = typeof import('yaml')

/** Where a problem is: a position, the path's key or value in the document, or nowhere. */
export type ProblemPlace = { line: number; column: number } | 'key' | 'value' | 'none'

/**
 * One file being loaded: where it is, its parsed document (for positions), the secrets seen so
 * far (passwords in URLs, values of secret-looking environment variables), which every message it
 * makes is redacted of, and the problems found so far (reported together at the end).
 */
export class ConfigFileContext {
  readonly found: FoundConfigFile
  /** The environment `${...}` references read. */
  readonly env: Readonly<Record<string, string | undefined>>
  readonly secrets = new Set<string>()
  /** The file's text, once read. */
  text: string | undefined
  yaml: YamlModule | undefined
  doc: Document | undefined
  lines: LineCounter | undefined
  readonly #problems: ConfigFileProblemInit[] = []
  #truncated = false

  constructor(found: FoundConfigFile, env: Readonly<Record<string, string | undefined>>) {
    this.found = found
    this.env = env
  }

  /** Redacts every known secret and URL password from a text. */
  redact(text: string): string {
    const secrets = [...this.secrets].sort((a, b) => b.length - a.length)
    return redactUrl(redactSecrets(text, secrets))
  }

  /** Adds the passwords found in a text (`scheme://user:password@`, `password=`), raw and decoded. */
  addSecretsFrom(text: string): void {
    for (const secret of passwordsIn(text)) this.#addSecret(secret)
  }

  /** Adds a secret (and its percent-decoded and -encoded forms). */
  addSecret(secret: string): void {
    this.#addSecret(secret)
  }

  #addSecret(secret: string): void {
    if (secret === '' || secret.includes('${')) return // a reference, not a password
    this.secrets.add(secret)
    try {
      this.secrets.add(decodeURIComponent(secret))
    } catch {
      // not percent-encoded
    }
    this.secrets.add(encodeURIComponent(secret))
  }

  /** The 1-based position of an option path, if the file's format allows. */
  locate(path: string, at: 'key' | 'value' = 'value'): { line: number; column: number } | undefined {
    if (this.yaml === undefined || this.doc === undefined || this.lines === undefined) return undefined
    return locatePath(this.yaml as unknown as YamlIdentity, this.doc, this.lines, path, at)
  }

  /** The 1-based line and column of a character offset in the file's text. */
  position(offset: number): { line: number; column: number } | undefined {
    const text = this.text
    if (text === undefined) return undefined
    const before = text.slice(0, Math.min(Math.max(offset, 0), text.length))
    const lineStart = before.lastIndexOf('\n') + 1
    return { line: before.split('\n').length, column: before.length - lineStart + 1 }
  }

  /** A redacted error about an option path, located in the file (the problems reported so far come with it). */
  fail(path: string, reason: string, where: ProblemPlace = 'value', cause?: unknown): ConfigFileError {
    this.report(path, reason, where, cause)
    return this.error()!
  }

  /**
   * Records a redacted, located problem, to be thrown with the others by {@link error}. Returns
   * false once {@link CONFIG_FILE_LIMITS}.maxErrors problems are recorded (this one is left out).
   */
  report(path: string, reason: string, where: ProblemPlace = 'value', cause?: unknown): boolean {
    if (this.#problems.length >= CONFIG_FILE_LIMITS.maxErrors) {
      this.#truncated = true
      return false
    }
    const pos = typeof where === 'object' ? where : where === 'none' ? undefined : this.locate(path, where)
    this.#problems.push({
      path,
      reason,
      line: pos?.line,
      column: pos?.column,
      cause,
    })
    return true
  }

  /** How many problems are recorded. */
  get problemCount(): number {
    return this.#problems.length
  }

  /** Whether no more problems can be recorded. */
  get full(): boolean {
    return this.#problems.length >= CONFIG_FILE_LIMITS.maxErrors
  }

  /**
   * One error carrying every recorded problem in file order, or `undefined` when there is none;
   * redacted of every secret known by now (some are only learnt after a problem is recorded).
   */
  error(): ConfigFileError | undefined {
    const [first, ...more] = this.#problems.map((p) => ({
      ...p,
      path: this.redact(p.path),
      reason: this.redact(p.reason),
    }))
    if (first === undefined) return undefined
    return new ConfigFileError({
      file: this.found.file,
      displayName: this.found.displayName,
      ...first,
      more,
      truncated: this.#truncated,
    })
  }

  /** Throws {@link error} when a problem is recorded. */
  throwIfProblems(): void {
    const err = this.error()
    if (err !== undefined) throw err
  }
}
