import { ConfigError } from '../errors/config-error.js'
import { userInfoOf, withoutUserInfo } from '../util/redact.js'
import { describe, quote } from './config-checks.js'
import type { Dialect } from './driver.js'
import { DEFAULT_PORTS, expectedUrl, SCHEMES, shown, structureProblem } from './node-url.js'
import { checkTargetSessionAttrs, type TargetSessionAttrs } from './target-session-attrs.js'
import {
  type Fail,
  parseHostList,
  parseHostParameter,
  parsePortParameter,
  type UrlHost,
} from './url-host-list.js'

/** One node of a multi-host URL: a name from its host and port, and a single-host URL. */
export interface MultiHostNode {
  /** `host:port`, lower-cased, port always given: `db1:5432`, `[::1]:5433`. Never credentials. */
  readonly name: string
  /** The URL of this host alone: the same scheme, user info, database and parameters (but `host`, `port`, `target_session_attrs`), the port always given. */
  readonly url: string
}

/** A multi-host URL read by {@link parseMultiHostUrl}. */
export interface MultiHostUrl {
  /** One node per host, in the order given. */
  readonly nodes: readonly MultiHostNode[]
  /** The `target_session_attrs` parameter; `undefined` when absent. */
  readonly targetSessionAttrs: TargetSessionAttrs | undefined
}

/** Parameters the router takes out of the URL: they describe the host list, not one connection. */
const OWN_PARAMETERS = new Set(['host', 'port', 'target_session_attrs'])

/** libpq parameters a multi-host URL cannot honour, and why. */
const REFUSED_PARAMETERS: Readonly<Record<string, string>> = {
  hostaddr: "hostaddr= is not supported: list the servers' addresses as the hosts",
  load_balance_hosts:
    'load_balance_hosts= is not supported: the router spreads reads over the replicas itself (see the "balancer" option)',
}

/**
 * Reads a libpq-style multi-host URL (`postgres://app:pw@h1:5432,h2:5432,h3/app?sslmode=require`;
 * `mysql://` and `mariadb://` alike) into one single-host URL per host, validated: the scheme of
 * the driver's dialect; hosts separated by commas, each with an optional `:port`, IPv6 addresses
 * in brackets; a host without a port gets the dialect's default port (5432, 3306), or libpq's
 * `port=` parameter (one port for every host, or one per host; not together with ports in the
 * host list); libpq's `host=` parameter may give the hosts instead; one user info (percent-encode
 * `@`, `,`, `/`... in a password); the other query parameters are kept for every node;
 * `target_session_attrs` is taken out and checked. A host listed twice is an error. Every problem
 * is a `ConfigError` at `path` naming the host and what was expected, never the password.
 *
 * @example
 * ```ts
 * parseMultiHostUrl('postgres://app:pw@db1,db2:5433/app?target_session_attrs=read-only', 'url', 'postgres')
 * // { nodes: [{ name: 'db1:5432', url: 'postgres://app:pw@db1:5432/app' },
 * //           { name: 'db2:5433', url: 'postgres://app:pw@db2:5433/app' }], targetSessionAttrs: 'read-only' }
 * ```
 */
