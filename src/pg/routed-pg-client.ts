import { EventEmitter } from 'node:events'
import type pg from 'pg'
import { connectionStatementKind } from '../router/connection-statement.js'
import { transactionStatus } from './pg-internals.js'

type Callback = (err: Error | null, res?: unknown) => void

/** What a {@link RoutedPgClient} needs from the module that made it. */
export interface RoutedPgClientHost {
  /** `router.pool()`: routes a statement, or checks out a connection, by the caller's scope. */
  readonly pool: pg.Pool
  /** The `pg` module. */
  readonly lib: typeof pg
  /** The server's `server_version` and `standard_conforming_strings` (read once per module). */
  serverParameters(): Promise<ReadonlyArray<readonly [string, string]>>
}

interface Submittable {
  submit: unknown
  text?: string
  handleError?: (err: Error) => void
  on?: (event: string, listener: (...a: unknown[]) => void) => unknown
  emit?: (event: string, ...a: unknown[]) => boolean
}

function isSubmittable(x: unknown): x is Submittable {
  return typeof x === 'object' && x !== null && typeof (x as { submit?: unknown }).submit === 'function'
}

function textOf(config: unknown): string {
  if (typeof config === 'string') return config
  const t = typeof config === 'object' && config !== null ? (config as { text?: unknown }).text : undefined
  return typeof t === 'string' ? t : ''
}

/** The answer to a setup statement that is not run (see `connectionStatementKind`). */
function setupResult(): pg.QueryResult {
  return { command: 'SET', rowCount: null, oid: 0, rows: [], fields: [] } as unknown as pg.QueryResult
}

/**
 * A `pg.Client` look-alike made by {@link routedPg}'s `Client` and `Pool`: not one physical
 * connection, but a handle that routes each statement by its caller's routemate scope, as
 * `router.pool().query` does (so reads in `router.readOnly` go to replicas and are retried on
 * another node when one dies). It holds one physical connection (checked out from the router by
 * the caller's scope) only while it needs one:
 * - from `BEGIN`/`START TRANSACTION` (or `SET TRANSACTION`) until the transaction ends
 *   (`COMMIT`/`ROLLBACK`, or the server reports the connection idle again): an ORM transaction
 *   runs on one connection, the primary's outside `readOnly`;
 * - from a statement that changes session state (`SET x`, `LISTEN`, `PREPARE`, temporary
 *   tables...) until the handle is released or ended, when that connection is closed rather than
 *   pooled;
 * - for a submittable (`pg-query-stream`, `pg-cursor`) until it ends.
 * Setup statements ORMs send on every new connection (`SET client_min_messages`,
 * `SET standard_conforming_strings`, `SET TIME ZONE`) are answered without being run.
 */
export class RoutedPgClient extends EventEmitter {
  readonly #host: RoutedPgClientHost
  readonly #types: unknown
  readonly #onRelease: ((client: RoutedPgClient) => void) | undefined
  /** The pinned physical connection (a checkout of `router.pool()`), while there is one. */
  #pin: Promise<pg.PoolClient> | undefined
  /** The pin lasts until the handle is released (session state changed), not the transaction. */
  #sessionPin = false
  #ended = false
  /** pg's own flags, read by ORMs (Sequelize checks `_ending`). */
  _ending = false
  _connected = false
  /** Sequelize listens for `parameterStatus` here while connecting. */
  readonly connection = new EventEmitter()

  constructor(
    host: RoutedPgClientHost,
    config?: { types?: unknown },
    onRelease?: (client: RoutedPgClient) => void,
  ) {
    super()
    this.#host = host
    this.#types = config?.types
    this.#onRelease = onRelease
  }

