import type { PoolConnection } from 'mysql2/promise'
import mysql2 from 'mysql2/promise'
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
import { gtidReached, mergeGtidPositions } from './gtid.js'
import { positionAfterWrite, type RowsRunner, waitForPosition } from './gtid-positions.js'
import { cancelMysqlQuery } from './mysql2-cancel.js'
import { classifyMysqlError } from './mysql2-errors.js'
import { type CoreConnection, coreOf, type QueryCallback } from './mysql2-internals.js'
import { type Mysql2Module, Mysql2NodePool, queryTimeoutOf } from './mysql2-node-pool.js'
import { createMysql2PoolFacade, type Mysql2RouterPool } from './mysql2-pool-facade.js'
import { checkMysql2PoolOptions, knownMysql2PoolOptions } from './mysql2-pool-options.js'
import { mysqlProbeOps, type ProbeMemo, probeNode } from './mysql2-probe.js'
import { isTainted } from './mysql2-read-only-session.js'
import { noteReply, takeReplyPosition } from './mysql2-reply-position.js'
import { type Mysql2ResultFields, toQueryResult } from './mysql2-result.js'
import { isPrepared, PreparedText, queryOptions } from './mysql2-statement.js'
import { beginStatements, savepointSql } from './mysql2-transaction-sql.js'

/** Options of {@link mysql2Driver}. */
export interface Mysql2DriverOptions {
  /** The `mysql2/promise` module to use (e.g. to share one with your ORM). Default: the one routemate resolves. */
  mysql2?: Mysql2Module
  /**
   * Extra option names a node's `pool` may use, passed to mysql2's `createPool` as they are: an
   * escape hatch for an option of a mysql2 newer than routemate knows. Any other unknown `pool`
   * key is a `ConfigError` (with a "did you mean"). Default: none.
   */
  extraPoolOptions?: readonly string[]
}

/**
 * The type of the mysql2 driver ({@link mysql2Driver}): its connections are `mysql2/promise`
 * `PoolConnection`s, `router.pool()` is a {@link Mysql2RouterPool} (a mysql2 pool for Drizzle and
 * Kysely), and query results have {@link Mysql2ResultFields} (`insertId`, `affectedRows`,
 * `fields`...). Name it where a router's type is written out: `Router<Mysql2Driver>`.
 */
export interface Mysql2Driver extends Driver<PoolConnection, Mysql2RouterPool, Mysql2ResultFields> {
  /** Builds `router.pool()`: see {@link Mysql2RouterPool}. */
  facade(host: FacadeHost<PoolConnection>): Mysql2RouterPool
}

const noop = (): void => {}

/** Server flavour of each pooled core connection, from its handshake (or `VERSION()`). */
const flavours = new WeakMap<object, boolean>()

async function isMariaDb(conn: PoolConnection, core: CoreConnection): Promise<boolean> {
  let mariadb = flavours.get(core)
  if (mariadb === undefined) {
    const version = core._handshakePacket?.serverVersion
    if (typeof version === 'string') mariadb = /mariadb/i.test(version)
    else {
      const rows = await queryRows(conn, 'SELECT VERSION() AS v', queryTimeoutOf(core))
      mariadb = /mariadb/i.test(String(rows[0]?.v ?? ''))
    }
    flavours.set(core, mariadb)
  }
  return mariadb
}

/**
 * Runs an internal statement (plain object rows, the given client-side timeout) and returns its
 * rows. Through mysql2's callback API on the core connection: its promise wrapper captures a stack
 * per statement (~20 µs), and these run on the hot path of read-your-writes.
 */
function queryRows(
  conn: PoolConnection,
  sql: string,
  timeoutMs: number,
  values?: unknown[],
): Promise<Record<string, unknown>[]> {
  const options = { sql, values, rowsAsArray: false, ...(timeoutMs > 0 ? { timeout: timeoutMs } : {}) }
  return new Promise((resolve, reject) => {
    coreOf(conn).query(options, ((err: unknown, rows: unknown) => {
      if (err) reject(err)
      else resolve(Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [])
    }) as QueryCallback)
  })
}

/** The shared GTID logic's statement runner on a mysql2 connection. */
function rowsRunner(conn: PoolConnection): RowsRunner {
  return (sql, values, timeoutMs) => queryRows(conn, sql, timeoutMs ?? 0, values as unknown[] | undefined)
}

/** The MySQL/MariaDB driver over `mysql2/promise`. */
class Mysql2DriverImpl implements Mysql2Driver {
  readonly dialect = 'mysql' as const
  readonly name = 'mysql2'
  readonly #lib: Mysql2Module
  readonly #probeMemo: ProbeMemo = new Map()
  readonly #known: ReadonlySet<string>

