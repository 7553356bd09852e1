import { EventEmitter } from 'node:events'
import type { Connection, Pool } from 'mariadb'
import type { FacadeHost, ScopedConnection } from '../router/facade-host.js'
import type { Statement } from '../router/statement.js'
import { asPrepared, sqlOf } from '../mysql2/mysql2-statement.js'
import { nativeMariadbResult } from './mariadb-result.js'

/** A statement as the connector takes it: SQL text or a query options object (`{ sql, rowsAsArray... }`). */
type Sql = string | { sql: string; [key: string]: unknown }

/** The statement with its SQL replaced (a fresh object; the caller's is never changed). */
function withSql(sql: Sql, text: string): Sql {
  if (typeof sql === 'string') return text
  return text === sql.sql ? sql : { ...sql, sql: text }
}

/**
 * A routed connection of {@link RoutedMariadbPool}, shaped like the connector's `PoolConnection`:
 * `query`, `execute`, `batch`, `beginTransaction`/`commit`/`rollback` (inside `router.transaction`
 * they become savepoints), `ping`, `release()` (also `end()`, as the connector's pooled
 * connections do), `destroy()`, `threadId`, `info`, `serverVersion()`, `isValid()`, `escape`,
 * `escapeId`, and `error` events of the underlying connection while it is checked out.
 *
 * Every statement passes routemate's read-only guard (a read connection refuses writes,
 * session and transaction control) and its errors feed passive health checks; the node's
 * `queryTimeoutMs` bounds each (cancelled with `KILL QUERY`, then a `QueryTimeoutError`).
 * Caveats: `queryStream`, `prepare`, `changeUser`, `reset` and `importFile` are not offered
 * (they throw); `release()` of a transaction's connection leaves it to the transaction.
 *
 * @example
 * ```ts
 * const conn = await router.pool().getConnection()
 * try { await conn.query('SELECT * FROM users WHERE id = ?', [1]) } finally { await conn.release() }
 * ```
 */
export class RoutedMariadbConnection extends EventEmitter {
  #sc: ScopedConnection<Connection>
  readonly #owner: EventEmitter
  readonly #relay: (err: unknown) => void
  #released = false

  constructor(sc: ScopedConnection<Connection>, owner: EventEmitter) {
    super()
    this.#sc = sc
    this.#owner = owner
    this.#relay = (err) => {
      if (this.listenerCount('error') > 0) this.emit('error', err)
    }
    sc.conn.on('error', this.#relay)
  }

  /**
   * Whether the connection is checked out (between `getConnection` and `release()`/`destroy()`).
   * The pool facade hands out the same object at each checkout of one physical connection.
   */
  get checkedOut(): boolean {
    return !this.#released
  }

