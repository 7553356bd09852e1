import { EventEmitter } from 'node:events'
import { PassThrough, type Readable } from 'node:stream'
import { connectionStatementKind } from '../router/connection-statement.js'
import type { RoutedMysql2Connection } from './mysql2-connection-facade.js'
import type { Mysql2Command, QueryCallback } from './mysql2-internals.js'
import type { Mysql2Module } from './mysql2-node-pool.js'
import type { Mysql2RouterPool } from './mysql2-pool-facade.js'
import { sqlOf } from './mysql2-statement.js'

/** What a {@link RoutedMysql2ModuleConnection} needs from the module that made it. */
export interface RoutedMysql2Host {
  /** `router.pool()`: routes a statement, or checks out a connection, by the caller's scope. */
  readonly pool: Mysql2RouterPool
  /** The `mysql2` module (`format`, `escape`, `escapeId`). */
  readonly lib: Mysql2Module
}

/**
 * The options of mysql2's connection config that shape results or format parameters, and that
 * mysql2 also takes per statement: the look-alike sends them with each statement, so a statement
 * routed to any of the router's connections is read as the ORM configured it.
 */
const PER_STATEMENT = [
  'typeCast',
  'timezone',
  'supportBigNumbers',
  'bigNumberStrings',
  'dateStrings',
  'nestTables',
  'rowsAsArray',
] as const

/** The per-statement options of an ORM's connection config (see {@link PER_STATEMENT}). */
export function statementOptions(config: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const k of PER_STATEMENT) if (config[k] !== undefined) out[k] = config[k]
  return out
}

/** The OK packet answering a setup statement that is not run (see `connectionStatementKind`). */
function okPacket(): object {
  return {
    fieldCount: 0,
    affectedRows: 0,
    insertId: 0,
    info: '',
    serverStatus: 2,
    warningStatus: 0,
    changedRows: 0,
  }
}

/** A command returned at once, settled later: an `EventEmitter` (Sequelize sets its max listeners) whose `stream()` works. */
function pendingCommand(): Mysql2Command & { settle(cmd: Mysql2Command | undefined, err?: unknown): void } {
  const cmd = new EventEmitter() as Mysql2Command & {
    settle(cmd: Mysql2Command | undefined, err?: unknown): void
  }
  let out: PassThrough | undefined
  let real: Mysql2Command | undefined
  let failed: unknown
  cmd.stream = (options?: unknown) => {
    out ??= new PassThrough({ objectMode: true })
    if (real !== undefined) (real.stream(options as never) as Readable).pipe(out)
    else if (failed !== undefined) process.nextTick(() => out?.destroy(failed as Error))
    return out
  }
  cmd.settle = (c, err) => {
    real = c
    failed = err
    if (out !== undefined) {
      if (c !== undefined) (c.stream() as Readable).pipe(out)
      else out.destroy(err as Error)
    }
  }
  return cmd
}

type PinState = 'transaction' | 'before-transaction' | 'session'

/**
 * A mysql2 connection look-alike (callback style) made by {@link routedMysql2}'s
 * `createConnection` and by its pools' `getConnection`: not one physical connection, but a handle
 * that routes each statement by its caller's routemate scope, as `router.pool().query` does. It
 * holds one physical connection, checked out from the router by the caller's scope, only while it
 * needs one: from `START TRANSACTION`/`BEGIN` (or a `SET TRANSACTION` just before) until
 * `COMMIT`/`ROLLBACK`; from a statement that changes session state (`SET @v`, `SET NAMES`, `USE`,
 * `LOCK TABLES`, temporary tables...) until released or ended, when that connection is closed
 * rather than pooled; and for a `.stream()` of a statement until the stream ends.
 */
