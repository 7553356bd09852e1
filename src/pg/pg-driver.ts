import pg from 'pg'
import { ConfigError } from '../errors/config-error.js'
import { KeptConnectionProber } from '../health/kept-connection-prober.js'
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
import { cancelPgQuery } from './pg-cancel.js'
import { classifyPgError } from './pg-errors.js'
import { checkPgClient, type PgSupport } from './pg-internals.js'
import { createPgNodePool } from './pg-node-pool.js'
import { createPgPoolFacade } from './pg-pool-facade.js'
import { checkPgPoolOptions, knownPgPoolOptions } from './pg-pool-options.js'
import { lsnReached } from './pg-position.js'
import { pgProbeOps } from './pg-probe.js'
import type { ReadOnlySessionClient } from './pg-read-only-session.js'
import { PG_INSERT_LSN_SQL, PG_REPLAY_LSN_SQL, pgBeginSql, pgSavepointSql, waitForLsn } from './pg-sql.js'

/** Options of {@link pgDriver}. */
export interface PgDriverOptions {
  /**
   * The `pg` module to use (e.g. to share one with your ORM). Default: the `pg` package routemate
   * resolves. Its JavaScript client is required: `pg.native` is rejected (`ConfigError`).
   */
  pg?: typeof pg
  /**
   * Extra option names a node's `pool` may use, passed to each `pg.Client` as they are: an
   * escape hatch for a client option of a pg newer than routemate knows. Any other unknown
   * `pool` key is a `ConfigError` (with a "did you mean"). Default: none.
   */
  extraPoolOptions?: readonly string[]
}

/**
 * What `router.query` and `tx.query` results carry beside `rows` and `rowCount` with the pg driver:
 * the rest of pg's own `Result`.
 *
 * @example
 * ```ts
 * const r = await router.query('UPDATE users SET name = $1 WHERE id = $2', ['ada', 1])
 * r.command // 'UPDATE'
 * r.fields  // pg.FieldDef[]
 * ```
 */
export type PgResultFields = Pick<pg.QueryResult, 'command' | 'oid' | 'fields'>

/**
 * The type of the pg driver ({@link pgDriver}): its connections are `pg.Client`s, `router.pool()`
 * is a `pg.Pool`, and query results have pg's `fields`, `command` and `oid`. Name it where a
 * router's type is written out: `Router<PgDriver>`.
 *
 * @example
 * ```ts
 * import type { Router } from 'routemate'
 * import type { PgDriver } from 'routemate/pg'
 * function repo(router: Router<PgDriver>) { return drizzle({ client: router.pool() }) }
 * ```
 */
export type PgDriver = Driver<pg.Client, pg.Pool, PgResultFields>

const noop = (): void => {}

/** The PostgreSQL driver over `pg` (node-postgres). */
class PgDriverImpl implements PgDriver {
  readonly dialect = 'postgres' as const
  readonly name = 'pg'
  readonly #pg: typeof pg
  readonly #known: ReadonlySet<string>
  /** What the pg in use supports beyond what routemate requires (checked at construction). */
  readonly support: PgSupport