  /**
   * Starts a new checkout of the same physical connection (the pool facade keeps one wrapper per
   * physical connection, so libraries that recognise a connection by identity see the same one).
   * Internal: called by the pool facade only, on a released wrapper.
   *
   * @internal
   */
  checkOutAgain(sc: ScopedConnection<Connection>): void {
    this.#sc = sc
    this.#released = false
    sc.conn.on('error', this.#relay)
  }

  /** Name of the node this connection belongs to. */
  get node(): string {
    return this.#sc.node
  }

  /** The server's id of this connection (`CONNECTION_ID()`). */
  get threadId(): number | null {
    return this.#sc.conn.threadId
  }

  /** The connector's connection information (server version, capabilities...). */
  get info(): Connection['info'] {
    return this.#sc.conn.info
  }

  /** The server's version string. */
  serverVersion(): string {
    return this.#sc.conn.serverVersion()
  }

  /** Whether the connection is usable (checked out and open). */
  isValid(): boolean {
    return !this.#released && this.#sc.conn.isValid()
  }

  /** Runs a statement with the text protocol; resolves to the connector's own result. */
  // biome-ignore lint/suspicious/noExplicitAny: the connector types results by a caller-chosen generic
  query<T = any>(sql: Sql, values?: unknown): Promise<T> {
    return this.#run('query', sql, values) as Promise<T>
  }

  /** Runs a statement as a prepared statement (binary protocol). */
  // biome-ignore lint/suspicious/noExplicitAny: as above
  execute<T = any>(sql: Sql, values?: unknown): Promise<T> {
    return this.#run('execute', sql, values) as Promise<T>
  }

  /** Runs a statement once per row of `values` (the connector's bulk protocol where it can). */
  // biome-ignore lint/suspicious/noExplicitAny: as above
  batch<T = any>(sql: Sql, values?: unknown): Promise<T> {
    return this.#run('batch', sql, values) as Promise<T>
  }

  async beginTransaction(): Promise<void> {
    await this.query('START TRANSACTION')
  }

  async commit(): Promise<void> {
    await this.query('COMMIT')
  }

  async rollback(): Promise<void> {
    await this.query('ROLLBACK')
  }

  async ping(): Promise<void> {
    try {
      await this.#sc.conn.ping()
    } catch (err) {
      throw this.#sc.fail(err)
    }
  }

  escape(value: unknown): string {
    return this.#sc.conn.escape(value)
  }

  escapeId(value: string): string {
    return this.#sc.conn.escapeId(value)
  }

  /** Gives the connection back to the router (once; later calls do nothing). */
  async release(): Promise<void> {
    this.#giveBack(false)
  }

  /** Releases the connection (the connector's pooled `end()` does the same). */
  async end(): Promise<void> {
    this.#giveBack(false)
  }

  /** Releases the connection (alias of `end()`). */
  async close(): Promise<void> {
    this.#giveBack(false)
  }

  /** Closes the connection instead of pooling it. */
  destroy(): void {
    this.#giveBack(true)
  }

  queryStream(): never {
    throw new Error('routemate: queryStream is not supported on router.pool() connections')
  }

  prepare(): never {
    throw new Error('routemate: prepare is not supported on router.pool() connections; use execute()')
  }

  #giveBack(destroy: boolean): void {
    if (this.#released) return
    this.#released = true
    this.#sc.conn.removeListener('error', this.#relay)
    this.#sc.release(destroy)
    this.#owner.emit('release', this)
  }

  #run(kind: 'query' | 'execute' | 'batch', sql: Sql, values: unknown): Promise<unknown> {
    if (this.#released) return Promise.reject(new Error('routemate: the connection was released'))
    const sc = this.#sc
    const text = sqlOf(sql)
    let stmt: Sql
    try {
      sc.check(text)
      stmt = withSql(sql, sc.translate(text))
    } catch (err) {
      return Promise.reject(err)
    }
    return new Promise((resolve, reject) => {
      // Bounded by the node's queryTimeoutMs (cancelled on the server when it passes).
      const done = sc.timed<unknown>((err, v) => {
        if (err) reject(sc.fail(err))
        else resolve(v)
      })
      const conn = sc.conn as unknown as Record<typeof kind, (s: Sql, v: unknown) => Promise<unknown>>
      conn[kind](stmt, values).then(
        (v) => done(undefined, v),
        (err: unknown) => done(err),
      )
    })
  }
}

/**
 * `router.pool()` of the `mariadb` driver: a `mariadb.Pool` look-alike routed by the caller's
 * routemate scope, as `@prisma/adapter-mariadb` (7.10+: `new PrismaMariaDb(router.pool())`)
 * and code written for the connector's pool use it.
 *
 * - `query(sql, values?)` / `execute(sql, values?)` go through the router like `router.query`
 *   (read-only guard, retries of reads on another node, passive health) and resolve to the
 *   connector's own result (rows with `meta`, or an OK packet); `execute` uses the binary protocol.
 * - `batch(sql, values)` runs on one checked-out connection (a write: the primary, or the
 *   transaction's connection).
 * - `getConnection()` checks out a {@link RoutedMariadbConnection} chosen by the scope: inside
 *   `router.transaction` it is the transaction's own, whose BEGIN/COMMIT/ROLLBACK become savepoints.
 * - `end()` closes the router; `closed`, `activeConnections()`, `totalConnections()`,
 *   `idleConnections()`, `taskQueueSize()` sum every node's pool. Events: `connection` (first
 *   checkout of a physical connection), `acquire`, `release`, `error` (background errors, emitted
 *   only while someone listens).
 * - Connections keep their identity: every checkout of one physical connection hands out the same
 *   {@link RoutedMariadbConnection}, so code that keys state on the connection object sees one
 *   connection, not a new one per checkout.
 * - Caveats: `escape`/`escapeId` and `importFile` need a connection (`getConnection()`); `enqueue`
 *   is never emitted.
 *
 * @example
 * ```ts
 * import { PrismaMariaDb } from '@prisma/adapter-mariadb'
 * const prisma = new PrismaClient({ adapter: new PrismaMariaDb(router.pool()) })
 * const users = await router.readOnly(() => prisma.user.findMany()) // a replica
 * ```
 */
export class RoutedMariadbPool extends EventEmitter {
  readonly #host: FacadeHost<Connection>
  /** One wrapper per physical connection (the connector's `Connection`), for the connection's lifetime. */
  readonly #wrappers = new WeakMap<object, RoutedMariadbConnection>()
  #closed = false

