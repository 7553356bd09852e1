import type { ConnectionOptions, PoolOptions } from 'mysql2/promise'
import { ConfigError } from '../errors/config-error.js'
import type { DriverNodeOptions } from '../router/driver.js'

/** URL query options that are booleans (`true`/`false`, `1`/`0`). */
const BOOLEAN_OPTIONS = new Set([
  'bigNumberStrings',
  'compress',
  'dateStrings',
  'decimalNumbers',
  'disableEval',
  'enableCleartextPlugin',
  'enableKeepAlive',
  'gracefulEnd',
  'insecureAuth',
  'jsonStrings',
  'multipleStatements',
  'namedPlaceholders',
  'resetOnRelease',
  'rowsAsArray',
  'stringifyObjects',
  'supportBigNumbers',
  'trace',
  'waitForConnections',
])

/** URL query options that are non-negative numbers. */
const NUMBER_OPTIONS = new Set([
  'charsetNumber',
  'connectionLimit',
  'idleTimeout',
  'keepAliveInitialDelay',
  'maxIdle',
  'maxPreparedStatements',
  'queueLimit',
])

/** URL query options kept as strings. */
const STRING_OPTIONS = new Set(['charset', 'flags', 'localAddress', 'socketPath', 'timezone'])

/** Options that only make sense for a pool, left out of a probe's single connection. */
const PROBE_KEEPS = new Set([
  'host',
  'port',
  'user',
  'password',
  'password1',
  'password2',
  'password3',
  'passwordSha1',
  'database',
  'socketPath',
  'localAddress',
  'ssl',
  'charset',
  'charsetNumber',
  'compress',
  'insecureAuth',
  'authPlugins',
  'authSwitchHandler',
  'enableCleartextPlugin',
  'flags',
  'connectAttributes',
  'stream',
  'enableKeepAlive',
  'keepAliveInitialDelay',
])

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
    if (raw === 'true' || raw === '1' || raw === '') return {}
    if (raw === 'false' || raw === '0') return undefined
    if (raw.startsWith('{')) {
      try {
        return JSON.parse(raw) as unknown
      } catch {
        return fail(node, 'URL option "ssl": expected true, false, a JSON object or an SSL profile name')
      }
    }
    return raw // a mysql2 SSL profile name, e.g. "Amazon RDS"
  }
  if (key === 'nestTables') return raw === 'true' ? true : raw === 'false' ? false : raw
  if (BOOLEAN_OPTIONS.has(key)) {
    if (raw === 'true' || raw === '1') return true
    if (raw === 'false' || raw === '0') return false
    return fail(node, `URL option "${key}": expected true or false, got "${raw}"`)
  }
  if (NUMBER_OPTIONS.has(key)) {
    const n = Number(raw)
    if (raw.trim() === '' || !Number.isFinite(n) || n < 0) {
      return fail(node, `URL option "${key}": expected a non-negative number, got "${raw}"`)
    }
    return n
  }
  if (STRING_OPTIONS.has(key)) return raw
  const known = ['ssl', 'nestTables', ...BOOLEAN_OPTIONS, ...NUMBER_OPTIONS, ...STRING_OPTIONS].sort()
  return fail(
    node,
    `unknown URL option "${key}" (expected one of ${known.join(', ')}; ` +
      'connectTimeout comes from connectTimeoutMs, other mysql2 options go in the node\'s "pool")',
  )
}

/**
 * Maps a node's `mysql://` / `mariadb://` URL to mysql2 connection options: user and password
 * (percent-decoded), host (IPv6 brackets removed), port (default 3306) and database (the path).
 * A Unix socket: `mysql://app@localhost/app?socketPath=/run/mysqld/mysqld.sock` (mysql2 then
 * ignores host and port). Query parameters may set mysql2 options by their mysql2 names (`charset`, `timezone`,
 * `ssl`, `connectionLimit`, `dateStrings`, `supportBigNumbers`...); values are typed (`true`/`false`,
 * numbers). `ssl=true` turns TLS on with certificate checks, `ssl={"rejectUnauthorized":false}`
 * passes an object, any other value names a mysql2 SSL profile.
 *
 * Caveat: an unknown or malformed query option throws a `ConfigError` (path `url (node "<name>")`,
 * never the URL itself), rather than being silently ignored.
 *
 * @example
 * ```ts
 * urlOptions({ name: 'p', url: 'mysql://app:s%40cret@db1:3307/app?charset=utf8mb4', ... })
 * // { host: 'db1', port: 3307, user: 'app', password: 's@cret', database: 'app', charset: 'utf8mb4' }
 * ```
 */
export function urlOptions(node: DriverNodeOptions): ConnectionOptions & Record<string, unknown> {
  let url: URL
  try {
    url = new URL(node.url)
  } catch {
    return fail(node, 'invalid URL (expected mysql://user:password@host:port/database)')
  }
  if (url.protocol !== 'mysql:' && url.protocol !== 'mariadb:') {
    fail(node, `expected a mysql:// or mariadb:// URL, got ${url.protocol}//`)
  }
  const out: ConnectionOptions & Record<string, unknown> = {}
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
 * The mysql2 `createPool` options of one node: the URL's options, then
 * `connectTimeout: connectTimeoutMs`, then the node's `pool` options (so they win: any mysql2 pool
 * option, e.g. `connectionLimit`, default 10, or `ssl` with certificates).
 *
 * @example
 * ```ts
 * poolOptions({ name: 'r1', url: 'mysql://app@db2/app', pool: { connectionLimit: 20 }, connectTimeoutMs: 5000, ... })
 * // { host: 'db2', port: 3306, user: 'app', database: 'app', connectTimeout: 5000, connectionLimit: 20 }
 * ```
 */
export function poolOptions(node: DriverNodeOptions): PoolOptions {
  return { ...urlOptions(node), connectTimeout: node.connectTimeoutMs, ...(node.pool as PoolOptions) }
}

/**
 * The options of a probe's single connection: only what it takes to connect and log in (address,
 * credentials, TLS, auth plugins, charset...) from {@link poolOptions}, with
 * `connectTimeout: connectTimeoutMs` forced; result-shaping options (`rowsAsArray`, `typeCast`...)
 * and pool options are left out so the probe reads plain rows.
 *
 * @example
 * ```ts
 * probeConnectionOptions(node) // { host, port, user, password, database, connectTimeout }
 * ```
 */
export function probeConnectionOptions(node: DriverNodeOptions): ConnectionOptions {
  const all = poolOptions(node) as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(all)) if (PROBE_KEEPS.has(key)) out[key] = all[key]
  out.connectTimeout = node.connectTimeoutMs
  return out as ConnectionOptions
}
