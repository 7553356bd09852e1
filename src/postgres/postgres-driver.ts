import postgres from 'postgres'
import { ConfigError } from '../errors/config-error.js'
import { KeptConnectionProber, type ProbeConnectionOps } from '../health/kept-connection-prober.js'
import { sendCancelRequest } from '../pg/pg-cancel.js'
import { lsnReached } from '../pg/pg-position.js'
import {
  PG_INSERT_LSN_SQL,
  PG_PROBE_SQL,
  PG_REPLAY_LSN_SQL,
  pgBeginSql,
  pgSavepointSql,
  waitForLsn,
} from '../pg/pg-sql.js'
import { keyPath } from '../router/config-checks.js'
import type {
  BeginOptions,
  Driver,
  DriverNodeOptions,
  DriverPool,
  DriverProber,
  ProbeResult,
  QueryResult,
} from '../router/driver.js'
import type { FacadeHost } from '../router/facade-host.js'
import type { Statement } from '../router/statement.js'
import {
  closeConnection,
  openConnection,
  type ParsedOptions,
  type PgJsQuery,
  type PostgresConn,
  type PostgresLib,
  parseNodeOptions,
  readOnlyIntact,
} from './postgres-connection.js'
import { classifyPostgresError, connectionLost } from './postgres-errors.js'
import { PostgresNodePool } from './postgres-node-pool.js'
import { checkPostgresPoolOptions, connectionOptionsOf } from './postgres-options.js'
import {
  connHandler,
  createRoutedSql,
  isRoutedStatement,
  type RoutedSql,
  type RoutedStatement,
  runRoutedStatement,
} from './postgres-sql-facade.js'

/** Options of {@link postgresDriver}. */
export interface PostgresDriverOptions {
  /** The `postgres` module to use (e.g. to share one with your ORM). Default: the `postgres` package routemate resolves. */
  postgres?: PostgresLib
  /**
   * postgres.js custom types (`postgres({ types })`), for every node and for `router.sql()`'s
   * helpers (`sql.typed.name(value)`). Default: none.
   */
  types?: Record<string, postgres.PostgresType>
  /** postgres.js `transform` (column/value/row names and values), for every node. Default: none. */
  transform?: postgres.Options<Record<string, postgres.PostgresType>>['transform']
}

/**
 * What `router.query` and `tx.query` results carry beside `rows` and `rowCount` with the
 * postgres.js driver: `command` (`'SELECT'`, `'UPDATE'`...) and `columns` (postgres.js's column
 * descriptions). `rows` is postgres.js's own result array.
 */
export interface PostgresResultFields {
  /** The command tag's verb. */
  command: string
  /** The result's columns, as postgres.js describes them. */
  columns: postgres.ColumnList<string> | undefined
}

/**
 * The type of the postgres.js driver ({@link postgresDriver}): its connections are one-connection
 * postgres.js instances, `router.pool()` and `router.sql()` are a routed postgres.js `sql`
 * ({@link RoutedSql}). Name it where a router's type is written out: `Router<PostgresDriver>`.
 *
 * @example
 * ```ts
 * import type { Router } from 'routemate'
 * import type { PostgresDriver } from 'routemate/postgres'
 * function repo(router: Router<PostgresDriver>) { return drizzle(router.sql()) }
 * ```
 */
export type PostgresDriver = Driver<PostgresConn, RoutedSql, PostgresResultFields>

/** `application_name` of probe connections (unless the node's `connection` sets one), for `pg_stat_activity`. */
const PROBE_APPLICATION_NAME = 'routemate-probe'

const noop = (): void => {}

type Rows = Array<Record<string, unknown>> & {
  count: number | null
  command: string
  columns?: postgres.ColumnList<string>
}

/** A postgres.js query as `executeCallback` sends it when the node's `debug` option is set (postgres.js's own fields). */
interface Q extends PgJsQuery {
  executed: boolean
  active: boolean
  handler: (q: Q) => void
  resolve: (x: unknown) => void
  reject: (e: unknown) => void
  /** Where its outcome goes (see `executeCallback`). */
  rmDone?: Done | undefined
}

type Done = (err: unknown, result?: QueryResult & PostgresResultFields) => void

/** A query sent by `executeCallback` (a {@link TextQuery}, or postgres.js's own `Query` with `debug`). */
interface Reporting {
  active: boolean
  rmDone?: Done | undefined
}

