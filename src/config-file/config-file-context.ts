import type { Document, LineCounter } from 'yaml'
import { passwordsIn, redactSecrets, redactUrl } from '../util/redact.js'
import { ConfigFileError } from './config-file-error.js'
import type { FoundConfigFile } from './find-config-file.js'
import { locatePath, type YamlIdentity } from './locate-path.js'

/** The `yaml` module, loaded on first use. */
export type YamlModule = typeof import('yaml')

/**
 * One file being loaded: where it is, its parsed document (for positions) and the secrets seen so
 * far (passwords in URLs, values of secret-looking environment variables), which every message it
 * makes is redacted of.
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

  /** A redacted error about an option path, located in the file. */
  fail(
    path: string,
    reason: string,
    where: { line: number; column: number } | 'key' | 'value' | 'none' = 'value',
    cause?: unknown,
  ): ConfigFileError {
    const pos = typeof where === 'object' ? where : where === 'none' ? undefined : this.locate(path, where)
    return new ConfigFileError({
      file: this.found.file,
      displayName: this.found.displayName,
      path: this.redact(path),
      reason: this.redact(reason),
      line: pos?.line,
      column: pos?.column,
      cause,
    })
  }
}