  /**
   * Connects: no connection is opened (statements take the router's), but the server's
   * `server_version` and `standard_conforming_strings` are reported as `parameterStatus` on
   * `client.connection`, as pg does.
   */
  connect(cb?: (err: Error | null, client?: RoutedPgClient) => void): Promise<void> | undefined {
    const p = this.#host.serverParameters().then((params) => {
      for (const [parameterName, parameterValue] of params)
        this.connection.emit('parameterStatus', { parameterName, parameterValue })
      this._connected = true
      this.emit('connect')
    })
    if (typeof cb === 'function') {
      p.then(
        () => cb(null, this),
        (err: unknown) => cb(err as Error),
      )
      return undefined
    }
    return p
  }

  // biome-ignore lint/suspicious/noExplicitAny: pg's overloads
  query(config: any, values?: any, cb?: any): any {
    if (typeof values === 'function') {
      cb = values
      values = undefined
    }
    if (isSubmittable(config)) return this.#submit(config)
    const p = this.#run(config, values)
    if (typeof cb === 'function') {
      p.then(
        (res) => (cb as Callback)(null, res),
        (err: unknown) => (cb as Callback)(err as Error),
      )
      return undefined
    }
    return p
  }

  /**
   * Gives a handle got from `Pool.connect()` back. A physical connection it still holds goes back to
   * the router, or is closed when a transaction is still open on it or its session was changed.
   */
  release(err?: unknown): void {
    this.#unpin(err !== undefined && err !== null && err !== false)
    this.#onRelease?.(this)
  }

  /** Ends the handle (a physical connection it still holds is given back as by `release`); the router stays open. */
  end(cb?: (err?: Error) => void): Promise<void> | undefined {
    if (!this.#ended) {
      this.#ended = true
      this._ending = true
      this.#unpin(false)
      process.nextTick(() => this.emit('end'))
    }
    if (typeof cb === 'function') {
      process.nextTick(() => cb())
      return undefined
    }
    return Promise.resolve()
  }

  /** pg's `escapeIdentifier`. */
  escapeIdentifier(str: string): string {
    return this.#host.lib.escapeIdentifier(str)
  }

  /** pg's `escapeLiteral`. */
  escapeLiteral(str: string): string {
    return this.#host.lib.escapeLiteral(str)
  }

  /** Adds the client's own type parsers (Sequelize passes `types`) to a statement. */
  #config(config: unknown, values: unknown): unknown {
    if (this.#types === undefined) return values === undefined ? config : { text: textOf(config), values }
    if (typeof config === 'string') return { text: config, values, types: this.#types }
    const c = config as { values?: unknown; types?: unknown }
    return { ...c, values: values ?? c.values, types: c.types ?? this.#types }
  }

  async #run(config: unknown, values: unknown): Promise<unknown> {
    if (this.#ended) throw new Error('Client was closed and is not queryable')
    const stmt = this.#config(config, values)
    if (this.#pin !== undefined) return this.#onPin(this.#pin, stmt, textOf(config))
    const text = textOf(config)
    const kind = connectionStatementKind(text)
    if (kind === 'setup') return setupResult()
    if (kind === 'begin' || kind === 'set-transaction' || kind === 'session') {
      // Set synchronously, so statements sent meanwhile wait for this connection.
      const pin = this.#host.pool.connect()
      this.#pin = pin
      this.#sessionPin = kind === 'session'
      pin.catch(() => {
        if (this.#pin === pin) this.#pin = undefined
      })
      return this.#onPin(pin, stmt, text)
    }
    return this.#host.pool.query(stmt as pg.QueryConfig)
  }

  async #onPin(pin: Promise<pg.PoolClient>, stmt: unknown, text: string): Promise<unknown> {
    const conn = await pin
    let failed: unknown
    let res: unknown
    try {
      res = await conn.query(stmt as pg.QueryConfig)
    } catch (err) {
      failed = err
    }
    if (!this.#sessionPin && this.#pin === pin) {
      const kind = connectionStatementKind(text)
      if (kind === 'session') this.#sessionPin = true
      else if (kind === 'end' || (transactionStatus(conn) === 'I' && kind !== 'set-transaction')) {
        this.#pin = undefined
        // A connection left inside a transaction (or in an unknown state) is closed, not pooled.
        conn.release(transactionStatus(conn) === 'I' ? undefined : ((failed as Error | undefined) ?? true))
      }
    }
    if (failed !== undefined) throw failed
    return res
  }

  /** Runs a submittable (a cursor, a stream) on the pinned connection, or on one checked out for it. */
  #submit(sub: Submittable): Submittable {
    const own = this.#pin === undefined
    const pin = this.#pin ?? this.#host.pool.connect()
    pin.then(
      (conn) => {
        if (own) {
          let done = false
          const release = (err?: unknown) => {
            if (done) return
            done = true
            conn.release(err as Error | undefined)
          }
          sub.on?.('end', () => release())
          sub.on?.('close', () => release())
          sub.on?.('error', (err: unknown) => release(err ?? true))
        }
        ;(conn.query as (q: unknown) => unknown)(sub)
      },
      (err: unknown) => {
        if (typeof sub.handleError === 'function') sub.handleError(err as Error)
        else sub.emit?.('error', err)
      },
    )
    return sub
  }

  #unpin(destroy: boolean): void {
    const pin = this.#pin
    if (pin === undefined) return
    this.#pin = undefined
    const session = this.#sessionPin
    this.#sessionPin = false
    pin.then(
      (conn) => conn.release(destroy || session || transactionStatus(conn) !== 'I' ? true : undefined),
      () => {},
    )
  }
}
