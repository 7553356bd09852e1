import { ConfigError } from '../errors/config-error.js'
import { userInfoOf, withoutUserInfo } from '../util/redact.js'
import { describe, quote } from './config-checks.js'
import type { Dialect } from './driver.js'

/** URL schemes each dialect accepts; the first is the one named in messages. */
export const SCHEMES: Readonly<Record<Dialect, readonly [string, string]>> = {
  postgres: ['postgres:', 'postgresql:'],
  mysql: ['mysql:', 'mariadb:'],
}

/** Port assumed when a URL has none, to tell whether two URLs name the same server. */
export const DEFAULT_PORTS: Readonly<Record<Dialect, string>> = { postgres: '5432', mysql: '3306' }

/** How to write a password that holds reserved characters, for messages. */
const PERCENT_ENCODE =
  'reserved characters in a password must be percent-encoded, e.g. with encodeURIComponent(password) ' +
  '("@" is %40, ":" %3A, "/" %2F, "?" %3F, "#" %23, "%" %25, a space %20)'

/** `a postgres:// URL (or postgresql://)`. */
export function expectedUrl(dialect: Dialect): string {
  const [main, alias] = SCHEMES[dialect]
  return `a ${main}// URL (or ${alias}//)`
}

/** A node URL checked by {@link parseNodeUrl}. */
export interface ParsedUrl {
  /** The URL as given. */
  readonly text: string
  /** `host:port/database`, lower-cased host, default port filled in. */
  readonly server: string
  /** The password (decoded, as percent-encoded, as written) and a `password` query parameter. */
  readonly secrets: readonly string[]
}

/**
 * Parses and checks a node URL for a dialect; a `ConfigError` at `path` when it is not one. A URL
 * whose user info is not where a URL parser would find it is refused rather than misread: an
 * `@` after a `/`, `?` or `#` (an unencoded password holding them would otherwise be cut there,
 * and the rest taken for the host), a tab, newline or other control character (parsers drop them
 * silently), a `%` in the user info that starts no percent escape. Those messages, and that of a
 * URL that does not parse, show the URL without its user info; the others redact the password.
 *
 * @example
 * ```ts
 * parseNodeUrl('postgres://app:s3cret@DB1/app', 'primary', 'postgres').server // 'db1:5432/app'
 * parseNodeUrl('postgres://app:p@ss/w#rd@db1/app', 'primary', 'postgres') // ConfigError: ... must be percent-encoded ...
 * ```
 */
export function parseNodeUrl(value: unknown, path: string, dialect: Dialect): ParsedUrl {
  const expected = expectedUrl(dialect)
  if (value === undefined) throw new ConfigError(path, `required; expected ${expected}`)
  if (typeof value !== 'string') throw new ConfigError(path, `expected ${expected}, got ${describe(value)}`)
  const problem = structureProblem(value)
  if (problem !== undefined)
    throw new ConfigError(path, `expected ${expected}, ${problem}; got ${shown(value)}`)
  let url: URL
  try {
    url = new URL(value)
  } catch {
    // No cause: the parser's error holds the URL itself (`input`).
    throw new ConfigError(path, unparsable(value, expected))
  }
  if (!SCHEMES[dialect].includes(url.protocol)) {
    const other = dialect === 'postgres' ? 'mysql' : 'postgres'
    const hint = SCHEMES[other].includes(url.protocol) ? ` (the driver speaks ${dialect}, not ${other})` : ''
    throw new ConfigError(path, `expected ${expected}, got ${quote(value)}${hint}`)
  }
  if (url.hostname === '') {
    throw new ConfigError(path, `expected ${expected} with a host, got ${quote(value)}`)
  }
  const database = safeDecode(url.pathname.slice(1))
  const server = `${url.hostname.toLowerCase()}:${url.port || DEFAULT_PORTS[dialect]}/${database}`
  return { text: value, server, secrets: passwordsOf(url, value) }
}

/** The URL without its user info, quoted, control characters escaped. */
export function shown(url: string): string {
  return JSON.stringify(withoutUserInfo(url))
}

/** Why a URL's user info cannot be trusted to be read right, if it cannot (also for multi-host URLs). */
export function structureProblem(url: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
  if (/[\u0000-\u001f\u007f]/.test(url)) {
    return `but it holds a tab, newline or other control character, which URL parsers drop silently: ${PERCENT_ENCODE}`
  }
  const info = userInfoOf(url)
  if (info === undefined) return undefined
  const authorityEnd = url.slice(info.start).search(/[/?#]/)
  if (authorityEnd >= 0 && info.start + authorityEnd < info.end) {
    return `but an "@" follows a "/", "?" or "#", so the user info cannot be told from the host: ${PERCENT_ENCODE}`
  }
  if (/%(?![0-9A-Fa-f]{2})/.test(url.slice(info.start, info.end))) {
    return `but its user info holds a "%" that starts no percent escape: ${PERCENT_ENCODE}`
  }
  return undefined
}

/** The message for a URL the WHATWG parser refuses: a bad port named as such, else the encoding hint. */
function unparsable(url: string, expected: string): string {
  const info = userInfoOf(url)
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url)?.[0]
  if (scheme !== undefined) {
    const hostStart = info === undefined ? scheme.length : info.end + 1
    const rest = url.slice(hostStart)
    const authority = rest.slice(0, rest.search(/[/?#]|$/))
    const port = /^(?:\[[^\]]*\]|[^:[\]]*):(.*)$/.exec(authority)?.[1]
    if (port !== undefined && !(/^\d*$/.test(port) && Number(port) <= 65535)) {
      if (info !== undefined || /^\d+$/.test(port)) {
        return `bad port ${JSON.stringify(port)} in ${shown(url)}: expected a number from 0 to 65535`
      }
      // No "@": what stands for the port may be a password missing its "@".
      const hidden = `${url.slice(0, hostStart + authority.length - port.length)}***${url.slice(hostStart + authority.length)}`
      return `bad port (expected a number from 0 to 65535; or is it user:password with the "@" before the host missing?) in ${JSON.stringify(withoutUserInfo(hidden))}`
    }
  }
  if (info === undefined) return `expected ${expected}, got ${shown(url)}`
  return `expected ${expected} that parses; ${PERCENT_ENCODE}; got ${shown(url)}`
}

/** The URL's password (decoded, as the parser encodes it, as written) plus a `password` query parameter (pg accepts one). */
function passwordsOf(url: URL, text: string): string[] {
  const found = new Set<string>()
  if (url.password !== '') {
    found.add(safeDecode(url.password))
    found.add(url.password)
    const info = userInfoOf(text)
    if (info !== undefined) {
      const written = text.slice(info.start, info.end)
      const colon = written.indexOf(':')
      if (colon >= 0) found.add(written.slice(colon + 1))
    }
  }
  const param = url.searchParams.get('password')
  if (param) {
    found.add(param)
    found.add(encodeURIComponent(param))
  }
  found.delete('')
  return [...found]
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}