/** postgres.js's options of an `sql.unsafe(text, args)` query: simple protocol without arguments. */
const SIMPLE = Object.freeze({ prepare: false, simple: true })
const EXTENDED = Object.freeze({ prepare: false, simple: false })

/**
 * A statement of `router.query` / `tx.query` as postgres.js's connection runs it: the fields its
 * connection reads and writes on a query made by `sql.unsafe(text, args)` (same options, same
 * messages), without what a postgres.js `Query` is besides — a promise (with Node 20's promise
 * hooks on, since routemate's scopes use an `AsyncLocalStorage`, each costs hook calls), its
 * resolve/reject closures, the spread options object. It reports to the router's callback once
 * (`textResolve` / `textReject`). Every field is set in the constructor (postgres.js's connection
 * assigns most of them), so all its instances share one shape.
 */
class TextQuery {
  readonly tagged = false
  readonly strings: readonly string[]
  readonly args: readonly unknown[]
  readonly options: { readonly prepare: false; readonly simple: boolean }
  readonly handler: (q: TextQuery) => void
  readonly canceller = null
  readonly origin = ''
  readonly executed = true
  state: { pid: number | null; secret: number | null } | null = null
  statement: unknown = null
  active = false
  cancelled = null
  signature: unknown = ''
  prepare: unknown = undefined
  prepared: unknown = undefined
  string: unknown = undefined
  parameters: unknown = undefined
  describeFirst: unknown = undefined
  parsing: unknown = undefined
  rmDone: Done | undefined

  constructor(text: string, args: readonly unknown[], handler: (q: TextQuery) => void, done: Done) {
    this.strings = [text]
    this.args = args
    this.options = args.length === 0 ? SIMPLE : EXTENDED
    this.handler = handler
    this.rmDone = done
  }

  resolve(rows: unknown): void {
    textResolve.call(this, rows)
  }

  reject(err: unknown): void {
    textReject.call(this, err)
  }

  /** The router cancels with a cancel request of its own (`PostgresDriver.cancel`). */
  cancel(): void {}
}

const NO_ARGS: readonly unknown[] = Object.freeze([])

/**
 * `resolve` and `reject` of a query sent by `executeCallback` (postgres.js calls them as its
 * methods): the outcome goes to the router's callback once — postgres.js may report a query failed
 * twice (a connection lost while connecting, then closed). Shared: no closure per statement.
 */
function textResolve(this: Reporting, rows: unknown): void {
  this.active = false
  const done = this.rmDone
  this.rmDone = undefined
  done?.(null, resultOf(rows as Rows))
}

function textReject(this: Reporting, err: unknown): void {
  this.active = false
  const done = this.rmDone
  this.rmDone = undefined
  done?.(err ?? new Error('query failed'))
}

function resultOf(rows: Rows): QueryResult & PostgresResultFields {
  return { rows, rowCount: rows.count ?? rows.length, command: rows.command, columns: rows.columns }
}

/** The PostgreSQL driver over postgres.js. */
class PostgresDriverImpl implements PostgresDriver {
  readonly dialect = 'postgres' as const
  readonly name = 'postgres.js'
  readonly #lib: PostgresLib
  /** An instance that never connects: the parsers, serializers and helpers every node and `router.sql()` share. */
  readonly #template: postgres.Sql
  readonly #base: Record<string, unknown>
  readonly #parsed = new Map<string, ParsedOptions>()
  /** Whether a connection fetched the server's array types into the shared parsers (once per driver). */
  readonly #types = { fetched: false }

