import { EventEmitter } from 'node:events'
import type { FieldPacket, Pool, PoolConnection, QueryOptions } from 'mysql2/promise'
import type { FacadeHost, ScopedConnection } from '../router/facade-host.js'
import type { Statement } from '../router/statement.js'
import { RoutedMysql2Connection } from './mysql2-connection-facade.js'
import { coreOf } from './mysql2-internals.js'
import type { Mysql2Module } from './mysql2-node-pool.js'
import type { RoutedMysql2PromiseConnection } from './mysql2-promise-connection.js'
import { type NativeResult, nativeResult } from './mysql2-result.js'
import { asPrepared, isPlainText, PreparedText, queryOptions } from './mysql2-statement.js'

/** A mysql2-style callback of a pool query. */
export type PoolQueryCallback = (err: Error | null, result?: unknown, fields?: FieldPacket[]) => void

/** A mysql2-style callback of `getConnection` (`connection` is `undefined` when `err` is set, as in mysql2). */
export type GetConnectionCallback = (err: Error | null, connection: RoutedMysql2Connection) => void

/**
 * `router.pool()` of the mysql2 driver: one object that works as both of mysql2's pools, switching
 * style on a trailing callback, and routed by the caller's routemate scope. It is an
 * `EventEmitter`, as Drizzle requires.
 *
 * - Promise style (`mysql2/promise` `Pool`, as Drizzle's `mysql2` driver uses it):
 *   `query(sql, values?)` / `execute(sql, values?)` resolve to mysql2's native `[rows, fields]`
 *   (`[ResultSetHeader, undefined]` for a write); `getConnection()` resolves to a
 *   {@link RoutedMysql2PromiseConnection}; `end()` returns a promise.
 * - Callback style (`mysql2` `Pool`, as Kysely's `MysqlDialect` uses it): `getConnection(cb)`
 *   gives a {@link RoutedMysql2Connection} (`conn.query(sql, values, cb)`,
 *   `conn.query(sql, values).stream()`, `conn.release()`); `query(sql, values, cb)`; `end(cb)`.
 * - `promise()` and `pool` return the object itself, so code that converts between the two styles
 *   keeps working.
 *
 * Pool-level `query`/`execute` go through the router (read-only guard, retries of reads,
 * passive health); `execute` uses prepared statements. `getConnection()` checks out a connection
 * chosen by the scope: inside `router.transaction` it is the transaction's own, whose
 * BEGIN/COMMIT/ROLLBACK become savepoints and whose `release()` leaves it to the transaction.
 * `end()` closes the router.
 *
 * Connections keep their identity: every checkout of one physical connection hands out the same
 * {@link RoutedMysql2Connection} (and the same promise-style one), for the connection's lifetime.
 * Events, as mysql2's pool emits them: `connection` (a physical connection's first checkout),
 * `acquire` (every checkout), `release` (every release), `enqueue` (a checkout waits: every
 * connection of the node is in use), and `error` (background errors such as an idle connection
 * dying, emitted only while someone listens: never an unhandled `'error'`). Caveats: pool-level
 * `query`/`execute` go through the router without a checkout and emit none of these; a pool query
 * without a callback returns a promise, not a streamable command (stream through `getConnection`).
 *
 * Tested with Kysely 0.28 (`MysqlDialect`, transactions, `stream()`) and Drizzle 0.45
 * (`drizzle-orm/mysql2`, nested transactions): pass the same `router.pool()` to either.
 *
 * @example
 * ```ts
 * import { Kysely, MysqlDialect } from 'kysely'
 * import { drizzle } from 'drizzle-orm/mysql2'
 * const kysely = new Kysely<DB>({ dialect: new MysqlDialect({ pool: router.pool() }) })
 * const db = drizzle({ client: router.pool() }) // router.pool() is a Mysql2RouterPool
 * ```
 */
export class RoutedMysql2Pool extends EventEmitter {
  readonly #host: FacadeHost<PoolConnection>
  readonly #lib: Mysql2Module
  /** One wrapper per physical connection (by its core connection), for the connection's lifetime. */
  readonly #wrappers = new WeakMap<object, RoutedMysql2Connection>()

  constructor(lib: Mysql2Module, host: FacadeHost<PoolConnection>) {
    super()
    this.#lib = lib
    this.#host = host
    host.onError((err) => {
      if (this.listenerCount('error') > 0) this.emit('error', err)
    })
  }

  /** The pool itself (mysql2's promise pool exposes its callback pool here). */
  get pool(): this {
    return this
  }

  /** The pool itself: it already speaks the promise API. */
  promise(): this {
    return this
  }

  // biome-ignore lint/suspicious/noExplicitAny: mysql2's promise API types results by a caller-chosen generic
  query<T = any>(sql: string | QueryOptions, values?: unknown): Promise<[T, FieldPacket[]]>
  query(sql: string | QueryOptions, cb: PoolQueryCallback): void
  query(sql: string | QueryOptions, values: unknown, cb: PoolQueryCallback): void
  query(sql: unknown, values?: unknown, cb?: unknown): unknown {
    return this.#run(false, sql, values, cb)
  }