  constructor(options: PgDriverOptions) {
    this.#pg = options.pg ?? pg
    const extra = options.extraPoolOptions ?? []
    if (!Array.isArray(extra) || !extra.every((k) => typeof k === 'string'))
      throw new ConfigError('extraPoolOptions', 'expected an array of option names')
    this.#known = knownPgPoolOptions(extra)
    this.support = checkPgClient(this.#pg.Client, options.pg === undefined ? 'driver' : 'pg', this.#pg)
  }

  checkPoolOptions(pool: Readonly<Record<string, unknown>>, path: string): void {
    checkPgPoolOptions(pool, (key) => keyPath(path, key), this.#known, this.#pg)
  }

  createPool(node: DriverNodeOptions, onError: (err: unknown) => void = noop): DriverPool<pg.Client> {
    return createPgNodePool(this.#pg, node, onError, this.#known)
  }

  execute(
    conn: pg.Client,
    stmt: Statement,
    params: readonly unknown[] | undefined,
  ): Promise<QueryResult & PgResultFields> {
    return conn.query(stmt as string, params as unknown[] | undefined) as unknown as Promise<
      QueryResult & PgResultFields
    >
  }

  executeCallback(
    conn: pg.Client,
    stmt: Statement,
    params: readonly unknown[] | undefined,
    cb: (err: unknown, result?: QueryResult & PgResultFields) => void,
  ): void {
    // pg calls back with (null | Error, result): the core only checks `err != null`.
    conn.query(
      stmt as string,
      params as unknown[],
      cb as unknown as (err: Error | null, res: pg.QueryResult) => void,
    )
  }

  async probe(node: DriverNodeOptions, signal: AbortSignal): Promise<ProbeResult> {
    const ops = pgProbeOps(this.#pg, node)
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
    return new KeptConnectionProber(pgProbeOps(this.#pg, node), options.maxAgeMs)
  }

  positionReached(replay: string, target: string): boolean {
    return lsnReached(replay, target)
  }

  /**
   * `pg_current_wal_insert_lsn()`, not `pg_current_wal_lsn()`: with `synchronous_commit = off`
   * (settable per transaction) a `COMMIT` returns before its WAL is written, so the write position
   * read after it may still be short of that commit; the insert position never is. Read-your-writes
   * reads it lazily and shared (see `PrimaryPosition.afterWrite`), never once per write.
   */
  async positionAfterWrite(conn: pg.Client): Promise<string> {
    const res = await conn.query<{ lsn: string }>(PG_INSERT_LSN_SQL)
    const lsn = res.rows[0]?.lsn
    if (lsn === undefined) throw new Error('pg_current_wal_insert_lsn() returned no row')
    return lsn
  }

  waitForPosition(conn: pg.Client, target: string, timeoutMs: number): Promise<string | undefined> {
    const read = async () =>
      (await conn.query<{ lsn: string | null }>(PG_REPLAY_LSN_SQL)).rows[0]?.lsn ?? undefined
    return waitForLsn(read, target, timeoutMs)
  }

  beginSql(options: BeginOptions): string {
    return pgBeginSql(options)
  }

  savepointSql(name: string, op: 'create' | 'release' | 'rollback'): string {
    return pgSavepointSql(name, op)
  }

  cancel(conn: pg.Client, _node: DriverNodeOptions, signal: AbortSignal): Promise<boolean> {
    return cancelPgQuery(conn, signal)
  }

  classify(err: unknown) {
    return classifyPgError(err)
  }

  readOnlySessionLost(conn: pg.Client): boolean {
    return (conn as pg.Client & ReadOnlySessionClient).rmSessionReadOnly !== 'on'
  }

  facade(host: FacadeHost<pg.Client>): pg.Pool {
    return createPgPoolFacade(this.#pg, host)
  }
}

/**
 * The PostgreSQL driver for routemate, over `pg` (node-postgres, an optional peer dependency):
 * one lean pool of `pg.Client`s per node (plus a read-only pool on the primary for `readOnly` reads
 * that fall back to it), probes with `pg_is_in_recovery()` on a kept connection, WAL LSN
 * positions, and `router.pool()` as a `pg.Pool` (typed so: see {@link PgDriver}). `queryTimeoutMs` is
 * enforced by the router, which sends a PostgreSQL cancel request for a statement that passes it
 * (`QueryTimeoutError`; the connection is kept); no `query_timeout` is set on the clients. A node's `pool` options take `pg.Pool`'s names
 * and defaults (`max` 10, `min` 0, `idleTimeoutMillis` 10000, `maxUses`, `maxLifetimeSeconds`,
 * `allowExitOnIdle`, `verify`, `onConnect`, `Client`, and `connectionTimeoutMillis` 0: how long a
 * checkout of a full pool may wait, then `PoolExhaustedError`) plus `maxWaiting` (unbounded: how
 * many checkouts may wait); the `pg.Client` options (`ssl`, `password`, `statement_timeout`...)
 * go to each client. Unknown keys are a `ConfigError` with a "did you mean"; the server, port,
 * database and user come from the URL only. A `pool.password` is used when the URL has none.
 * Needs pg's JavaScript client: `pg.native` is rejected (`ConfigError`).
 *
 * @example
 * ```ts
 * import { createRouter } from 'routemate'
 * import { pgDriver } from 'routemate/pg'
 * const router = createRouter({ driver: pgDriver(), primary: 'postgres://app@db1/app', replicas: ['postgres://app@db2/app'] })
 * ```
 */
export function pgDriver(options: PgDriverOptions = {}): PgDriver {
  return new PgDriverImpl(options)
}
