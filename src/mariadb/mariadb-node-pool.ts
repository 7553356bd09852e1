import { connect as netConnect, type Socket } from 'node:net'
import type { Connection } from 'mariadb'
import { PoolExhaustedError } from '../errors/pool-exhausted-error.js'
import { MAX_TIMER_MS } from '../router/config-checks.js'
import type { DriverNodeOptions, DriverPool } from '../router/driver.js'
import { establishReadOnlySessionWith, runsRoutine } from '../mysql2/mysql2-read-only-session.js'
import { type MariadbPoolLimits, mariadbNodeOptions } from './mariadb-options.js'

/** The `mariadb` module (promise API), or a compatible one. */
export type MariadbModule = Pick<typeof import('mariadb'), 'createConnection'>

/** Per connection: when it went idle last, whether it is broken or tainted, its node's query timeout. */
interface ConnState {
  idleSince: number
  broken: boolean
  /** A read-only pool's connection that ran `CALL`/`DO`: closed on release, never reused. */
  tainted: boolean
  busy: boolean
}

const states = new WeakMap<object, ConnState>()

/** The socket routemate opened for each connection (see {@link withOwnSocket}). */
const sockets = new WeakMap<object, Socket>()

/**
 * Connection options whose socket routemate opens itself (the connector's `stream` option), so it
 * can drop the socket of a connection at once: the connector's own `destroy()` of a connection
 * with a statement running first opens another connection to `KILL` it and, when that connection
 * cannot be made (a dead or frozen server), leaves the running statement unsettled for ever.
 * Options with a `stream` or `socketPath` of their own are left as they are. `adopt(conn)`
 * records the socket of the connection made with the returned options.
 *
 * @example
 * ```ts
 * const own = withOwnSocket(options)
 * const conn = await mariadb.createConnection(own.options); own.adopt(conn)
 * dropConnection(conn) // its running statement fails now
 * ```
 */
export function withOwnSocket(options: Record<string, unknown>): {
  options: Record<string, unknown>
  socket: () => Socket | undefined
  adopt: (conn: Connection) => void
} {
  let socket: Socket | undefined
  const adopt = (conn: Connection): void => {
    if (socket !== undefined) sockets.set(conn, socket)
  }
  if (options.stream !== undefined || options.socketPath !== undefined)
    return { options, socket: () => socket, adopt }
  const port = Number(options.port ?? 3306)
  const host = typeof options.host === 'string' ? options.host : 'localhost'
  const stream = (): Socket => {
    socket = netConnect(port, host)
    return socket
  }
  return { options: { ...options, stream }, socket: () => socket, adopt }
}

/**
 * Closes a connection's socket at once, so a statement running on it fails now with a connection
 * error (`ECONNRESET`); a connection without a socket of routemate's gets the connector's `destroy()`.
 *
 * @example
 * ```ts
 * dropConnection(conn)
 * ```
 */
export function dropConnection(conn: Connection): void {
  const socket = sockets.get(conn)
  // Not the connector's destroy() as well: it would mark the connection closing first, so the
  // socket's error would no longer reach the running statement.
  if (socket !== undefined) dropSocket(socket)
  else conn.destroy()
}

/**
 * The socket routemate opened for a connection (see {@link withOwnSocket}), if any.
 *
 * @example
 * ```ts
 * socketOf(conn)?.unref()
 * ```
 */
export function socketOf(conn: Connection): Socket | undefined {
  return sockets.get(conn)
}

/** Destroys a socket with a connection error (the connector fails what runs on it). */
export function dropSocket(socket: Socket | undefined): void {
  if (socket !== undefined && !socket.destroyed)
    socket.destroy(Object.assign(new Error('routemate: connection closed'), { code: 'ECONNRESET' }))
}

/** `queryTimeoutMs` of the node each pooled connection belongs to (for the driver's internal statements). */
const queryTimeouts = new WeakMap<object, number>()

/**
 * The `queryTimeoutMs` of the node a pooled connection belongs to (0 = none).
 *
 * @example
 * ```ts
 * mariadbQueryTimeoutOf(conn) // 5000
 * ```
 */
export function mariadbQueryTimeoutOf(conn: Connection): number {
  return queryTimeouts.get(conn) ?? 0
}

/**
 * Whether a read-only pool's connection ran a routine (`CALL`, `DO`) that may have changed its
 * session: the pool closes it on release instead of pooling it.
 *
 * @example
 * ```ts
 * isMariadbConnTainted(conn) // false
 * ```
 */
export function isMariadbConnTainted(conn: Connection): boolean {
  return states.get(conn)?.tainted === true
}

