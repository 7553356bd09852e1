import { EventEmitter } from 'node:events'
import { Readable } from 'node:stream'
import type { PoolConnection, QueryOptions } from 'mysql2/promise'
import type { ScopedConnection } from '../router/facade-host.js'
import { type EventRelay, relayEvents } from './mysql2-event-relay.js'
import { type CoreConnection, coreOf, type Mysql2Command, type QueryCallback } from './mysql2-internals.js'
import { RoutedMysql2PromiseConnection } from './mysql2-promise-connection.js'
import { isPlainText, queryOptions, sqlOf } from './mysql2-statement.js'

/** What a routed connection tells the pool facade it came from. */
export interface ConnectionOwner {
  emit(event: 'release', conn: RoutedMysql2Connection): boolean
}

/** A query that failed before it was sent: a Query-like emitter whose `stream()` errors too. */
function failedCommand(err: unknown, callback: QueryCallback | undefined): Mysql2Command {
  const cmd = new EventEmitter() as Mysql2Command
  cmd.stream = () => {
    const r = new Readable({ objectMode: true, read() {} })
    process.nextTick(() => r.destroy(err as Error))
    return r
  }
  process.nextTick(() => {
    if (callback !== undefined) callback(err as Error)
    else if (cmd.listenerCount('error') > 0) cmd.emit('error', err)
    cmd.emit('end')
  })
  return cmd
}

/**
 * A routed connection in mysql2's callback style (like mysql2's `PoolConnection`), as Kysely's
 * `MysqlDialect` uses it: `query(sql, values?, cb?)` and `execute(...)` return mysql2's command
 * (so `.stream()` works) and call `cb(err, rows, fields)`; `beginTransaction`/`commit`/`rollback`
 * (inside `router.transaction` they become savepoints), `ping`, `release()`, `destroy()`,
 * `end()` (= release, as mysql2 does for pooled connections), `promise()`.
 *
 * Every statement passes routemate's read-only guard and its errors feed passive health checks;
 * the node's `queryTimeoutMs` bounds each (cancelled on the server with `KILL QUERY` when it passes;
 * a callback then gets a `QueryTimeoutError`, a command without one emits the server's error
 * 1317); a statement's own mysql2 `timeout` option still applies. Caveats: `release()` and
 * `destroy()` of a transaction's connection leave it to the transaction; without a callback,
 * routemate listens to the command's `error` (for health), so an unhandled error does not throw.
 *
 * @example
 * ```ts
 * router.pool().getConnection((err, conn) => {
 *   if (err) return done(err)
 *   conn.query('SELECT * FROM users WHERE id = ?', [1], (err, rows) => { conn.release(); done(err, rows) })
 * })
 * ```
 */
export class RoutedMysql2Connection extends EventEmitter {
  #sc: ScopedConnection<PoolConnection>
  readonly #core: CoreConnection
  readonly #owner: ConnectionOwner
  readonly #relay: EventRelay
  #released = false
  #promise: RoutedMysql2PromiseConnection | undefined

