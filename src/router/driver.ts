import type { DriverNodeOptions, DriverProber, NodeRole, ProbeResult } from '../driver/probe-contract.js'
import type { FacadeHost } from './facade-host.js'
import type { Statement } from './statement.js'

/**
 * The seam between the router core and a database client library. Everything dialect-specific
 * (SQL for probes and transactions, error classification, the pool facade) lives behind it, so the
 * core never imports `pg` or `mysql2`. Pools and connections are described by their shape only.
 */

/** The SQL dialect family a driver speaks. */
export type Dialect = 'postgres' | 'mysql'

export type { DriverNodeOptions, DriverProber, NodeRole, ProbeResult }

/** How an error thrown by the database client should be treated by the router. */
export type ErrorClass =
  /** The connection failed, was reset or refused, or the server is gone: counts against the node's health; reads may be retried elsewhere. */
  | 'connection'
  /**
   * A client-side timeout passed (the driver's own, e.g. a `query_timeout` / `timeout` option the
   * application set; routemate's `queryTimeoutMs` raises `QueryTimeoutError`, classified the same):
   * evidence about the statement, not the node — never counts against its health, never retried.
   * The connection is closed (the server may still be running the statement).
   */
  | 'timeout'
  /** The server refused a write in a read-only transaction or on a standby. */
  | 'read-only'
  /** Anything else (syntax, constraint, permission, an exhausted pool...): the node is fine; never retried. */
  | 'statement'

/** A connection pool for one node, as the core sees it. */
export interface DriverPool<Conn = unknown> {
  /** Checks a connection out (connecting if needed, bounded by `connectTimeoutMs`). */
  acquire(): Promise<Conn>
  /**
   * Optional callback form of `acquire`, used on the hot path when present (no promise per query).
   * `err` is `null` or `undefined` on success; the callback is called exactly once.
   */
  acquireCallback?(cb: (err: unknown, conn?: Conn) => void): void
  /** Returns a connection; with `destroy`, closes it instead of keeping it. */
  release(conn: Conn, destroy: boolean): void
  /** Closes the connection's socket at once, so a query pending on it fails now (used to abort work on a node marked down). */
  destroy(conn: Conn): void
  /** Ends the pool: closes idle connections and waits for checked-out ones to be released. */
  end(): Promise<void>
  /** Pool occupancy. */
  counts(): { total: number; idle: number; waiting: number }
}

/** The uniform result of `router.query` / `tx.query`: driver extras (fields, insertId...) may be added. */
export interface QueryResult<Row = Record<string, unknown>> {
  rows: Row[]
  rowCount: number | null
  [extra: string]: unknown
}

/** Options of a transaction's `BEGIN`. */
export interface BeginOptions {
  readonly readOnly: boolean
  readonly isolation?: IsolationLevel | undefined
}

/** SQL isolation levels. */
export type IsolationLevel = 'read uncommitted' | 'read committed' | 'repeatable read' | 'serializable'

/**
 * A database driver for routemate. `routemate/pg` and `routemate/mysql2` provide one each; a custom
 * driver implements this interface.
 *
 * Type parameters: `Conn`, the driver's connection; `Pool`, the type of its pool facade
 * (`router.pool()`: `pg.Pool` for `routemate/pg`); `Extras`, the fields its results carry beside
 * `rows` and `rowCount` (`fields`, `command` for pg; `insertId`, `affectedRows` for mysql2), which
 * `router.query` and `tx.query` results are typed with. A `Router` takes both from its driver.
 * Defaults: `unknown` (an untyped facade, no typed extras), so a driver written as `Driver<Conn>`
 * keeps compiling.
 *
 * @example
 * ```ts
 * const driver: Driver<MyConn, MyPool, { command: string }> = { dialect: 'postgres', name: 'mine', ... }
 * createRouter({ driver, primary: URL }).pool() // MyPool
 * ```
 */