  // biome-ignore lint/suspicious/noExplicitAny: as above
  execute<T = any>(sql: string | QueryOptions, values?: unknown): Promise<[T, FieldPacket[]]>
  execute(sql: string | QueryOptions, cb: PoolQueryCallback): void
  execute(sql: string | QueryOptions, values: unknown, cb: PoolQueryCallback): void
  execute(sql: unknown, values?: unknown, cb?: unknown): unknown {
    return this.#run(true, sql, values, cb)
  }

  getConnection(): Promise<RoutedMysql2PromiseConnection>
  getConnection(cb: GetConnectionCallback): void
  getConnection(cb?: GetConnectionCallback): Promise<RoutedMysql2PromiseConnection> | undefined {
    const host = this.#host
    const waiting = host.counts().waiting
    const p = host.connect().then((sc) => this.#wrap(sc))
    // The checkout queued (synchronously, in the node's pool) behind connections all in use.
    if (host.counts().waiting > waiting) this.emit('enqueue')
    if (typeof cb === 'function') {
      p.then(
        (conn) => cb(null, conn),
        (err: unknown) => cb(err as Error, undefined as unknown as RoutedMysql2Connection),
      )
      return undefined
    }
    return p.then((conn) => conn.promise())
  }

  /** Releases a connection got from {@link RoutedMysql2Pool.getConnection}. */
  releaseConnection(conn: RoutedMysql2Connection | RoutedMysql2PromiseConnection): void {
    conn.release()
  }

  /** Closes the router (every node's pool). */
  end(): Promise<void>
  end(cb: (err?: Error | null) => void): void
  end(cb?: (err?: Error | null) => void): Promise<void> | undefined {
    const p = this.#host.close()
    if (typeof cb === 'function') {
      p.then(
        () => cb(null),
        (err: unknown) => cb(err as Error),
      )
      return undefined
    }
    return p
  }

  escape(value: unknown): string {
    return this.#lib.escape(value as Parameters<Mysql2Module['escape']>[0])
  }

  escapeId(value: string | string[]): string {
    return this.#lib.escapeId(value)
  }

  format(sql: string, values?: unknown): string {
    return this.#lib.format(sql, values as Parameters<Mysql2Module['format']>[1])
  }

  #wrap(sc: ScopedConnection<PoolConnection>): RoutedMysql2Connection {
    const core = coreOf(sc.conn)
    let conn = this.#wrappers.get(core)
    if (conn === undefined) {
      conn = new RoutedMysql2Connection(sc, this)
      this.#wrappers.set(core, conn)
      this.emit('connection', conn)
    } else if (conn.checkedOut) {
      // A transaction's connection checked out again while in use (concurrent work in one
      // `router.transaction`): a wrapper of its own, so each checkout keeps its own release.
      conn = new RoutedMysql2Connection(sc, this)
    } else {
      conn.checkOutAgain(sc)
    }
    this.emit('acquire', conn)
    return conn
  }

  #run(prepared: boolean, sql: unknown, values: unknown, cb: unknown): unknown {
    if (typeof values === 'function') {
      cb = values
      values = undefined
    }
    let p: Promise<NativeResult>
    if (isPlainText(sql, values)) {
      // The common case, text and an array of values: the router's own form of a statement (no
      // options object for mysql2 to copy; see `PreparedText`).
      const stmt = prepared ? (new PreparedText(sql) as unknown as Statement) : sql
      p = this.#host.queryAs(stmt, values as unknown[] | undefined, nativeResult)
    } else {
      const options = queryOptions(sql, values, 0)
      const stmt = (prepared ? asPrepared(options) : options) as unknown as Statement
      p = this.#host.queryAs(stmt, undefined, nativeResult)
    }
    if (typeof cb === 'function') {
      const callback = cb as PoolQueryCallback
      p.then(
        ([result, fields]) => callback(null, result, fields as FieldPacket[]),
        (err: unknown) => callback(err as Error),
      )
      return undefined
    }
    return p
  }
}

/**
 * The type of `router.pool()` with the mysql2 driver: a {@link RoutedMysql2Pool} (its overloads
 * come first: promise and callback styles) that is typed as mysql2's promise `Pool` too, so it goes
 * unannotated to Drizzle (`drizzle({ client: router.pool() })` from `drizzle-orm/mysql2`) as well as
 * to Kysely (`new MysqlDialect({ pool: router.pool() })`). Caveat: mysql2 declares its promise
 * `Pool` as a `Connection`; the members of a connection (`ping()`, `beginTransaction()`,
 * `threadId`...) exist neither on mysql2's own promise pool nor on this one: use
 * `getConnection()` for them.
 *
 * @example
 * ```ts
 * const pool: Mysql2RouterPool = router.pool()
 * const [rows] = await pool.query<RowDataPacket[]>('SELECT * FROM users WHERE id = ?', [1])
 * ```
 */
export type Mysql2RouterPool = RoutedMysql2Pool & Pool

/**
 * Builds `router.pool()` for the mysql2 driver: see {@link RoutedMysql2Pool}.
 *
 * @example
 * ```ts
 * const pool = createMysql2PoolFacade(mysql2, host)
 * const [rows] = await pool.query('SELECT 1 AS x')
 * ```
 */
export function createMysql2PoolFacade(
  lib: Mysql2Module,
  host: FacadeHost<PoolConnection>,
): Mysql2RouterPool {
  return new RoutedMysql2Pool(lib, host) as Mysql2RouterPool
}