  constructor(sc: ScopedConnection<PoolConnection>, owner: ConnectionOwner) {
    super()
    this.#sc = sc
    this.#core = coreOf(sc.conn)
    this.#owner = owner
    this.#relay = relayEvents(this.#core, this)
    this.#relay.arm()
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
  checkOutAgain(sc: ScopedConnection<PoolConnection>): void {
    this.#sc = sc
    this.#released = false
    this.#relay.arm()
    this.#promise?.attach()
  }

  /** Name of the node this connection belongs to. */
  get node(): string {
    return this.#sc.node
  }

  /** The server's id of this connection (`CONNECTION_ID()`). */
  get threadId(): number {
    return this.#core.threadId ?? 0
  }

  get config(): object {
    return this.#core.config
  }

  get state(): string | undefined {
    return this.#core.state
  }

  query(sql: string | QueryOptions, values?: unknown, cb?: QueryCallback): Mysql2Command
  query(sql: string | QueryOptions, cb: QueryCallback): Mysql2Command
  query(sql: unknown, values?: unknown, cb?: unknown): Mysql2Command {
    return this.#run('query', sql, values, cb)
  }

  execute(sql: string | QueryOptions, values?: unknown, cb?: QueryCallback): Mysql2Command
  execute(sql: string | QueryOptions, cb: QueryCallback): Mysql2Command
  execute(sql: unknown, values?: unknown, cb?: unknown): Mysql2Command {
    return this.#run('execute', sql, values, cb)
  }

  beginTransaction(cb?: (err: Error | null) => void): Mysql2Command {
    return this.query('START TRANSACTION', (err: Error | null) => cb?.(err))
  }

  commit(cb?: (err: Error | null) => void): Mysql2Command {
    return this.query('COMMIT', (err: Error | null) => cb?.(err))
  }

  rollback(cb?: (err: Error | null) => void): Mysql2Command {
    return this.query('ROLLBACK', (err: Error | null) => cb?.(err))
  }

  /** Already connected: calls back at once (mysql2's `connect()` on a connected connection). */
  connect(cb?: (err: Error | null) => void): void {
    if (cb !== undefined) process.nextTick(cb, null)
  }

  ping(cb?: (err: Error | null) => void): void {
    this.#core.ping((err) => cb?.(err ? (this.#sc.fail(err) as Error) : null))
  }

  /** Gives the connection back to its pool (once; later calls do nothing). */
  release(): void {
    this.#giveBack(false)
  }

  /** Closes the connection instead of pooling it. */
  destroy(): void {
    this.#giveBack(true)
  }

  /** Releases the connection (mysql2's pooled `end()` does the same). */
  end(cb?: (err?: Error | null) => void): void {
    this.release()
    if (cb !== undefined) process.nextTick(cb)
  }

  /** The same connection in mysql2's promise style. */
  promise(): RoutedMysql2PromiseConnection {
    this.#promise ??= new RoutedMysql2PromiseConnection(this, this.#core)
    return this.#promise
  }

  escape(value: unknown): string {
    return this.#core.escape(value)
  }

  escapeId(value: string | string[]): string {
    return this.#core.escapeId(value)
  }

  format(sql: string, values?: unknown): string {
    return this.#core.format(sql, values)
  }

  pause(): void {
    this.#core.pause()
  }

  resume(): void {
    this.#core.resume()
  }

  #giveBack(destroy: boolean): void {
    if (this.#released) return
    this.#released = true
    this.#relay.disarm()
    this.#promise?.detach()
    this.#sc.release(destroy)
    this.#owner.emit('release', this)
  }

  #run(kind: 'query' | 'execute', sql: unknown, values: unknown, cb: unknown): Mysql2Command {
    if (typeof values === 'function') {
      cb = values
      values = undefined
    }
    const callback = typeof cb === 'function' ? (cb as QueryCallback) : undefined
    const sc = this.#sc
    const text = sqlOf(sql)
    let translated: string
    try {
      sc.check(text)
      translated = sc.translate(text)
    } catch (err) {
      return failedCommand(err, callback)
    }
    // Bounded by the node's queryTimeoutMs (cancelled on the server when it passes).
    const ended = sc.timed<[unknown, unknown]>((err, v) => {
      if (callback === undefined) return
      if (err) callback(sc.fail(err) as Error)
      else callback(null, v?.[0], v?.[1])
    })
    const done: QueryCallback | undefined = callback
      ? (err, result, fields) => ended(err, [result, fields])
      : undefined
    let cmd: Mysql2Command
    if (isPlainText(sql, values)) {
      // mysql2's text form: no options object for it to copy (see `isPlainText`).
      cmd =
        kind === 'query'
          ? this.#core.query(translated, values, done)
          : this.#core.execute(translated, values, done)
    } else {
      const options = queryOptions(sql, values, 0, translated)
      cmd =
        kind === 'query'
          ? this.#core.query(options, undefined, done)
          : this.#core.execute(options, undefined, done)
    }
    if (callback === undefined) {
      cmd.on('error', (err: unknown) => {
        sc.fail(err)
        ended(err)
      })
      cmd.on('end', () => ended(undefined))
    }
    return cmd
  }
}
