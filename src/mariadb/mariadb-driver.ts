import type { Connection } from 'mariadb'
import * as mariadbLib from 'mariadb'
import { ConfigError } from '../errors/config-error.js'
import { KeptConnectionProber } from '../health/kept-connection-prober.js'
import { keyPath } from '../router/config-checks.js'
import type {
  BeginOptions,
  Driver,
  DriverNodeOptions,
  DriverPool,
  DriverProber,
  ErrorClass,
  ProbeResult,
  QueryResult,
} from '../router/driver.js'
import type { FacadeHost } from '../router/facade-host.js'
import type { Statement } from '../router/statement.js'
import { gtidReached } from '../mysql2/gtid.js'
import { positionAfterWrite, type RowsRunner, waitForPosition } from '../mysql2/gtid-positions.js'
import type { ProbeMemo } from '../mysql2/mysql2-probe.js'
import { isPrepared } from '../mysql2/mysql2-statement.js'
import { beginStatements, savepointSql } from '../mysql2/mysql2-transaction-sql.js'
import { classifyMariadbError } from './mariadb-errors.js'
import {
  dropConnection,
  isMariadbConnTainted,
  type MariadbModule,
  MariadbNodePool,
  mariadbQueryTimeoutOf,
} from './mariadb-node-pool.js'
import { checkMariadbPoolOptions, knownMariadbPoolOptions } from './mariadb-options.js'
import { type MariadbRouterPool, RoutedMariadbPool } from './mariadb-pool-facade.js'
import { cancelMariadbQuery, mariadbProbeOps, probeMariadbNode, rowsOf } from './mariadb-probe.js'
import { type MariadbResultFields, toMariadbResult } from './mariadb-result.js'

/** Options of {@link mariadbDriver}. */
export interface MariadbDriverOptions {
  /** The `mariadb` module to use (its promise API). Default: the one routemate resolves. */
  mariadb?: MariadbModule
  /**
   * Extra option names a node's `pool` may use, passed to the connector's `createConnection` as
   * they are: an escape hatch for an option of a `mariadb` newer than routemate knows. Default: none.
   */
  extraPoolOptions?: readonly string[]
}

/**
 * The type of the `mariadb` driver ({@link mariadbDriver}): its connections are the connector's
 * `Connection`s, `router.pool()` is a {@link MariadbRouterPool} (a `mariadb.Pool` look-alike, for
 * `@prisma/adapter-mariadb`), and query results have {@link MariadbResultFields}.
 */
export interface MariadbDriver extends Driver<Connection, MariadbRouterPool, MariadbResultFields> {
  /** Builds `router.pool()`: see {@link RoutedMariadbPool}. */
  facade(host: FacadeHost<Connection>): MariadbRouterPool
}

/** Whether the server of a connection is MariaDB (from its handshake). */
function isMariaDb(conn: Connection): boolean {
  const v = conn.info?.serverVersion
  return v?.mariaDb ?? /mariadb/i.test(v?.raw ?? '')
}

/**
 * The shared GTID logic's statement runner on a pooled connection: `timeoutMs` bounds each
 * statement client-side (the connection is destroyed when it passes, as a `mysql2` `timeout` does).
 */
function rowsRunner(conn: Connection): RowsRunner {
  return async (sql, values, timeoutMs) => {
    if (timeoutMs === undefined || timeoutMs <= 0) return rowsOf(conn, sql, values)
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        dropConnection(conn)
        reject(
          Object.assign(new Error(`${sql}: no answer within ${timeoutMs} ms`), { code: 'ER_SOCKET_TIMEOUT' }),
        )
      }, timeoutMs)
    })
    try {
      return await Promise.race([rowsOf(conn, sql, values), timeout])
    } finally {
      clearTimeout(timer)
    }
  }
}

const noop = (): void => {}

/** The MySQL/MariaDB driver over the `mariadb` connector. */
class MariadbDriverImpl implements MariadbDriver {
  readonly dialect = 'mysql' as const
  readonly name = 'mariadb'
  readonly #lib: MariadbModule
  readonly #probeMemo: ProbeMemo = new Map()
  readonly #known: ReadonlySet<string>

  constructor(options: MariadbDriverOptions) {
    this.#lib = options.mariadb ?? mariadbLib
    const extra = options.extraPoolOptions ?? []
    if (!Array.isArray(extra) || !extra.every((k) => typeof k === 'string'))
      throw new ConfigError('extraPoolOptions', 'expected an array of option names')
    this.#known = knownMariadbPoolOptions(extra)
  }

