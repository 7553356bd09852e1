import { ConfigError } from '../errors/config-error.js'
import { didYouMean } from '../router/config-checks.js'
import type { DriverNodeOptions } from '../router/driver.js'

/**
 * The connection options of the `mariadb` connector (3.x `ConnectionConfig`) a node's `pool` and
 * its URL's query may set: passed to `createConnection` as they are.
 */
export const MARIADB_CONNECTION_OPTIONS: readonly string[] = [
  'allowPublicKeyRetrieval',
  'arrayParenthesis',
  'autoJsonMap',
  'bigIntAsNumber',
  'bigNumberStrings',
  'bulk',
  'cachingRsaPublicKey',
  'charset',
  'checkDuplicate',
  'checkNumberRange',
  'collation',
  'compress',
  'connectAttributes',
  'connectTimeout',
  'database',
  'dateStrings',
  'debug',
  'debugCompress',
  'debugLen',
  'decimalAsNumber',
  'forceVersionCheck',
  'foundRows',
  'host',
  'infileStreamFactory',
  'initSql',
  'insertIdAsNumber',
  'keepAliveDelay',
  'logPackets',
  'logParam',
  'logger',
  'maxAllowedPacket',
  'metaAsArray',
  'metaEnumerable',
  'multipleStatements',
  'namedPlaceholders',
  'nestTables',
  'password',
  'permitLocalInfile',
  'permitSetMultiParamEntries',
  'pipelining',
  'port',
  'prepareCacheLength',
  'queryTimeout',
  'rowsAsArray',
  'rsaPublicKey',
  'sessionVariables',
  'socketPath',
  'socketTimeout',
  'ssl',
  'stream',
  'supportBigNumbers',
  'timezone',
  'trace',
  'typeCast',
  'user',
]

/** The pool options routemate's own pool of `mariadb` connections takes (see {@link MariadbPoolLimits}). */
export const MARIADB_POOL_OPTIONS: readonly string[] = ['connectionLimit', 'acquireTimeout', 'idleTimeout']

/** `mariadb` pool options that routemate's pool does not implement, with what to do instead. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  minimumIdle: "routemate's pool opens connections on demand and keeps no minimum",
  minDelayValidation:
    "routemate's pool does not ping idle connections: a dead one fails its statement, which the router retries elsewhere when it is a read",
  pingTimeout: "routemate's pool does not ping idle connections",
  leakDetectionTimeout: 'not supported by routemate',
  resetAfterUse: 'not supported by routemate (connections are not reset on release)',
  noControlAfterUse: 'not supported by routemate',
  initializationTimeout: "not needed: routemate's pool opens connections on demand",
  max: 'use "connectionLimit"',
  connectionTimeoutMillis: 'use "acquireTimeout" (ms)',
  idleTimeoutMillis: 'use "idleTimeout" (seconds)',
}

/** Connection options that are booleans in a URL query (`true`/`false`, `1`/`0`). */
const BOOLEAN_OPTIONS = new Set([
  'allowPublicKeyRetrieval',
  'arrayParenthesis',
  'autoJsonMap',
  'bigIntAsNumber',
  'bigNumberStrings',
  'bulk',
  'checkDuplicate',
  'checkNumberRange',
  'compress',
  'dateStrings',
  'debug',
  'debugCompress',
  'decimalAsNumber',
  'forceVersionCheck',
  'foundRows',
  'insertIdAsNumber',
  'logPackets',
  'logParam',
  'metaAsArray',
  'metaEnumerable',
  'multipleStatements',
  'namedPlaceholders',
  'permitLocalInfile',
  'permitSetMultiParamEntries',
  'pipelining',
  'rowsAsArray',
  'supportBigNumbers',
  'trace',
])

/** Options that are non-negative numbers in a URL query. */
const NUMBER_OPTIONS = new Set([
  'acquireTimeout',
  'connectionLimit',
  'debugLen',
  'idleTimeout',
  'keepAliveDelay',
  'maxAllowedPacket',
  'prepareCacheLength',
  'queryTimeout',
  'socketTimeout',
])