export interface Driver<Conn = unknown, Pool = unknown, Extras = unknown> {
  /** SQL dialect family. */
  readonly dialect: Dialect
  /** Short driver name, e.g. `pg`. */
  readonly name: string
  /**
   * Creates the pool of one node. Must attach `error` listeners so an idle or checked-out
   * connection dying never crashes the process; such errors are passed to `onError`.
   */
  createPool(node: DriverNodeOptions, onError: (err: unknown) => void): DriverPool<Conn>
  /**
   * Optional: checks one `pool` options object as written at `path` (`pool`, `shards.s1.pool`,
   * `replicas[1].pool`; `replica.pool` for `addReplica`), throwing a `ConfigError` whose path names
   * the offending key (`replicas[1].pool.idleTimeoutMilis`) for an unknown option ("unknown
   * option ..." with a "did you mean") or a bad value. `createRouter` calls it for every `pool`
   * object before any pool is created; `createPool` gets the merged options and may check again.
   */
  checkPoolOptions?(pool: Readonly<Record<string, unknown>>, path: string): void
  /** Runs one statement (SQL text, or a driver query config object) on a checked-out connection. */
  execute(conn: Conn, stmt: Statement, params: readonly unknown[] | undefined): Promise<QueryResult & Extras>
  /**
   * Optional callback form of `execute`, used on the hot path when present. `err` is `null` or
   * `undefined` on success; the callback is called exactly once.
   */
  executeCallback?(
    conn: Conn,
    stmt: Statement,
    params: readonly unknown[] | undefined,
    cb: (err: unknown, result?: QueryResult & Extras) => void,
  ): void
  /**
   * Probes a node on a fresh connection (not from the pool), reading its role and replication
   * position. Must give up and close everything when `signal` aborts (the core's hard deadline).
   */
  probe(node: DriverNodeOptions, signal: AbortSignal): Promise<ProbeResult>
  /**
   * Optional: a prober for one node that keeps its connection between probes (a probe is then one
   * round trip, not a new connection), replaced when older than `maxAgeMs`. Same contract as
   * `probe` for each call; the core calls `close()` when the node is removed or the router closes.
   * Without it (or with `healthCheck.probeConnectionMaxAgeMs: 0`) every probe calls `probe`.
   * `KeptConnectionProber` (in `routemate`'s health module) implements the bookkeeping.
   */
  createProber?(node: DriverNodeOptions, options: { readonly maxAgeMs: number }): DriverProber
  /** Whether replica position `replay` has reached primary position `target`. */
  positionReached(replay: string, target: string): boolean
  /**
   * Reads the primary's current position on one of its connections: any position read this way
   * after a write finished covers that write. Read-your-writes reads it lazily (when a session that
   * wrote first reads, one read shared by every session whose write finished before it; see
   * `PrimaryPosition`) and
   * to check the positions of consistency tokens.
   */
  positionAfterWrite(conn: Conn): Promise<string>
  /**
   * Optional: the position of the writes run on `conn` since the last call, as the server reported
   * it with their replies (MySQL `session_track_gtids`, MariaDB `last_gtid` session tracking);
   * `undefined` when no reply carried one. Each call starts a new gathering. With it (and
   * `mergePositions`), a session's write needs no position query at all. The core calls it before
   * a session's write (discarding what an earlier checkout left) and after it.
   */
  takeReplyPosition?(conn: Conn): string | undefined
  /**
   * Optional (required with `takeReplyPosition`): one position reached exactly when both `a` and
   * `b` are (per-domain maximum, GTID set union, or the later LSN); `undefined` when they cannot be
   * merged.
   */
  mergePositions?(a: string, b: string): string | undefined
  /**
   * On a replica's connection: waits up to `timeoutMs` (0 = just check) until its replay position
   * reaches `target`; resolves to the replay position seen last, or `undefined` if unknown.
   */
  waitForPosition(conn: Conn, target: string, timeoutMs: number): Promise<string | undefined>
  /** SQL to begin a transaction: one statement, or several run in order (MySQL sets the isolation level first). */
  beginSql(options: BeginOptions): string | readonly string[]
  /** SQL for savepoints: create, release, roll back to. */
  savepointSql(name: string, op: 'create' | 'release' | 'rollback'): string
  /**
   * Optional: whether a connection of a read-only pool may have stopped being read-only since it
   * was connected (a routine or function changed its session). The pool facade then refuses
   * further statements on it; the driver's pool closes it on release.
   */
  readOnlySessionLost?(conn: Conn): boolean
  /**
   * Optional: asks the server to cancel the statement running on `conn` (PostgreSQL: a cancel
   * request for the connection's backend over a new socket; MySQL/MariaDB: `KILL QUERY` on its
   * connection id, from a short-lived connection). Called by the core when a statement passes
   * `queryTimeoutMs`; `node` carries the node's connection options (`connectTimeoutMs` is the
   * core's deadline for the whole cancellation). Resolves `true` once the server accepted the
   * request — after that, the cancellation can no longer hit a later statement on `conn` —
   * and `false` when it could not be delivered. Never rejects; gives up (closing its socket) when
   * `signal` aborts. Without it, a timed-out statement's connection is closed.
   */
  cancel?(conn: Conn, node: DriverNodeOptions, signal: AbortSignal): Promise<boolean>
  /** Classifies an error thrown by this driver. */
  classify(err: unknown): ErrorClass
  /** Builds the driver's native-looking pool facade (`router.pool()`), e.g. a `pg.Pool` look-alike. */
  facade?(host: FacadeHost<Conn>): Pool
}

/** Any driver, whatever its connection, pool facade and result types (the bound of `Router`'s type parameter). */
// biome-ignore lint/suspicious/noExplicitAny: a bound that every Driver instantiation satisfies
export type AnyDriver = Driver<any, any, any>

/**
 * The type of `router.pool()` for a driver: what its `facade` returns (`unknown` without one).
 *
 * @example
 * ```ts
 * type P = DriverPoolOf<ReturnType<typeof pgDriver>> // pg.Pool
 * ```
 */
export type DriverPoolOf<D> = D extends Driver<infer _Conn, infer Pool, infer _Extras> ? Pool : unknown

/**
 * The result fields a driver adds to `rows` and `rowCount` (`unknown`: none typed).
 *
 * @example
 * ```ts
 * type E = DriverExtrasOf<ReturnType<typeof pgDriver>> // { command: string; oid: number; fields: pg.FieldDef[] }
 * ```
 */
export type DriverExtrasOf<D> = D extends Driver<infer _Conn, infer _Pool, infer Extras> ? Extras : unknown

/**
 * The type of `router.sql()` for a driver: its pool facade when that is a tagged-template `sql`
 * (postgres.js's, with `routemate/postgres`), else `never` (`router.sql()` then throws).
 *
 * @example
 * ```ts
 * type S = DriverSqlOf<ReturnType<typeof postgresDriver>> // postgres.Sql
 * ```
 */
export type DriverSqlOf<D> =
  DriverPoolOf<D> extends (strings: TemplateStringsArray, ...args: never[]) => PromiseLike<unknown>
    ? DriverPoolOf<D>
    : never
