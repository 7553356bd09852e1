import type { Pool, PoolConnection } from 'mysql2/promise'
import { PoolExhaustedError } from '../errors/pool-exhausted-error.js'
import type { DriverNodeOptions, DriverPool } from '../router/driver.js'
import {
  type CoreConnection,
  type CorePool,
  type CorePoolInternals,
  coreOf,
  destroySocket,
  destroySocketLater,
  poolConnections,
  queueLength,
} from './mysql2-internals.js'
import { poolOptions } from './mysql2-options.js'
import { establishReadOnlySession, isTainted, watchReadOnlyConnection } from './mysql2-read-only-session.js'
import { sessionTrackingSql } from './mysql2-reply-position.js'

const noop = (): void => {}

/** The `mysql2/promise` module (or a compatible one). */
export type Mysql2Module = typeof import('mysql2/promise')

/** `queryTimeoutMs` of the node each pooled core connection belongs to. */
const queryTimeouts = new WeakMap<object, number>()

/** Where a pooled core connection keeps its {@link CoreState} (a property of its own: no map lookup per checkout). */
const STATE = Symbol('routemate.mysql2.pooled')

/** What a node pool keeps on each of its core connections, for the connection's lifetime. */
interface CoreState {
  /** The one promise-style connection handed out for this core connection at every checkout. */
  readonly wrapper: PoolConnection
  /** Checked out (its errors reach the caller, not `onError`). */
  busy: boolean
  /** A read-only pool's `SET SESSION TRANSACTION READ ONLY` is done and verified on it. */
  readOnlyDone: boolean
}

type PooledCore = CoreConnection & { [STATE]?: CoreState }

/** A checkout's callback: `err` null/undefined on success; called exactly once. */
type AcquireCallback = (err: unknown, conn?: PoolConnection) => void

/**
 * The client-side query timeout (ms, `0` = none) of the node a connection belongs to, for
 * statements run on it through the pool facade.
 *
 * @example
 * ```ts
 * queryOptions(sql, values, queryTimeoutOf(coreOf(conn)))
 * ```
 */
export function queryTimeoutOf(core: CoreConnection): number {
  return queryTimeouts.get(core) ?? 0
}

/**
 * The DriverPool of one node over a `mysql2/promise` pool (mysql2's own PoolCluster is not used:
 * the router decides health itself). Every connection gets an `error` listener as soon as it is
 * connected (while connecting, mysql2's own connect callback takes its errors), so a server dying
 * never crashes the process; errors of idle connections go to `onError` (errors of checked-out
 * ones reach their caller). A read-only pool runs
 * `SET SESSION TRANSACTION READ ONLY` on each connection before its first use and verifies it
 * (again after each release when `resetOnRelease` is on, since a reset clears it), never allows
 * multi-statement texts, and closes a connection that ran `CALL`/`DO` instead of pooling it.
 *
 * @example
 * ```ts
 * const pool = new Mysql2NodePool(mysql2, node, (err) => console.warn(err))
 * const conn = await pool.acquire(); try { await conn.query('SELECT 1') } finally { pool.release(conn, false) }
 * ```
 */
export class Mysql2NodePool implements DriverPool<PoolConnection> {
  readonly #pool: Pool
  /** mysql2's callback pool under the promise one (checkouts without a promise). */
  readonly #core: CorePool
  readonly #lib: Mysql2Module
  readonly #node: DriverNodeOptions
  readonly #rememberReadOnly: boolean
  /** `connectionLimit` and `queueLimit` as mysql2 reads them, for a {@link PoolExhaustedError}. */
  readonly #limits: { readonly max: number; readonly queue: number; readonly wait: boolean }