export function parseMultiHostUrl(value: unknown, path: string, dialect: Dialect): MultiHostUrl {
  const expected = expectedMultiHost(dialect)
  if (typeof value !== 'string') throw new ConfigError(path, `expected ${expected}, got ${describe(value)}`)
  const problem = structureProblem(value)
  if (problem !== undefined)
    throw new ConfigError(path, `expected ${expected}, ${problem}; got ${shown(value)}`)
  const scheme = checkScheme(value, path, dialect, expected)
  const info = userInfoOf(value)
  const userInfo = info === undefined ? undefined : value.slice(info.start, info.end)
  if (userInfo?.includes('@') && userInfo.includes(',')) {
    // `u:pw@h1,u:pw@h2`: per-host credentials would be read as one password holding "@h1,u:pw".
    throw new ConfigError(
      path,
      `expected ${expected} with one user info before the host list (the same user and password for every host), but the user info holds "@" and ",": per-host credentials are not supported, and a password holding them must be percent-encoded (encodeURIComponent(password): "@" is %40, "," %2C); got ${shown(value)}`,
    )
  }
  const fail: Fail = (reason) => {
    throw new ConfigError(path, `${reason}; a multi-host URL reads ${example(dialect)}`)
  }
  const hostStart = info === undefined ? scheme.length + 2 : info.end + 1
  const authorityLength = value.slice(hostStart).search(/[/?#]/)
  const authorityEnd = authorityLength < 0 ? value.length : hostStart + authorityLength
  const authority = value.slice(hostStart, authorityEnd)
  const { database, query, fragment } = splitTail(value.slice(authorityEnd))
  const parameters = new URLSearchParams(query)
  for (const key of new Set(parameters.keys())) {
    if (Object.hasOwn(REFUSED_PARAMETERS, key)) fail(REFUSED_PARAMETERS[key] as string)
    if (OWN_PARAMETERS.has(key) && parameters.getAll(key).length > 1) fail(`${key}= is given more than once`)
  }
  const hosts = hostsOf(authority, parameters, scheme, info === undefined, fail)
  const portParameter = parameters.get('port')
  const ports =
    portParameter === null ? hosts.map((h) => h.port) : parsePortParameter(portParameter, hosts.length, fail)
  if (portParameter !== null && hosts.some((h) => h.port !== undefined)) {
    fail('ports are given both in the host list and in port=: give them in one place')
  }
  const defaultPort = Number(DEFAULT_PORTS[dialect])
  const kept = keptQuery(query)
  const prefix = `${value.slice(0, scheme.length)}//${userInfo === undefined ? '' : `${userInfo}@`}`
  const seen = new Map<string, number>()
  const nodes = hosts.map((h, i) => {
    const name = `${h.host}:${ports[i] ?? defaultPort}`
    const earlier = seen.get(name)
    if (earlier !== undefined) {
      fail(
        `host ${i + 1} (${JSON.stringify(name)}) is listed twice (also host ${earlier + 1}): each host must be a distinct server`,
      )
    }
    seen.set(name, i)
    return Object.freeze({ name, url: `${prefix}${name}${database}${kept}${fragment}` })
  })
  const attrs = parameters.get('target_session_attrs')
  return Object.freeze({
    nodes: Object.freeze(nodes),
    targetSessionAttrs: attrs === null ? undefined : checkTargetSessionAttrs(attrs, path),
  })
}

/** `a postgres:// URL (or postgresql://) listing one or more hosts: postgres://user@host1:5432,host2:5432/database`. */
export function expectedMultiHost(dialect: Dialect): string {
  return `${expectedUrl(dialect)} listing one or more hosts: ${example(dialect)}`
}

/** `postgres://user@host1:5432,host2:5432/database` (no password: messages are redacted, and it would show as `***`). */
function example(dialect: Dialect): string {
  const port = DEFAULT_PORTS[dialect]
  return `${SCHEMES[dialect][0]}//user@host1:${port},host2:${port}/database`
}

/** The scheme (`postgres:`), lower-cased; a `ConfigError` when it is not the dialect's. */
function checkScheme(value: string, path: string, dialect: Dialect, expected: string): string {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*:)\/\//.exec(value)?.[1]?.toLowerCase()
  if (scheme !== undefined && SCHEMES[dialect].includes(scheme)) return scheme
  const other = dialect === 'postgres' ? 'mysql' : 'postgres'
  const hint =
    scheme !== undefined && SCHEMES[other].includes(scheme)
      ? ` (the driver speaks ${dialect}, not ${other})`
      : ''
  const given = userInfoOf(value) === undefined ? JSON.stringify(withoutUserInfo(value)) : quote(value)
  throw new ConfigError(path, `expected ${expected}, got ${given}${hint}`)
}

/** The hosts, from the authority or from `host=` (libpq's parameter), not both. */
function hostsOf(
  authority: string,
  parameters: URLSearchParams,
  scheme: string,
  masked: boolean,
  fail: Fail,
): UrlHost[] {
  const list = parameters.get('host')
  if (list === null) return parseHostList(authority, scheme, masked, fail)
  if (authority !== '') {
    fail('hosts are given both before the path and in host=: give them in one place')
  }
  return parseHostParameter(list, scheme, fail)
}

/** What follows the authority: `/database` (as written), `?query` (without `?`), `#fragment`. */
function splitTail(tail: string): { database: string; query: string; fragment: string } {
  const hash = tail.indexOf('#')
  const fragment = hash < 0 ? '' : tail.slice(hash)
  const beforeHash = hash < 0 ? tail : tail.slice(0, hash)
  const mark = beforeHash.indexOf('?')
  return {
    database: mark < 0 ? beforeHash : beforeHash.slice(0, mark),
    query: mark < 0 ? '' : beforeHash.slice(mark + 1),
    fragment,
  }
}

/** The query as written without the router's own parameters: `?sslmode=require`, or `''`. */
function keptQuery(query: string): string {
  const kept = query.split('&').filter((pair) => {
    if (pair === '') return false
    const key = new URLSearchParams(pair).keys().next().value
    return key === undefined || !OWN_PARAMETERS.has(key)
  })
  return kept.length === 0 ? '' : `?${kept.join('&')}`
}