  constructor(options: PostgresDriverOptions) {
    this.#lib = options.postgres ?? postgres
    if (typeof this.#lib !== 'function') throw new ConfigError('postgres', 'expected the postgres.js module')
    this.#base = {
      ...(options.types !== undefined ? { types: options.types } : {}),
      ...(options.transform !== undefined ? { transform: options.transform } : {}),
    }
    this.#template = this.#lib({ ...this.#base, max: 1, no_subscribe: true } as postgres.Options<
      Record<string, postgres.PostgresType>
    >)
  }

  /** The parsed postgres.js options of a node (cached per URL and options: reused by its pools and prober). */
  #nodeOptions(node: DriverNodeOptions): ParsedOptions {
    const key = `${node.url}\u0000${JSON.stringify(node.pool, (_k, v) => (typeof v === 'function' ? String(v) : v))}`
    let parsed = this.#parsed.get(key)
    if (parsed === undefined) {
      const { parsers, serializers } = this.#template.options as unknown as {
        parsers: Record<string, unknown>
        serializers: Record<string, unknown>
      }
      const shared = { parsers, serializers, types: this.#types }
      parsed = parseNodeOptions(
        this.#lib,
        node.url,
        { ...this.#base, ...connectionOptionsOf(node.pool), no_subscribe: true },
        shared,
      )
      this.#parsed.set(key, parsed)
    }
    return parsed
  }

  checkPoolOptions(pool: Readonly<Record<string, unknown>>, path: string): void {
    checkPostgresPoolOptions(pool, (key) => keyPath(path, key))
  }

  createPool(node: DriverNodeOptions, onError: (err: unknown) => void = noop): DriverPool<PostgresConn> {
    const options = checkPostgresPoolOptions(node.pool, (key) => `pool.${key} (node "${node.name}")`)
    return new PostgresNodePool(this.#lib, this.#nodeOptions(node), node, options, onError)
  }

  execute(
    conn: PostgresConn,
    stmt: Statement,
    params: readonly unknown[] | undefined,
  ): Promise<QueryResult & PostgresResultFields> {
    return new Promise((resolve, reject) => {
      this.executeCallback(conn, stmt, params, (err, result) => {
        if (err == null) resolve(result as QueryResult & PostgresResultFields)
        else reject(err)
      })
    })
  }

  /**
   * Runs one statement on `conn` without a promise: the postgres.js query is handed to the
   * connection's own handler at once (not when awaited) and reports to `cb`. A routed
   * `router.sql()` query ({@link RoutedStatement}) gets postgres.js's result as it is.
   */
  executeCallback(
    conn: PostgresConn,
    stmt: Statement,
    params: readonly unknown[] | undefined,
    cb: (err: unknown, result?: QueryResult & PostgresResultFields) => void,
  ): void {
    if (typeof stmt !== 'string') {
      if (isRoutedStatement(stmt))
        runRoutedStatement(conn, stmt, cb as (err: unknown, result?: unknown) => void)
      else cb(new TypeError('the postgres.js driver runs SQL text only (use router.sql() for more)'))
      return
    }
    if (conn.broken) {
      cb(connectionLost())
      return
    }
    const handler = connHandler(conn) as unknown as ((q: TextQuery) => void) & { debug?: unknown }
    if (!handler.debug) {
      const q = new TextQuery(stmt, params ?? NO_ARGS, handler, cb)
      conn.current = q as unknown as PgJsQuery
      handler(q)
      return
    }
    // postgres.js's `debug`: its own query, which records where it was made for its errors.
    const q = conn.sql.unsafe(stmt, (params ?? []) as postgres.ParameterOrJSON<never>[]) as unknown as Q
    q.executed = true
    q.rmDone = cb
    q.resolve = textResolve
    q.reject = textReject
    conn.current = q
    q.handler(q)
  }

  #probeOps(node: DriverNodeOptions): ProbeConnectionOps<PostgresConn> {
    const lib = this.#lib
    const parsed = this.#nodeOptions(node)
    const own = (node.pool.connection ?? {}) as Record<string, unknown>
    const startup: Record<string, string> =
      own.application_name === undefined ? { application_name: PROBE_APPLICATION_NAME } : {}
    return {
      connect: (signal) =>
        openConnection(
          lib,
          parsed,
          { connectTimeoutMs: node.connectTimeoutMs, startup, noTypes: true },
          signal,
        ),
      async probe(conn) {
        if (conn.broken) throw connectionLost()
        const rows = (await conn.sql.unsafe(PG_PROBE_SQL)) as unknown as Array<{
          in_recovery: boolean
          lsn: string | null
        }>
        const row = rows[0]
        if (row === undefined) throw new Error('probe returned no row')
        return {
          role: row.in_recovery ? 'replica' : 'primary',
          ...(row.lsn !== null ? { position: row.lsn } : {}),
        }
      },
      broken: (conn) => conn.broken,
      setActive: (conn, active) => {
        if (active) conn.socket?.ref()
        else conn.socket?.unref()
      },
      close: (conn) => closeConnection(conn, false),
      destroy: (conn) => closeConnection(conn, true),
    }
  }

  async probe(node: DriverNodeOptions, signal: AbortSignal): Promise<ProbeResult> {
    const ops = this.#probeOps(node)
    const conn = await ops.connect(signal)
    const abort = () => ops.destroy(conn)
    signal.addEventListener('abort', abort, { once: true })
    try {
      return await ops.probe(conn, signal)
    } finally {
      signal.removeEventListener('abort', abort)
      if (signal.aborted) ops.destroy(conn)
      else ops.close(conn)
    }
  }

  createProber(node: DriverNodeOptions, options: { readonly maxAgeMs: number }): DriverProber {
    return new KeptConnectionProber(this.#probeOps(node), options.maxAgeMs)
  }

  positionReached(replay: string, target: string): boolean {
    return lsnReached(replay, target)
  }

  async positionAfterWrite(conn: PostgresConn): Promise<string> {
    const rows = (await conn.sql.unsafe(PG_INSERT_LSN_SQL)) as unknown as Array<{ lsn: string }>
    const lsn = rows[0]?.lsn
    if (lsn === undefined) throw new Error('pg_current_wal_insert_lsn() returned no row')
    return lsn
  }

  waitForPosition(conn: PostgresConn, target: string, timeoutMs: number): Promise<string | undefined> {
    const read = async () =>
      ((await conn.sql.unsafe(PG_REPLAY_LSN_SQL)) as unknown as Array<{ lsn: string | null }>)[0]?.lsn ??
      undefined
    return waitForLsn(read, target, timeoutMs)
  }

  beginSql(options: BeginOptions): string {
    return pgBeginSql(options)
  }

  savepointSql(name: string, op: 'create' | 'release' | 'rollback'): string {
    return pgSavepointSql(name, op)
  }

  cancel(conn: PostgresConn, _node: DriverNodeOptions, signal: AbortSignal): Promise<boolean> {
    const state = conn.current?.state
    if (state == null || typeof state.pid !== 'number' || typeof state.secret !== 'number')
      return Promise.resolve(false)
    return sendCancelRequest(
      { pid: state.pid, secret: state.secret, host: conn.host, port: conn.port },
      signal,
    )
  }

  classify(err: unknown) {
    return classifyPostgresError(err)
  }

  readOnlySessionLost(conn: PostgresConn): boolean {
    return !readOnlyIntact(conn)
  }

  facade(host: FacadeHost<PostgresConn>): RoutedSql {
    return createRoutedSql(this.#template, host)
  }
}

/**
 * The PostgreSQL driver for routemate over postgres.js (the `postgres` package, an optional peer
 * dependency). Each node has a pool of postgres.js connections (each one a one-connection
 * postgres.js instance, checked out by one caller at a time; plus a read-only pool on the primary
 * for `readOnly` reads that fall back to it), probes with `pg_is_in_recovery()` on a kept
 * connection, WAL LSN positions, and `router.sql()` (also `router.pool()`) as a postgres.js `sql`
 * routed by the caller's scope — for `drizzle-orm/postgres-js` and `kysely-postgres-js`.
 * `queryTimeoutMs` is enforced by the router with a PostgreSQL cancel request. A node's `pool`
 * options take postgres.js's names: `max` (10), `idle_timeout` (s, default none), `max_lifetime`
 * (s, default none), plus `maxWaiting` (unbounded) and `connectionTimeoutMillis` (0: how long a
 * checkout of a full pool may wait, then `PoolExhaustedError`); and the connection options `ssl`,
 * `sslnegotiation`, `connection` (startup parameters), `prepare` (true), `fetch_types` (true),
 * `keep_alive`, `max_pipeline`, `onnotice`, `onparameter`, `debug`, `password`. The server,
 * database and user come from the URL only; `types` and `transform` are the driver's options.
 *
 * @example
 * ```ts
 * import { createRouter } from 'routemate'
 * import { postgresDriver } from 'routemate/postgres'
 * const router = createRouter({ driver: postgresDriver(), primary: 'postgres://app@db1/app', replicas: ['postgres://app@db2/app'] })
 * const sql = router.sql()
 * const users = await router.readOnly(() => sql`select * from users where id = ${1}`)
 * ```
 */
export function postgresDriver(options: PostgresDriverOptions = {}): PostgresDriver {
  return new PostgresDriverImpl(options)
}