/** Watches every statement path of a read-only pool's connection for `CALL`/`DO`. */
function watchReadOnly(conn: Connection, state: ConnState): void {
  const c = conn as unknown as Record<string, (...args: unknown[]) => unknown>
  for (const method of ['query', 'execute', 'batch', 'prepare', 'queryStream']) {
    const original = c[method]
    if (typeof original !== 'function') continue
    c[method] = function (this: unknown, ...args: unknown[]) {
      if (runsRoutine(args[0])) state.tainted = true
      return original.apply(this, args)
    }
  }
}

interface Waiter {
  readonly resolve: (conn: Connection) => void
  readonly reject: (err: unknown) => void
  readonly since: number
  timer: NodeJS.Timeout | undefined
}

const noop = (): void => {}

/**
 * The DriverPool of one node: routemate's own small pool of `mariadb` connections (the
 * connector's `Pool` retries failed connects in the background and holds checkouts until its
 * `acquireTimeout`; the router must see a dead node's connect error at once to retry a read
 * elsewhere). Connections open on demand up to `connectionLimit` (a failed connect fails its
 * checkout with the connector's error); a checkout of a full pool waits, in order, and fails
 * after `acquireTimeout` ms with a `PoolExhaustedError`; idle connections close after
 * `idleTimeout` seconds. Every connection has an `error` listener from the start (an idle
 * connection's error goes to `onError`). A read-only pool runs `SET SESSION TRANSACTION READ ONLY`
 * on each new connection and verifies it, never allows multi-statement texts, and closes a
 * connection that ran `CALL`/`DO` instead of pooling it.
 *
 * @example
 * ```ts
 * const pool = new MariadbNodePool(mariadb, node, (err) => console.warn(err))
 * const conn = await pool.acquire(); try { await conn.query('SELECT 1') } finally { pool.release(conn, false) }
 * ```
 */
export class MariadbNodePool implements DriverPool<Connection> {
  readonly #lib: MariadbModule
  readonly #node: DriverNodeOptions
  readonly #onError: (err: unknown) => void
  readonly #options: Record<string, unknown>
  readonly #limits: MariadbPoolLimits
  readonly #all = new Set<Connection>()
  /** Idle connections, oldest first (checkouts take the most recently used). */
  readonly #idle: Connection[] = []
  readonly #waiters: Waiter[] = []
  #connecting = 0
  #closed = false
  #idleTimer: NodeJS.Timeout | undefined

  constructor(lib: MariadbModule, node: DriverNodeOptions, onError: (err: unknown) => void) {
    this.#lib = lib
    this.#node = node
    this.#onError = onError
    const { connection, limits } = mariadbNodeOptions(node)
    this.#options = connection
    this.#limits = limits
  }

  /** The hot path: an idle connection is handed over synchronously, with no promise. */
  acquireCallback(cb: (err: unknown, conn?: Connection) => void): void {
    const conn = this.#closed ? undefined : this.#takeIdle()
    if (conn !== undefined) cb(null, conn)
    else this.acquire().then((c) => cb(null, c), cb)
  }