  constructor(lib: Mysql2Module, node: DriverNodeOptions, onError: (err: unknown) => void) {
    this.#node = node
    // A read-only pool never runs multi-statement texts: the server then takes one statement per query.
    const options = node.readOnly ? { ...poolOptions(node), multipleStatements: false } : poolOptions(node)
    this.#limits = {
      max: Number.isNaN(Number(options.connectionLimit ?? 10)) ? 10 : Number(options.connectionLimit ?? 10),
      queue: Number.isNaN(Number(options.queueLimit ?? 0)) ? 0 : Number(options.queueLimit ?? 0),
      wait: options.waitForConnections === undefined ? true : Boolean(options.waitForConnections),
    }
    this.#rememberReadOnly = options.resetOnRelease !== true
    this.#pool = lib.createPool(options)
    this.#core = this.#pool.pool as unknown as CorePool
    this.#lib = lib
    // Writable pools: GTID session tracking, so a write's reply carries its position (no query
    // after it). Queued before the connection's first statement, so it costs no wait. Skipped
    // with resetOnRelease (a reset would turn it off again); a server that refuses it just sends
    // no positions (the router then reads them).
    const track = !node.readOnly && options.resetOnRelease !== true
    this.#pool.on('connection', (conn) => {
      const core = conn as unknown as CoreConnection
      if (node.readOnly) watchReadOnlyConnection(core)
      const tracking = track ? sessionTrackingSql(core._handshakePacket?.serverVersion) : undefined
      if (tracking !== undefined) core.query(tracking, noop)
      queryTimeouts.set(core, node.queryTimeoutMs)
      core.on('error', (err: unknown) => {
        if ((core as PooledCore)[STATE]?.busy !== true) onError(err)
      })
    })
  }

  /**
   * The hot path: mysql2's callback checkout, no promise, and the connection's one promise-style
   * wrapper (made at its first checkout) instead of a new `PoolConnection` with its event
   * plumbing per checkout. A read-only pool's first checkout of a connection takes `acquire`.
   */
  acquireCallback(cb: AcquireCallback): void {
    this.#core.getConnection((err, core) => {
      if (err != null || core === undefined) {
        cb(this.#checkoutError(err ?? new Error('mysql2 returned no connection')))
        return
      }
      const state = this.#stateOf(core as PooledCore)
      state.busy = true
      if (this.#node.readOnly && !state.readOnlyDone) this.#establish(state).then((c) => cb(null, c), cb)
      else cb(null, state.wrapper)
    })
  }

  acquire(): Promise<PoolConnection> {
    return new Promise((resolve, reject) => {
      this.acquireCallback((err, conn) => (err == null ? resolve(conn as PoolConnection) : reject(err)))
    })
  }

  /** Runs and verifies the read-only session setting on a checked-out connection (once, unless reset on release). */
  async #establish(state: CoreState): Promise<PoolConnection> {
    const conn = state.wrapper
    try {
      await establishReadOnlySession(conn, this.#node.name, this.#node.connectTimeoutMs)
    } catch (err) {
      this.release(conn, true)
      throw err
    }
    if (this.#rememberReadOnly) state.readOnlyDone = true
    return conn
  }

  /** The state kept on a core connection, made at its first checkout. */
  #stateOf(core: PooledCore): CoreState {
    let state = core[STATE]
    if (state === undefined) {
      const Wrapper = this.#lib.PoolConnection as unknown as new (
        core: CoreConnection,
        promise: PromiseConstructor,
      ) => PoolConnection
      const wrapper = new Wrapper(core, Promise)
      state = { wrapper, busy: false, readOnlyDone: false }
      Object.defineProperty(core, STATE, { value: state, writable: true })
    }
    return state
  }

  release(conn: PoolConnection, destroy: boolean): void {
    const core = coreOf(conn)
    const state = (core as PooledCore)[STATE]
    if (state !== undefined) state.busy = false
    if (!destroy && !(this.#node.readOnly && isTainted(core))) {
      conn.release()
      return
    }
    // mysql2's destroy() forgets the connection and half-closes the socket; close it for good now.
    conn.destroy()
    destroySocket(core)
  }

  destroy(conn: PoolConnection): void {
    destroySocket(coreOf(conn))
  }

  async end(): Promise<void> {
    const internals = this.#pool.pool as unknown as CorePoolInternals
    const connections = poolConnections(internals)
    const graceMs = Math.max(1000, this.#node.connectTimeoutMs)
    // mysql2's end() sends COM_QUIT on every connection; a frozen server would never answer a
    // connection busy before it, so the wait is bounded, and sockets left open are destroyed.
    let timer: NodeJS.Timeout | undefined
    const bounded = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs)
      timer.unref()
    })
    await Promise.race([this.#pool.end().catch(() => {}), bounded])
    clearTimeout(timer)
    for (const core of connections) destroySocketLater(core, graceMs)
  }

  /**
   * mysql2's refusals of a checkout of a full pool (`Queue limit reached.` past `queueLimit`,
   * `No connections available.` with `waitForConnections: false`) turned into a
   * {@link PoolExhaustedError} that keeps mysql2's error as `cause`; other errors as they are.
   */
  #checkoutError(err: unknown): unknown {
    const message = (err as { message?: unknown } | null)?.message
    if (message !== 'Queue limit reached.' && message !== 'No connections available.') return err
    const limits = this.#limits
    return new PoolExhaustedError({
      node: this.#node.name,
      reason: 'queue-full',
      waitedMs: 0,
      max: limits.max,
      waiting: this.counts().waiting,
      limit: limits.wait ? limits.queue : 0,
      cause: err,
    })
  }

  counts(): { total: number; idle: number; waiting: number } {
    const p = this.#pool.pool as unknown as CorePoolInternals
    return {
      total: queueLength(p._allConnections),
      idle: queueLength(p._freeConnections),
      waiting: queueLength(p._connectionQueue),
    }
  }
}