  constructor(host: FacadeHost<Connection>) {
    super()
    this.#host = host
    host.onError((err) => {
      if (this.listenerCount('error') > 0) this.emit('error', err)
    })
  }

  /** Whether `end()` was called. */
  get closed(): boolean {
    return this.#closed
  }

  /** Runs a statement routed by the caller's scope (text protocol); resolves to the connector's result. */
  // biome-ignore lint/suspicious/noExplicitAny: the connector types results by a caller-chosen generic
  query<T = any>(sql: Sql, values?: unknown): Promise<T> {
    return this.#host.queryAs(
      sql as Statement,
      values as readonly unknown[] | undefined,
      nativeMariadbResult,
    ) as Promise<T>
  }

  /** Runs a statement routed by the caller's scope as a prepared statement (binary protocol). */
  // biome-ignore lint/suspicious/noExplicitAny: as above
  execute<T = any>(sql: Sql, values?: unknown): Promise<T> {
    const stmt = asPrepared(typeof sql === 'string' ? { sql } : sql)
    return this.#host.queryAs(
      stmt as Statement,
      values as readonly unknown[] | undefined,
      nativeMariadbResult,
    ) as Promise<T>
  }

  /** Runs a batch on one connection chosen by the scope. */
  // biome-ignore lint/suspicious/noExplicitAny: as above
  async batch<T = any>(sql: Sql, values?: unknown): Promise<T> {
    const conn = await this.getConnection()
    try {
      return await conn.batch<T>(sql, values)
    } finally {
      await conn.release()
    }
  }

  /**
   * Checks out a connection chosen by the caller's scope. Every checkout of one physical
   * connection hands out the same {@link RoutedMariadbConnection}, for the connection's lifetime
   * (a closed connection is never handed out again, so neither is its wrapper).
   */
  async getConnection(): Promise<RoutedMariadbConnection> {
    const sc = await this.#host.connect()
    let conn = this.#wrappers.get(sc.conn)
    if (conn === undefined) {
      conn = new RoutedMariadbConnection(sc, this)
      this.#wrappers.set(sc.conn, conn)
      this.emit('connection', conn)
    } else if (conn.checkedOut) {
      // A transaction's connection checked out again while in use (concurrent work in one
      // `router.transaction`): a wrapper of its own, so each checkout keeps its own release.
      conn = new RoutedMariadbConnection(sc, this)
    } else {
      conn.checkOutAgain(sc)
    }
    this.emit('acquire', conn)
    return conn
  }

  /** Closes the router (every node's pool). */
  async end(): Promise<void> {
    this.#closed = true
    await this.#host.close()
  }

  /** Connections checked out, over every node. */
  activeConnections(): number {
    const c = this.#host.counts()
    return c.total - c.idle
  }

  /** Connections open, over every node. */
  totalConnections(): number {
    return this.#host.counts().total
  }

  /** Idle connections, over every node. */
  idleConnections(): number {
    return this.#host.counts().idle
  }

  /** Checkouts waiting for a connection, over every node. */
  taskQueueSize(): number {
    return this.#host.counts().waiting
  }
}

/**
 * The type of `router.pool()` with the `mariadb` driver: a {@link RoutedMariadbPool} typed as the
 * connector's `Pool` too, so it goes unannotated to `new PrismaMariaDb(router.pool())`. Caveat:
 * `escape`, `escapeId` and `importFile` of `Pool` are not implemented (use a connection).
 *
 * @example
 * ```ts
 * const pool: MariadbRouterPool = router.pool()
 * const rows = await pool.query('SELECT * FROM users WHERE id = ?', [1])
 * ```
 */
export type MariadbRouterPool = RoutedMariadbPool & Pool