  acquire(): Promise<Connection> {
    if (this.#closed) return Promise.reject(new Error(`node "${this.#node.name}": pool is closed`))
    const idle = this.#takeIdle()
    if (idle !== undefined) return Promise.resolve(idle)
    if (this.#all.size + this.#connecting < this.#limits.connectionLimit) return this.#open()
    return new Promise<Connection>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, since: performance.now(), timer: undefined }
      const limit = this.#limits.acquireTimeout
      if (limit > 0) {
        waiter.timer = setTimeout(
          () => {
            const i = this.#waiters.indexOf(waiter)
            if (i >= 0) this.#waiters.splice(i, 1)
            reject(
              new PoolExhaustedError({
                node: this.#node.name,
                reason: 'timeout',
                waitedMs: Math.round(performance.now() - waiter.since),
                max: this.#limits.connectionLimit,
                waiting: this.#waiters.length,
                limit,
              }),
            )
          },
          Math.min(limit, MAX_TIMER_MS),
        )
      }
      this.#waiters.push(waiter)
    })
  }

  release(conn: Connection, destroy: boolean): void {
    const state = states.get(conn)
    if (state === undefined || !state.busy) return
    state.busy = false
    if (destroy || state.broken || state.tainted || this.#closed || !conn.isValid()) {
      this.#close(conn, destroy || state.broken)
      this.#serveWaiter()
      return
    }
    const waiter = this.#waiters.shift()
    if (waiter !== undefined) {
      if (waiter.timer !== undefined) clearTimeout(waiter.timer)
      state.busy = true
      waiter.resolve(conn)
      return
    }
    state.idleSince = Date.now()
    this.#idle.push(conn)
    this.#armIdleTimer()
  }

  destroy(conn: Connection): void {
    const state = states.get(conn)
    if (state !== undefined) state.broken = true
    dropConnection(conn)
  }

  async end(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer)
    for (const w of this.#waiters.splice(0)) {
      if (w.timer !== undefined) clearTimeout(w.timer)
      w.reject(new Error(`node "${this.#node.name}": pool is closed`))
    }
    for (const conn of this.#idle.splice(0)) this.#close(conn, false)
    // Checked-out connections close on release; a frozen server would never answer: bounded wait.
    const deadline = Date.now() + Math.max(1000, this.#node.connectTimeoutMs)
    while (this.#all.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    for (const conn of [...this.#all]) this.#close(conn, true)
  }

  counts(): { total: number; idle: number; waiting: number } {
    return {
      total: this.#all.size + this.#connecting,
      idle: this.#idle.length,
      waiting: this.#waiters.length,
    }
  }

  /** The most recently used idle connection that is still open, checked out; `undefined` if none. */
  #takeIdle(): Connection | undefined {
    for (;;) {
      const conn = this.#idle.pop()
      if (conn === undefined) return undefined
      const state = states.get(conn) as ConnState
      if (state.broken || !conn.isValid()) {
        this.#forget(conn)
        continue
      }
      state.busy = true
      return conn
    }
  }

  /** Opens a connection for a checkout (read-only session first on a read-only pool). */
  async #open(): Promise<Connection> {
    this.#connecting++
    let conn: Connection | undefined
    const own = withOwnSocket(this.#options)
    try {
      conn = await this.#lib.createConnection(own.options as Parameters<MariadbModule['createConnection']>[0])
      own.adopt(conn)
      const state: ConnState = { idleSince: 0, broken: false, tainted: false, busy: true }
      states.set(conn, state)
      queryTimeouts.set(conn, this.#node.queryTimeoutMs)
      const c = conn
      c.on('error', (err: unknown) => {
        state.broken = true
        if (!state.busy) this.#onError(err)
      })
      c.on('end', () => {
        state.broken = true
      })
      if (this.#node.readOnly) {
        watchReadOnly(c, state)
        await this.#bounded(
          c,
          establishReadOnlySessionWith(async (sql) => {
            const rows = (await c.query(sql)) as unknown
            return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : []
          }, this.#node.name),
        )
      }
    } catch (err) {
      this.#connecting--
      dropSocket(own.socket())
      if (conn !== undefined) dropConnection(conn)
      this.#serveWaiter()
      throw err
    }
    this.#connecting--
    if (this.#closed) {
      dropConnection(conn)
      throw new Error(`node "${this.#node.name}": pool is closed`)
    }
    this.#all.add(conn)
    return conn
  }

  /** Bounds a setup step on a new connection by `connectTimeoutMs` (the connection is destroyed when it passes). */
  async #bounded<T>(conn: Connection, p: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined
    const ms = this.#node.connectTimeoutMs
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        dropConnection(conn)
        reject(new Error(`node "${this.#node.name}": setting up a read-only session took over ${ms} ms`))
      }, ms)
    })
    try {
      return await Promise.race([p, timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  /** A connection left the pool: open one for the oldest waiter, if any. */
  #serveWaiter(): void {
    if (this.#closed || this.#waiters.length === 0) return
    if (this.#all.size + this.#connecting >= this.#limits.connectionLimit) return
    const waiter = this.#waiters.shift() as Waiter
    if (waiter.timer !== undefined) clearTimeout(waiter.timer)
    this.#open().then(waiter.resolve, waiter.reject)
  }

  #forget(conn: Connection): void {
    this.#all.delete(conn)
    dropConnection(conn)
  }

  /** Closes a connection: `COM_QUIT` politely, or drops the socket (`hard`). */
  #close(conn: Connection, hard: boolean): void {
    this.#all.delete(conn)
    const i = this.#idle.indexOf(conn)
    if (i >= 0) this.#idle.splice(i, 1)
    if (hard) {
      dropConnection(conn)
      return
    }
    const timer = setTimeout(() => dropConnection(conn), Math.max(1000, this.#node.connectTimeoutMs))
    timer.unref()
    conn
      .end()
      .catch(noop)
      .finally(() => clearTimeout(timer))
  }

  /** One timer per pool, for the oldest idle connection's deadline. */
  #armIdleTimer(): void {
    const seconds = this.#limits.idleTimeout
    if (seconds <= 0 || this.#idleTimer !== undefined || this.#idle.length === 0) return
    const oldest = states.get(this.#idle[0] as Connection) as ConnState
    const wait = Math.max(10, oldest.idleSince + seconds * 1000 - Date.now())
    this.#idleTimer = setTimeout(
      () => {
        this.#idleTimer = undefined
        const cutoff = Date.now() - seconds * 1000
        while (
          this.#idle.length > 0 &&
          (states.get(this.#idle[0] as Connection) as ConnState).idleSince <= cutoff
        )
          this.#close(this.#idle[0] as Connection, false)
        this.#armIdleTimer()
      },
      Math.min(wait, MAX_TIMER_MS),
    )
    this.#idleTimer.unref()
  }
}