  checkPoolOptions(pool: Readonly<Record<string, unknown>>, path: string): void {
    checkMariadbPoolOptions(pool, (key) => keyPath(path, key), this.#known)
  }

  createPool(node: DriverNodeOptions, onError: (err: unknown) => void = noop): DriverPool<Connection> {
    checkMariadbPoolOptions(node.pool, (key) => `pool.${key} (node "${node.name}")`, this.#known)
    return new MariadbNodePool(this.#lib, node, onError)
  }

  async execute(
    conn: Connection,
    stmt: Statement,
    params: readonly unknown[] | undefined,
  ): Promise<QueryResult & MariadbResultFields> {
    // No client-side timeout: the core bounds statements by queryTimeoutMs and cancels them (`cancel`).
    const sql = stmt as Parameters<Connection['query']>[0]
    const result = isPrepared(stmt) ? await conn.execute(sql, params) : await conn.query(sql, params)
    return toMariadbResult(result)
  }

  /** The hot path: the connector's promise straight to the callback (no `async` wrapper). */
  executeCallback(
    conn: Connection,
    stmt: Statement,
    params: readonly unknown[] | undefined,
    cb: (err: unknown, result?: QueryResult & MariadbResultFields) => void,
  ): void {
    const sql = stmt as Parameters<Connection['query']>[0]
    const p = isPrepared(stmt) ? conn.execute(sql, params) : conn.query(sql, params)
    p.then((r: unknown) => cb(undefined, toMariadbResult(r)), cb)
  }

  probe(node: DriverNodeOptions, signal: AbortSignal): Promise<ProbeResult> {
    return probeMariadbNode(this.#lib, node, signal, this.#probeMemo)
  }

  createProber(node: DriverNodeOptions, options: { readonly maxAgeMs: number }): DriverProber {
    return new KeptConnectionProber(mariadbProbeOps(this.#lib, node, this.#probeMemo), options.maxAgeMs)
  }

  positionReached(replay: string, target: string): boolean {
    return gtidReached(replay, target)
  }

  positionAfterWrite(conn: Connection): Promise<string> {
    return positionAfterWrite(rowsRunner(conn), isMariaDb(conn), mariadbQueryTimeoutOf(conn))
  }

  waitForPosition(conn: Connection, target: string, timeoutMs: number): Promise<string | undefined> {
    return waitForPosition(rowsRunner(conn), isMariaDb(conn), target, timeoutMs, mariadbQueryTimeoutOf(conn))
  }

  beginSql(options: BeginOptions): readonly string[] {
    return beginStatements(options)
  }

  savepointSql(name: string, op: 'create' | 'release' | 'rollback'): string {
    return savepointSql(name, op)
  }

  cancel(conn: Connection, node: DriverNodeOptions, signal: AbortSignal): Promise<boolean> {
    return cancelMariadbQuery(this.#lib, conn, node, signal, this.#probeMemo)
  }

  classify(err: unknown): ErrorClass {
    return classifyMariadbError(err)
  }

  readOnlySessionLost(conn: Connection): boolean {
    return isMariadbConnTainted(conn)
  }

  facade(host: FacadeHost<Connection>): MariadbRouterPool {
    return new RoutedMariadbPool(host) as MariadbRouterPool
  }
}

/**
 * The MySQL/MariaDB driver for routemate over the `mariadb` connector (an optional peer
 * dependency, 3.x): the same guarantees as `routemate/mysql2` — probes of `@@read_only` and GTID
 * positions, read-your-writes, read-only sessions on the primary's fallback pool — with
 * `router.pool()` as a `mariadb.Pool` look-alike that `@prisma/adapter-mariadb` (7.10+) accepts:
 * `new PrismaMariaDb(router.pool())`.
 *
 * - URL: `mysql://` or `mariadb://user:password@host:3306/database?charset=utf8mb4`; query
 *   parameters set connector options by their `mariadb` names (an unknown one throws a
 *   `ConfigError` naming the node). Then `connectTimeout` comes from `connectTimeoutMs`, and each
 *   node's `pool` options go last: any connector connection option, plus `connectionLimit`
 *   (default 10), `acquireTimeout` (ms a checkout of a full pool waits before a
 *   `PoolExhaustedError`, default 10000) and `idleTimeout` (s, default 1800).
 * - Pool: routemate's own pool of connector connections (opened on demand; a node that refuses
 *   connections fails its checkouts at once, so reads move on). The connector's `Pool` options
 *   that it does not implement (`minimumIdle`, `resetAfterUse`...) are a `ConfigError`.
 * - Results: a SELECT gives `{ rows, rowCount, meta }`; a write `{ rows: [], rowCount:
 *   affectedRows, insertId, affectedRows, warningStatus }`; a connector options object
 *   (`{ sql, rowsAsArray, typeCast... }`) is accepted as the statement.
 * - `queryTimeoutMs`: `KILL QUERY` on the statement's connection id from a short-lived connection.
 * - Transactions, privileges and GTID positions: as `routemate/mysql2` (shared code).
 *
 * @example
 * ```ts
 * import { createRouter } from 'routemate'
 * import { mariadbDriver } from 'routemate/mariadb'
 * const router = createRouter({ driver: mariadbDriver(), primary: 'mariadb://app:pw@db1/app', replicas: ['mariadb://app:pw@db2/app'] })
 * const rows = await router.readOnly(() => router.pool().query('SELECT * FROM users WHERE id = ?', [1]))
 * ```
 */
export function mariadbDriver(options: MariadbDriverOptions = {}): MariadbDriver {
  return new MariadbDriverImpl(options)
}
