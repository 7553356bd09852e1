import { ConfigError } from '../errors/config-error.js'
import { checkPortsOption, clusterNodeNames } from './cluster-ports.js'

/**
 * Options of `startMariaDbCluster`. Every field is optional; the defaults give a primary with one
 * replica, app user `app` / `app-secret`, database `app`.
 *
 * @example
 * ```ts
 * const options: MariaDbClusterOptions = { replicas: 2, ports: [33061, 33062, 33063] }
 * ```
 */
export interface MariaDbClusterOptions {
  /** Number of GTID replicas (`replica1`, `replica2`...). Default 1; 0 gives a lone primary. */
  replicas?: number
  /**
   * TCP port of each node on 127.0.0.1, primary first: one per node (`replicas + 1`), integers from
   * 1024 to 65535, all different, each free when the cluster starts (else a `ConfigError` naming
   * `ports[i]`). Default: free ports picked at start (never 5432 or 3306).
   */
  ports?: readonly number[]
  /** Dir for the nodes' data, configs and logs; must be empty or new. Default: a fresh dir under `os.tmpdir()`. */
  baseDir?: string
  /**
   * Dir holding `mariadbd` / `mariadb-install-db`. Default: `$ROUTEMATE_MARIADB_BIN`, `$PATH`,
   * `/usr/sbin`, `/usr/bin`, `/usr/local/mysql/bin`.
   */
  binDir?: string
  /** Application user: ALL on `database` only (no SUPER, so `read_only` applies). Default `'app'`. */
  user?: string
  /** Password of `user`. Default `'app-secret'`. */
  password?: string
  /** Application database, created on every node. Default `'app'`. */
  database?: string
  /** Extra `[mysqld]` settings for every node, written last so they win. */
  settings?: Record<string, string | number>
  /** Bound of each node's start (and of a replica's first connection to the primary). Default 30000 ms. */
  startTimeoutMs?: number
  /** Receives progress lines (never a password). Default: silent. */
  log?: (line: string) => void
}

/**
 * Checks {@link MariaDbClusterOptions} once, before anything is created; every error is a
 * `ConfigError` naming the option (`replicas`, `ports[1]`...) and what was expected.
 *
 * @example
 * ```ts
 * validateMariaDbClusterOptions({ replicas: 17 }) // ConfigError: replicas: expected an integer from 0 to 16, got 17
 * ```
 */
export function validateMariaDbClusterOptions(options: MariaDbClusterOptions): void {
  const replicas = options.replicas ?? 1
  if (!Number.isInteger(replicas) || replicas < 0 || replicas > 16) {
    throw new ConfigError('replicas', `expected an integer from 0 to 16, got ${String(options.replicas)}`)
  }
  const { database, user } = options
  if (database !== undefined && (database === '' || database.length > 64)) {
    throw new ConfigError('database', 'expected 1 to 64 chars')
  }
  if (user !== undefined && (user === '' || user.length > 80 || user === 'root' || user === 'repl')) {
    throw new ConfigError('user', "expected 1 to 80 chars, not 'root' or 'repl'")
  }
  checkPortsOption(options.ports, clusterNodeNames(replicas))
}