/** Options that only make sense for a pool's connections, left out of a probe's single connection. */
const PROBE_KEEPS = new Set([
  'host',
  'port',
  'user',
  'password',
  'database',
  'socketPath',
  'ssl',
  'charset',
  'collation',
  'compress',
  'connectAttributes',
  'stream',
  'allowPublicKeyRetrieval',
  'cachingRsaPublicKey',
  'rsaPublicKey',
  'keepAliveDelay',
])

/** Sizing of routemate's pool of `mariadb` connections for one node, with the `mariadb` pool's names and defaults. */
export interface MariadbPoolLimits {
  /** Most connections open at once. Default 10. */
  readonly connectionLimit: number
  /** A checkout waiting for a connection of a full pool fails after this long, in ms, with a `PoolExhaustedError`. Default 10000. */
  readonly acquireTimeout: number
  /** An idle connection is closed after this long, in seconds; 0 = never. Default 1800. */
  readonly idleTimeout: number
}

function fail(node: DriverNodeOptions, what: string): never {
  // Never print the URL itself: it carries the password.
  throw new ConfigError(`url (node "${node.name}")`, what)
}

function decode(node: DriverNodeOptions, part: string, what: string): string {
  try {
    return decodeURIComponent(part)
  } catch {
    return fail(node, `the URL's ${what} is not valid percent-encoding`)
  }
}

function queryOption(node: DriverNodeOptions, key: string, raw: string): unknown {
  if (key === 'ssl') {
    if (raw === 'true' || raw === '1' || raw === '') return true
    if (raw === 'false' || raw === '0') return undefined
    try {
      return JSON.parse(raw) as unknown
    } catch {
      return fail(node, 'URL option "ssl": expected true, false or a JSON object')
    }
  }
  if (BOOLEAN_OPTIONS.has(key)) {
    if (raw === 'true' || raw === '1') return true
    if (raw === 'false' || raw === '0') return false
    return fail(node, `URL option "${key}": expected true or false`)
  }
  if (NUMBER_OPTIONS.has(key)) {
    const n = Number(raw)
    if (raw === '' || !Number.isFinite(n) || n < 0)
      return fail(node, `URL option "${key}": expected a non-negative number`)
    return n
  }
  if (MARIADB_CONNECTION_OPTIONS.includes(key)) return raw
  const hint = didYouMean(key, [...MARIADB_CONNECTION_OPTIONS, ...MARIADB_POOL_OPTIONS])
  return fail(node, `unknown URL option "${key}"${hint ? ` (did you mean "${hint}"?)` : ''}`)
}

/**
 * The `mariadb` connection options of a node's URL: `mysql://` or `mariadb://user:password@host:port/database?opt=value`
 * (percent-decoded; port 3306 by default). Query parameters set connector options by their
 * `mariadb` names (`charset`, `timezone`, `ssl=true`, `connectionLimit`...), typed (`true`/`false`,
 * numbers); an unknown or malformed one throws a `ConfigError` (path `url (node "<name>")`, never
 * the URL itself).
 *
 * @example
 * ```ts
 * mariadbUrlOptions({ name: 'p', url: 'mariadb://app:s%40cret@db1:3307/app?charset=utf8mb4', ... })
 * // { host: 'db1', port: 3307, user: 'app', password: 's@cret', database: 'app', charset: 'utf8mb4' }
 * ```
 */
