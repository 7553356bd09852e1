/** What {@link interpolate} made of one string. */
export type InterpolationResult =
  | {
      readonly ok: true
      readonly value: string
      /** Names of the environment variables read (whether or not a default was used). */
      readonly names: readonly string[]
      /** Values taken from the environment (not defaults). */
      readonly values: readonly string[]
    }
  | {
      readonly ok: false
      readonly message: string
      /** Index in the input of the offending `${`. */
      readonly index: number
    }

const REFERENCE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/

/**
 * Replaces `${NAME}` and `${NAME:-default}` in a string with environment variables, like a shell:
 * the default applies when the variable is unset or empty; `${NAME}` of an unset variable is an
 * error (an empty one is the empty string). `$${` is a literal `${`; any other `$` is left alone.
 * Defaults cannot contain `}` or another reference.
 *
 * @example
 * ```ts
 * interpolate('postgres://app:${DB_PASSWORD}@${DB_HOST:-localhost}/app', { DB_PASSWORD: 's3cret' })
 * // { ok: true, value: 'postgres://app:s3cret@localhost/app', names: ['DB_PASSWORD', 'DB_HOST'], values: ['s3cret'] }
 * ```
 */
export function interpolate(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
): InterpolationResult {
  if (!text.includes('$')) return { ok: true, value: text, names: [], values: [] }
  let out = ''
  const names: string[] = []
  const values: string[] = []
  let i = 0
  while (i < text.length) {
    const dollar = text.indexOf('$', i)
    if (dollar < 0) {
      out += text.slice(i)
      break
    }
    out += text.slice(i, dollar)
    if (text.startsWith('$${', dollar)) {
      out += '${'
      i = dollar + 3
      continue
    }
    if (!text.startsWith('${', dollar)) {
      out += '$'
      i = dollar + 1
      continue
    }
    const close = text.indexOf('}', dollar + 2)
    if (close < 0) {
      return {
        ok: false,
        index: dollar,
        message: `unterminated "\${": expected \${NAME} or \${NAME:-default}`,
      }
    }
    const inner = text.slice(dollar + 2, close)
    const m = REFERENCE.exec(inner)
    if (m === null) {
      const shown = inner.length > 40 ? `${inner.slice(0, 37)}...` : inner
      return {
        ok: false,
        index: dollar,
        message: `expected \${NAME} or \${NAME:-default} (NAME: letters, digits and _, not starting with a digit), got "\${${shown}}"`,
      }
    }
    const name = m[1]!
    const fallback = m[2]
    if (fallback?.includes('${')) {
      return {
        ok: false,
        index: dollar,
        message: `\${${name}:-...}: a default cannot contain another reference`,
      }
    }
    names.push(name)
    const value = env[name]
    if (value !== undefined && (fallback === undefined || value !== '')) {
      out += value
      values.push(value)
    } else if (fallback !== undefined) {
      out += fallback
    } else {
      return {
        ok: false,
        index: dollar,
        message: `environment variable ${name} is not set (use \${${name}:-default} for a default)`,
      }
    }
    i = close + 1
  }
  return { ok: true, value: out, names, values }
}