export class RoutedMysql2ModuleConnection extends EventEmitter {
  readonly #host: RoutedMysql2Host
  readonly #options: Record<string, unknown>
  readonly #format: { stringifyObjects: boolean; timezone: unknown }
  readonly #onRelease: ((c: RoutedMysql2ModuleConnection) => void) | undefined
  #pin: Promise<RoutedMysql2Connection> | undefined
  #pinState: PinState = 'transaction'
  /** mysql2's own flags, read by ORMs (Sequelize's `validate`). */
  _closing = false
  _fatalError: Error | null = null
  _protocolError: Error | null = null
  readonly stream = { destroyed: false }
  readonly config: Readonly<Record<string, unknown>>

  constructor(
    host: RoutedMysql2Host,
    config: Readonly<Record<string, unknown>> = {},
    onRelease?: (c: RoutedMysql2ModuleConnection) => void,
  ) {
    super()
    this.#host = host
    this.config = config
    this.#options = statementOptions(config)
    this.#format = {
      stringifyObjects: config.stringifyObjects === true,
      timezone: config.timezone ?? 'local',
    }
    this.#onRelease = onRelease
  }

  query(sql: unknown, values?: unknown, cb?: unknown): Mysql2Command {
    return this.#run(false, sql, values, cb)
  }

  execute(sql: unknown, values?: unknown, cb?: unknown): Mysql2Command {
    return this.#run(true, sql, values, cb)
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

  ping(cb?: (err: Error | null) => void): void {
    this.query('SELECT 1', (err: Error | null) => cb?.(err))
  }

  /** Already usable: calls back at once. */
  connect(cb?: (err: Error | null) => void): void {
    if (cb !== undefined) process.nextTick(cb, null)
  }

  /**
   * Gives a handle got from `pool.getConnection()` back. A physical connection it still holds (a
   * transaction left open, a changed session) is closed, never pooled.
   */
  release(): void {
    this.#unpin()
    this.#onRelease?.(this)
  }

  /** The same as `release()`: a physical connection the handle still holds is closed. */
  destroy(): void {
    this.#unpin()
    this.#onRelease?.(this)
  }

  /** Ends the handle (a physical connection it still holds is closed); the router stays open. */
  end(cb?: (err?: Error | null) => void): void {
    if (!this._closing) {
      this._closing = true
      this.#unpin()
      this.#onRelease?.(this)
      process.nextTick(() => this.emit('end'))
    }
    if (typeof cb === 'function') process.nextTick(cb, null)
  }

  escape(value: unknown): string {
    return this.#host.lib.escape(value as never)
  }

  escapeId(value: string | string[]): string {
    return this.#host.lib.escapeId(value)
  }

  format(sql: string, values?: unknown): string {
    return (this.#host.lib.format as (...a: unknown[]) => string)(
      sql,
      values,
      this.#format.stringifyObjects,
      this.#format.timezone,
    )
  }

  /** The statement as mysql2 options: the ORM's per-statement options, then the statement's own. */
  #statement(prepared: boolean, sql: unknown, values: unknown): Record<string, unknown> {
    const own = typeof sql === 'object' && sql !== null ? (sql as Record<string, unknown>) : { sql }
    const stmt: Record<string, unknown> = { ...this.#options, ...own }
    if (values !== undefined) stmt.values = values
    // A text statement's values are formatted as the ORM's own connection would (stringifyObjects, timezone).
    if (!prepared && stmt.values !== undefined && typeof stmt.sql === 'string') {
      stmt.sql = this.format(stmt.sql, stmt.values)
      delete stmt.values
    }
    return stmt
  }

  #run(prepared: boolean, sql: unknown, values: unknown, cb: unknown): Mysql2Command {
    if (typeof values === 'function') {
      cb = values
      values = undefined
    }
    const callback = typeof cb === 'function' ? (cb as QueryCallback) : undefined
    const cmd = pendingCommand()
    const fail = (err: unknown) => {
      cmd.settle(undefined, err)
      if (callback !== undefined) callback(err as Error)
      else if (cmd.listenerCount('error') > 0) cmd.emit('error', err)
      cmd.emit('end')
    }
    if (this._closing) {
      process.nextTick(fail, new Error("Can't add new command when connection is in closed state"))
      return cmd
    }
    const text = sqlOf(sql)
    let stmt: Record<string, unknown>
    try {
      stmt = this.#statement(prepared, sql, values)
    } catch (err) {
      process.nextTick(fail, err)
      return cmd
    }
    const kind = connectionStatementKind(text)
    if (this.#pin === undefined && kind === 'setup') {
      process.nextTick(() => {
        cmd.settle(undefined, new Error('nothing to stream'))
        callback?.(null, okPacket(), undefined)
        cmd.emit('end')
      })
      return cmd
    }
    if (this.#pin === undefined && (kind === 'begin' || kind === 'set-transaction' || kind === 'session')) {
      this.#pinState =
        kind === 'begin' ? 'transaction' : kind === 'session' ? 'session' : 'before-transaction'
      const pin = new Promise<RoutedMysql2Connection>((resolve, reject) =>
        this.#host.pool.getConnection((err, c) => (err ? reject(err) : resolve(c))),
      )
      this.#pin = pin
      pin.catch(() => {
        if (this.#pin === pin) this.#pin = undefined
      })
    }
    const pin = this.#pin
    if (pin !== undefined) {
      pin.then(
        (conn) => {
          const after = () => this.#afterPinned(pin, conn, kind)
          const done: QueryCallback | undefined =
            callback === undefined
              ? undefined
              : (err, result, fields) => {
                  after()
                  callback(err, result, fields)
                }
          const real = prepared
            ? conn.execute(stmt as never, undefined, done)
            : conn.query(stmt as never, undefined, done)
          cmd.settle(real)
          if (callback === undefined) {
            real.on('error', (err: unknown) => {
              if (cmd.listenerCount('error') > 0) cmd.emit('error', err)
            })
            real.on('end', () => {
              after()
              cmd.emit('end')
            })
          }
        },
        (err: unknown) => fail(err),
      )
      return cmd
    }
    if (callback === undefined) {
      // Streaming (or events) needs a real command: run it on a connection checked out for it.
      const p = new Promise<RoutedMysql2Connection>((resolve, reject) =>
        this.#host.pool.getConnection((err, c) => (err ? reject(err) : resolve(c))),
      )
      p.then(
        (conn) => {
          const real = prepared ? conn.execute(stmt as never) : conn.query(stmt as never)
          let released = false
          const release = () => {
            if (!released) {
              released = true
              conn.release()
            }
          }
          real.on('error', (err: unknown) => {
            release()
            if (cmd.listenerCount('error') > 0) cmd.emit('error', err)
          })
          real.on('end', () => {
            release()
            cmd.emit('end')
          })
          for (const ev of ['fields', 'result'] as const)
            real.on(ev, (...a: unknown[]) => {
              cmd.emit(ev, ...a)
            })
          cmd.settle(real)
        },
        (err: unknown) => fail(err),
      )
      return cmd
    }
    const routed = prepared ? this.#host.pool.execute(stmt as never) : this.#host.pool.query(stmt as never)
    routed.then(
      ([result, fields]) => {
        callback(null, result, fields)
        cmd.emit('end')
      },
      (err: unknown) => fail(err),
    )
    return cmd
  }

  #afterPinned(pin: Promise<RoutedMysql2Connection>, conn: RoutedMysql2Connection, kind: string): void {
    if (this.#pin !== pin || this.#pinState === 'session') return
    if (kind === 'session') {
      this.#pinState = 'session'
      return
    }
    if (this.#pinState === 'before-transaction') {
      if (kind === 'begin') this.#pinState = 'transaction'
      else if (kind !== 'set-transaction') this.#unpinNow(conn) // SET TRANSACTION applied to this one statement
      return
    }
    if (kind === 'end') this.#unpinNow(conn)
  }

  #unpinNow(conn: RoutedMysql2Connection): void {
    this.#pin = undefined
    conn.release()
  }

  #unpin(): void {
    const pin = this.#pin
    if (pin === undefined) return
    this.#pin = undefined
    // Still pinned: inside a transaction, or with a changed session: closed, not pooled.
    pin.then(
      (conn) => conn.destroy(),
      () => {},
    )
  }
}