  constructor(options: Mysql2DriverOptions) {
    this.#lib = options.mysql2 ?? mysql2
    const extra = options.extraPoolOptions ?? []
    if (!Array.isArray(extra) || !extra.every((k) => typeof k === 'string'))
      throw new ConfigError('extraPoolOptions', 'expected an array of option names')
    this.#known = knownMysql2PoolOptions(extra)
  }

  checkPoolOptions(pool: Readonly<Record<string, unknown>>, path: string): void {
    checkMysql2PoolOptions(pool, (key) => keyPath(path, key), this.#known)
  }

  createPool(node: DriverNodeOptions, onError: (err: unknown) => void = noop): DriverPool<PoolConnection> {
    checkMysql2PoolOptions(node.pool, (key) => `pool.${key} (node "${node.name}")`, this.#known)
    return new Mysql2NodePool(this.#lib, node, onError)
  }

  async execute(
    conn: PoolConnection,
    stmt: string,
    params: readonly unknown[] | undefined,
  ): Promise<QueryResult & Mysql2ResultFields> {
    // No client-side timeout: the core bounds statements by queryTimeoutMs and cancels them (`cancel`).
    const options = queryOptions(stmt, params, 0)
    const [result, fields] = isPrepared(stmt) ? await conn.execute(options) : await conn.query(options)
    noteReply(coreOf(conn), result, fields)
    return toQueryResult(result, fields)
  }

  /**
   * The hot path of plain text statements: mysql2's callback API on the core connection, with no
   * promise wrapper and no per-query stack capture (the router appends the caller's stack to
   * errors). Query options objects (the pool facade's, prepared ones with `execute`) as well.
   */
  executeCallback(
    conn: PoolConnection,
    stmt: Statement,
    params: readonly unknown[] | undefined,
    cb: (err: unknown, result?: QueryResult & Mysql2ResultFields) => void,
  ): void {
    const core = coreOf(conn)
    const done = (err: unknown, result?: unknown, fields?: unknown): void => {
      if (err) cb(err)
      else {
        noteReply(core, result, fields)
        cb(undefined, toQueryResult(result, fields))
      }
    }
    if (typeof stmt === 'string') {
      if (params === undefined) core.query(stmt, done as QueryCallback)
      else core.query(stmt, params, done as QueryCallback)
    } else if (stmt instanceof PreparedText) {
      // The pool facade's plain `execute(sql, values)`: mysql2's text form, no options object.
      core.execute(stmt.sql, params as unknown[] | undefined, done as QueryCallback)
    } else {
      // A query options object (the pool facade's statements with options): mysql2's callback
      // API too, with `execute` (prepared) for one marked by `asPrepared`.
      const options = queryOptions(stmt, params, 0)
      if (isPrepared(stmt)) core.execute(options, done as QueryCallback)
      else core.query(options, done as QueryCallback)
    }
  }

  probe(node: DriverNodeOptions, signal: AbortSignal): Promise<ProbeResult> {
    return probeNode(this.#lib, node, signal, this.#probeMemo)
  }

  createProber(node: DriverNodeOptions, options: { readonly maxAgeMs: number }): DriverProber {
    return new KeptConnectionProber(mysqlProbeOps(this.#lib, node, this.#probeMemo), options.maxAgeMs)
  }

  positionReached(replay: string, target: string): boolean {
    return gtidReached(replay, target)
  }

  /**
   * The GTIDs the server reported with the replies on `conn` since the last call (session
   * tracking, turned on as each connection opens: MariaDB `last_gtid`, MySQL `OWN_GTID`), merged;
   * `undefined` when none did.
   */
  takeReplyPosition(conn: PoolConnection): string | undefined {
    return takeReplyPosition(coreOf(conn))
  }

  mergePositions(a: string, b: string): string | undefined {
    return mergeGtidPositions(a, b)
  }

  async positionAfterWrite(conn: PoolConnection): Promise<string> {
    const core = coreOf(conn)
    return positionAfterWrite(rowsRunner(conn), await isMariaDb(conn, core), queryTimeoutOf(core))
  }

  async waitForPosition(
    conn: PoolConnection,
    target: string,
    timeoutMs: number,
  ): Promise<string | undefined> {
    const core = coreOf(conn)
    return waitForPosition(
      rowsRunner(conn),
      await isMariaDb(conn, core),
      target,
      timeoutMs,
      queryTimeoutOf(core),
    )
  }

  beginSql(options: BeginOptions): readonly string[] {
    return beginStatements(options)
  }

  savepointSql(name: string, op: 'create' | 'release' | 'rollback'): string {
    return savepointSql(name, op)
  }

  cancel(conn: PoolConnection, node: DriverNodeOptions, signal: AbortSignal): Promise<boolean> {
    return cancelMysqlQuery(this.#lib, conn, node, signal, this.#probeMemo)
  }

  classify(err: unknown): ErrorClass {
    return classifyMysqlError(err)
  }

  readOnlySessionLost(conn: PoolConnection): boolean {
    return isTainted(coreOf(conn))
  }

  facade(host: FacadeHost<PoolConnection>): Mysql2RouterPool {
    return createMysql2PoolFacade(this.#lib, host)
  }
}

/**
 * The MySQL/MariaDB driver for routemate, over `mysql2` (an optional peer dependency): one
 * `mysql2/promise` pool per node (plus a read-only one on the primary for `readOnly` reads that
 * fall back to it, whose connections run `SET SESSION TRANSACTION READ ONLY`), probes reading
 * `@@read_only` and GTID positions, and `router.pool()` as a mysql2 pool look-alike for Kysely and
 * Drizzle.
 *
 * - URL: `mysql://` or `mariadb://user:password@host:3306/database?charset=utf8mb4`; query
 *   parameters set mysql2 options by their mysql2 names (`charset`, `timezone`, `ssl=true`,
 *   `connectionLimit`...; an unknown one throws a `ConfigError` naming the node). Then
 *   `connectTimeout` comes from `connectTimeoutMs`, and each node's `pool` options go to mysql2's
 *   `createPool` last (default `connectionLimit` 10). Unknown `pool` keys are a `ConfigError`
 *   with a "did you mean" (mysql2 itself would only warn on the console).
 * - Checkout: mysql2's pool has no checkout timeout; a checkout of a full pool waits until a
 *   connection is released (or the node is marked down). Its `queueLimit` bounds the waiting
 *   checkouts and `waitForConnections: false` fails them at once: either rejects with a
 *   `PoolExhaustedError` (`reason` `queue-full`, mysql2's error as `cause`), which does not count
 *   against the node's health and is not retried on another node.
 * - Results: a SELECT gives `{ rows, rowCount: rows.length, fields }`; a write gives `{ rows: [],
 *   rowCount: affectedRows, insertId, affectedRows, changedRows, info, warningStatus }`; several
 *   result sets give `{ rows: results, rowCount: null, fields }`. Statements run with `query`
 *   (text protocol, so any statement works); a mysql2 options object (`{ sql, values, rowsAsArray,
 *   typeCast... }`) is accepted as the statement.
 * - `queryTimeoutMs`: the router times each statement and, when it passes, runs `KILL QUERY` on
 *   its connection id from a short-lived connection (`cancel`); the statement fails with 1317 on
 *   the server and the caller gets a `QueryTimeoutError`; the connection is kept. No mysql2
 *   `timeout` is set on statements (a statement's own `timeout` option still applies); the
 *   driver's few internal statements (GTID positions) keep `queryTimeoutMs` as mysql2 `timeout`.
 * - Transactions: `START TRANSACTION [READ ONLY]`, an isolation level is set by a preceding
 *   `SET TRANSACTION ISOLATION LEVEL` (`beginSql` returns both).
 * - Replication state needs a privilege: grant the application user `REPLICATION CLIENT` (MySQL)
 *   or `SLAVE MONITOR` (MariaDB 10.5.9+). Without it, probes still read role and position, and
 *   `replicating` / `reportedLagMs` stay unknown.
 * - Positions are GTIDs (`positionReached` = {@link gtidReached}): read-your-writes by position
 *   needs MariaDB with a binary log on the primary, or MySQL with `gtid_mode=ON` (otherwise a
 *   MySQL probe reports no position). `waitForPosition` uses `MASTER_GTID_WAIT` on MariaDB and
 *   polls `@@gtid_executed` on MySQL.
 * - A session's write needs no position query: each new connection of a writable pool turns on
 *   GTID session tracking (MariaDB: `last_gtid` added to `session_track_system_variables`; MySQL:
 *   `session_track_gtids = OWN_GTID`), queued before its first statement, and the GTID comes back
 *   in the write's OK packet (`takeReplyPosition`). Not with `resetOnRelease: true` (a reset turns
 *   it off): positions are then read lazily, as when a server refuses the setting.
 *
 * @example
 * ```ts
 * import { createRouter } from 'routemate'
 * import { mysql2Driver } from 'routemate/mysql2'
 * const router = createRouter({ driver: mysql2Driver(), primary: 'mysql://app:pw@db1/app', replicas: ['mysql://app:pw@db2/app'] })
 * const { rows } = await router.readOnly(() => router.query('SELECT * FROM users WHERE id = ?', [1]))
 * ```
 */
export function mysql2Driver(options: Mysql2DriverOptions = {}): Mysql2Driver {
  return new Mysql2DriverImpl(options)
}