export function mariadbUrlOptions(node: DriverNodeOptions): Record<string, unknown> {
  let url: URL
  try {
    url = new URL(node.url)
  } catch {
    return fail(node, 'invalid URL (expected mariadb://user:password@host:port/database)')
  }
  if (url.protocol !== 'mysql:' && url.protocol !== 'mariadb:') {
    fail(node, `expected a mysql:// or mariadb:// URL, got ${url.protocol}//`)
  }
  const out: Record<string, unknown> = {}
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  if (host !== '') out.host = decode(node, host, 'host')
  out.port = url.port === '' ? 3306 : Number(url.port)
  if (url.username !== '') out.user = decode(node, url.username, 'user')
  if (url.password !== '') out.password = decode(node, url.password, 'password')
  const path = url.pathname.replace(/^\//, '')
  if (path !== '') out.database = decode(node, path, 'database')
  for (const [key, raw] of url.searchParams) {
    const value = queryOption(node, key, raw)
    if (value !== undefined) out[key] = value
  }
  return out
}

/**
 * A node's connection options and pool sizing: the URL's options, then
 * `connectTimeout: connectTimeoutMs`, then the node's `pool` options (they win). A read-only
 * node pool never runs multi-statement texts (`multipleStatements: false`).
 *
 * @example
 * ```ts
 * mariadbNodeOptions(node) // { connection: { host, port, user, ..., connectTimeout }, limits: { connectionLimit: 10, ... } }
 * ```
 */
export function mariadbNodeOptions(node: DriverNodeOptions): {
  connection: Record<string, unknown>
  limits: MariadbPoolLimits
} {
  const all: Record<string, unknown> = {
    ...mariadbUrlOptions(node),
    connectTimeout: node.connectTimeoutMs,
    ...node.pool,
  }
  const num = (key: string, dflt: number): number => {
    const v = all[key]
    delete all[key]
    if (v === undefined) return dflt
    const n = Number(v)
    if (!Number.isFinite(n) || n < 0)
      throw new ConfigError(`pool.${key} (node "${node.name}")`, 'expected a non-negative number')
    return n
  }
  const limits: MariadbPoolLimits = {
    connectionLimit: Math.max(1, num('connectionLimit', 10)),
    acquireTimeout: num('acquireTimeout', 10_000),
    idleTimeout: num('idleTimeout', 1800),
  }
  if (node.readOnly) all.multipleStatements = false
  return { connection: all, limits }
}

/**
 * The options of a probe's (or a `KILL QUERY`'s) single connection: what it takes to connect and
 * log in, with `connectTimeout: connectTimeoutMs` forced; result-shaping options are left out so
 * the probe reads plain rows.
 *
 * @example
 * ```ts
 * mariadbProbeOptions(node) // { host, port, user, password, database, connectTimeout }
 * ```
 */
export function mariadbProbeOptions(node: DriverNodeOptions): Record<string, unknown> {
  const { connection } = mariadbNodeOptions(node)
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(connection)) if (PROBE_KEEPS.has(key)) out[key] = connection[key]
  out.connectTimeout = node.connectTimeoutMs
  return out
}

/**
 * Checks a `pool` options object for the `mariadb` driver, naming each offending option with
 * `at(key)`: an unknown key (with a "did you mean"), a `mariadb` pool option routemate's pool does
 * not implement (with what to do instead), or a password that is not a string.
 *
 * @example
 * ```ts
 * checkMariadbPoolOptions({ conectionLimit: 5 }, (k) => `pool.${k}`, known)
 * // ConfigError: pool.conectionLimit: unknown option "conectionLimit" (did you mean "connectionLimit"?) ...
 * ```
 */
export function checkMariadbPoolOptions(
  pool: Readonly<Record<string, unknown>>,
  at: (key: string) => string,
  known: ReadonlySet<string>,
): void {
  for (const key of Object.keys(pool)) {
    if (known.has(key)) continue
    const replaced = UNSUPPORTED[key]
    if (replaced !== undefined) throw new ConfigError(at(key), `unsupported option "${key}": ${replaced}`)
    const hint = didYouMean(key, [...known])
    throw new ConfigError(
      at(key),
      `unknown option "${key}"${hint ? ` (did you mean "${hint}"?)` : ''}; expected a mariadb connection option or one of ${MARIADB_POOL_OPTIONS.join(', ')}; an option of a newer mariadb can be allowed with mariadbDriver({ extraPoolOptions: ["${key}"] })`,
    )
  }
  const value = pool.password
  // Never describe the value: it is (meant to be) a password.
  if (value !== undefined && typeof value !== 'string')
    throw new ConfigError(
      at('password'),
      `expected a string (quote it in a YAML or JSON file), got a ${value === null ? 'null' : typeof value}`,
    )
}

/**
 * The option names a node's `pool` may use with the `mariadb` driver.
 *
 * @example
 * ```ts
 * knownMariadbPoolOptions([]).has('connectionLimit') // true
 * ```
 */
export function knownMariadbPoolOptions(extra: readonly string[]): ReadonlySet<string> {
  return new Set([...MARIADB_CONNECTION_OPTIONS, ...MARIADB_POOL_OPTIONS, ...extra])
}
