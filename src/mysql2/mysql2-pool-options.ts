import { ConfigError } from '../errors/config-error.js'
import { didYouMean } from '../router/config-checks.js'

/**
 * The options a node's `pool` may give mysql2's `createPool`: mysql2's own list of connection and
 * pool options (`validOptions` in mysql2 3.x's `lib/connection_config.js`; mysql2 only warns on
 * the console about others and ignores them), without the ones it sets internally (`pool`,
 * `isServer`).
 */
export const MYSQL2_POOL_OPTIONS: readonly string[] = [
  'authPlugins',
  'authSwitchHandler',
  'bigNumberStrings',
  'charset',
  'charsetNumber',
  'compress',
  'connectAttributes',
  'connectionLimit',
  'connectTimeout',
  'database',
  'dateStrings',
  'debug',
  'decimalNumbers',
  'disableEval',
  'enableCleartextPlugin',
  'enableKeepAlive',
  'flags',
  'gracefulEnd',
  'host',
  'idleTimeout',
  'infileStreamFactory',
  'insecureAuth',
  'jsonStrings',
  'keepAliveInitialDelay',
  'localAddress',
  'maxIdle',
  'maxPreparedStatements',
  'multipleStatements',
  'namedPlaceholders',
  'nestTables',
  'password',
  'password1',
  'password2',
  'password3',
  'passwordSha1',
  'port',
  'Promise',
  'queryFormat',
  'queueLimit',
  'resetOnRelease',
  'rowsAsArray',
  'socketPath',
  'ssl',
  'stream',
  'stringifyObjects',
  'supportBigNumbers',
  'timezone',
  'trace',
  'typeCast',
  'uri',
  'user',
  'waitForConnections',
]

const NO_CHECKOUT_TIMEOUT =
  "mysql2's pool has no checkout timeout (a checkout waits until a connection is free, or the node is marked down): bound the waiting queue with queueLimit, or fail at once with waitForConnections: false"

/** Options of other pools (`mysql`, `pg.Pool`) people bring along, with what mysql2 offers instead. */
const REPLACED: Readonly<Record<string, string>> = {
  acquireTimeout: NO_CHECKOUT_TIMEOUT,
  connectionTimeoutMillis: NO_CHECKOUT_TIMEOUT,
  max: 'use "connectionLimit"',
  maxWaiting: 'use "queueLimit"',
  idleTimeoutMillis: 'use "idleTimeout" (ms)',
  min: 'mysql2 keeps no minimum of connections ("maxIdle" bounds the idle ones)',
}

const PASSWORDS = ['password', 'password1', 'password2', 'password3', 'passwordSha1']

/**
 * The option names a node's `pool` may use: {@link MYSQL2_POOL_OPTIONS} and `extra`
 * (`mysql2Driver({ extraPoolOptions })`, for an option of a newer mysql2).
 *
 * @example
 * ```ts
 * knownMysql2PoolOptions([]).has('connectionLimit') // true
 * ```
 */
export function knownMysql2PoolOptions(extra: readonly string[]): ReadonlySet<string> {
  return new Set([...MYSQL2_POOL_OPTIONS, ...extra])
}

/**
 * Checks a `pool` options object for mysql2, naming each offending option with `at(key)`: an
 * unknown key (with a "did you mean" for a likely typo, or what to use for another pool's option
 * such as `acquireTimeout`), or a password that is not a string. Values are otherwise mysql2's
 * to check.
 *
 * @example
 * ```ts
 * checkMysql2PoolOptions({ conectionLimit: 5 }, (k) => `replicas[0].pool.${k}`, known)
 * // ConfigError: replicas[0].pool.conectionLimit: unknown option "conectionLimit" (did you mean "connectionLimit"?) ...
 * ```
 */
export function checkMysql2PoolOptions(
  pool: Readonly<Record<string, unknown>>,
  at: (key: string) => string,
  known: ReadonlySet<string>,
): void {
  for (const key of Object.keys(pool)) {
    if (known.has(key)) continue
    const replaced = REPLACED[key]
    if (replaced !== undefined) throw new ConfigError(at(key), `unknown option "${key}": ${replaced}`)
    const hint = didYouMean(key, [...known])
    throw new ConfigError(
      at(key),
      `unknown option "${key}"${hint ? ` (did you mean "${hint}"?)` : ''}; expected a mysql2 connection or pool option (${MYSQL2_POOL_OPTIONS.join(', ')}); an option of a newer mysql2 can be allowed with mysql2Driver({ extraPoolOptions: ["${key}"] })`,
    )
  }
  for (const key of PASSWORDS) {
    const value = pool[key]
    // Never describe the value: it is (meant to be) a password. YAML reads an unquoted 123456 as a number.
    if (value !== undefined && typeof value !== 'string')
      throw new ConfigError(
        at(key),
        `expected a string (quote it in a YAML or JSON file), got a ${value === null ? 'null' : typeof value}`,
      )
  }
}
