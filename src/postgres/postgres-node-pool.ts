import { PoolExhaustedError } from '../errors/pool-exhausted-error.js'
import type { DriverNodeOptions, DriverPool } from '../router/driver.js'
import {
  closeConnection,
  openConnection,
  type ParsedOptions,
  type PostgresConn,
  type PostgresLib,
  readOnlyIntact,
  verifyReadOnly,
} from './postgres-connection.js'
import type { PostgresPoolOptions } from './postgres-options.js'

type Callback = (err: unknown, conn?: PostgresConn) => void

interface Waiter {
  readonly cb: Callback
  readonly since: number
}

/**
 * The pool of one node for the postgres.js driver: up to `max` one-connection postgres.js
 * instances, each checked out by one caller at a time. A checkout
 * of an idle connection and its release are a pop and a push; idle connections close after
 * `idle_timeout` (one timer per pool), connections older than `max_lifetime` are closed when
 * released or found idle. A read-only pool's connections start with
 * `default_transaction_read_only=on` (a startup parameter applied after the node's own), are
 * verified once connected, and are closed instead of pooled once the server reports the setting
 * changed.
 */
export class PostgresNodePool implements DriverPool<PostgresConn> {
  readonly #lib: PostgresLib
  readonly #parsed: ParsedOptions
  readonly #node: DriverNodeOptions
  readonly #options: PostgresPoolOptions
  readonly #onError: (err: unknown) => void
  readonly #all = new Set<PostgresConn>()
  readonly #idle: PostgresConn[] = []
  readonly #waiters: Waiter[] = []
  #idleTimer: NodeJS.Timeout | undefined
  #waitTimer: NodeJS.Timeout | undefined
  /** Whether a connection is being opened now; checkouts that need another one wait in `#toOpen`. */
  #connecting = false
  readonly #toOpen: Callback[] = []
  #ending = false
  #ended: Promise<void> | undefined
  #onDrained: (() => void) | undefined

  constructor(
    lib: PostgresLib,
    parsed: ParsedOptions,
    node: DriverNodeOptions,
    options: PostgresPoolOptions,
    onError: (err: unknown) => void,
  ) {
    this.#lib = lib
    this.#parsed = parsed
    this.#node = node
    this.#options = options
    this.#onError = onError
  }

  acquireCallback(cb: Callback): void {
    if (this.#ending) {
      cb(new Error('Cannot use a pool after calling end on the pool'))
      return
    }
    while (this.#idle.length > 0) {
      const conn = this.#idle.pop() as PostgresConn
      conn.idle = false
      if (conn.broken || this.#expired(conn)) {
        this.#remove(conn, false)
        continue
      }
      conn.socket?.ref()
      cb(undefined, conn)
      return
    }
    if (this.#all.size < this.#options.max) this.#open(cb)
    else this.#wait(cb)
  }

  acquire(): Promise<PostgresConn> {
    return new Promise((resolve, reject) => {
      this.acquireCallback((err, conn) => (err == null ? resolve(conn as PostgresConn) : reject(err)))
    })
  }

  release(conn: PostgresConn, destroy: boolean): void {
    if (!this.#all.has(conn) || conn.idle) return
    conn.uses++
    if (
      destroy ||
      conn.broken ||
      this.#ending ||
      this.#expired(conn) ||
      (this.#node.readOnly && !readOnlyIntact(conn))
    ) {
      this.#remove(conn, destroy)
      this.#serveWaiters()
      return
    }
    const waiter = this.#waiters.shift()
    if (waiter !== undefined) {
      waiter.cb(undefined, conn)
      return
    }
    conn.idle = true
    conn.idleSince = Date.now()
    this.#idle.push(conn)
    conn.socket?.unref()
    this.#armIdleTimer()
  }

  destroy(conn: PostgresConn): void {
    closeConnection(conn, true)
  }

  counts(): { total: number; idle: number; waiting: number } {
    return { total: this.#all.size, idle: this.#idle.length, waiting: this.#waiters.length }
  }

  end(): Promise<void> {
    if (this.#ended !== undefined) return this.#ended
    this.#ending = true
    clearTimeout(this.#idleTimer)
    clearTimeout(this.#waitTimer)
    for (const w of this.#waiters.splice(0)) w.cb(new Error('the pool is ending'))
    for (const open of this.#toOpen.splice(0)) open(new Error('the pool is ending'))
    for (const conn of this.#idle.splice(0)) {
      conn.idle = false
      this.#remove(conn, false)
    }
    this.#ended = new Promise<void>((resolve) => {
      this.#onDrained = resolve
      this.#checkDrained()
    })
    return this.#ended
  }

  /**
   * Opens a connection for `cb`, one at a time per node: postgres.js authenticates (SCRAM) with a
   * synchronous PBKDF2, so a burst of connections opened at once would block the event loop —
   * probes included — for as long as all of them take.
   */
  #open(cb: Callback): void {
    // A placeholder holds the slot while connecting or waiting to (counted in `total`).
    const slot = { broken: false } as PostgresConn
    this.#all.add(slot)
    if (this.#connecting) {
      this.#toOpen.push((err) => {
        this.#all.delete(slot)
        if (err == null) {
          this.#openNow(cb, slot)
          return
        }
        cb(err)
        this.#checkDrained()
      })
      return
    }
    this.#openNow(cb, slot)
  }

  /** The next queued open, if any (after one finished). */
  #nextOpen(): void {
    this.#connecting = false
    const next = this.#toOpen.shift()
    if (next !== undefined) {
      if (this.#ending) next(new Error('Cannot use a pool after calling end on the pool'))
      else next(null)
    }
  }

  #openNow(cb: Callback, slot: PostgresConn): void {
    this.#connecting = true
    this.#all.add(slot)
    const node = this.#node
    const onClose = (): void => {
      const c = opened
      if (c === undefined || !c.idle) return // checked out: its user sees the error and releases it
      this.#dropIdle(c)
      this.#remove(c, true)
    }
    let opened: PostgresConn | undefined
    openConnection(this.#lib, this.#parsed, {
      connectTimeoutMs: node.connectTimeoutMs,
      ...(node.readOnly ? { startup: { default_transaction_read_only: 'on' } } : {}),
      onClose,
    })
      .then(async (conn) => {
        opened = conn
        this.#all.delete(slot)
        this.#all.add(conn)
        this.#nextOpen()
        if (this.#ending) {
          this.#remove(conn, false)
          throw new Error('Cannot use a pool after calling end on the pool')
        }
        if (node.readOnly) {
          try {
            await verifyReadOnly(conn, node.name)
          } catch (err) {
            this.#remove(conn, true)
            throw err
          }
        }
        cb(undefined, conn)
      })
      .catch((err: unknown) => {
        if (this.#all.delete(slot)) this.#nextOpen()
        cb(err)
        this.#serveWaiters()
        this.#checkDrained()
      })
  }

  #wait(cb: Callback): void {
    if (this.#waiters.length >= this.#options.maxWaiting) {
      cb(
        new PoolExhaustedError({
          node: this.#node.name,
          reason: 'queue-full',
          waitedMs: 0,
          max: this.#options.max,
          waiting: this.#waiters.length,
          limit: this.#options.maxWaiting,
        }),
      )
      return
    }
    this.#waiters.push({ cb, since: performance.now() })
    this.#armWaitTimer()
  }

  #armWaitTimer(): void {
    const limit = this.#options.connectionTimeoutMillis
    if (limit <= 0 || this.#waitTimer !== undefined || this.#waiters.length === 0) return
    const first = this.#waiters[0] as Waiter
    const due = Math.max(0, first.since + limit - performance.now())
    this.#waitTimer = setTimeout(() => {
      this.#waitTimer = undefined
      const now = performance.now()
      while (this.#waiters.length > 0 && (this.#waiters[0] as Waiter).since + limit <= now) {
        const w = this.#waiters.shift() as Waiter
        w.cb(
          new PoolExhaustedError({
            node: this.#node.name,
            reason: 'timeout',
            waitedMs: Math.round(now - w.since),
            max: this.#options.max,
            waiting: this.#waiters.length,
            limit,
          }),
        )
      }
      this.#armWaitTimer()
    }, due)
    this.#waitTimer.unref()
  }

  /** A slot freed: the oldest waiter opens a new connection. */
  #serveWaiters(): void {
    if (this.#ending) return
    while (this.#waiters.length > 0 && this.#all.size < this.#options.max) {
      const w = this.#waiters.shift() as Waiter
      this.#open(w.cb)
    }
    if (this.#waiters.length === 0) {
      clearTimeout(this.#waitTimer)
      this.#waitTimer = undefined
    }
  }

  #expired(conn: PostgresConn): boolean {
    const life = this.#options.maxLifetimeSeconds
    return life > 0 && Date.now() - conn.createdAt >= life * 1000
  }

  #armIdleTimer(): void {
    const idleMs = this.#options.idleTimeoutSeconds * 1000
    if (idleMs <= 0 || this.#idleTimer !== undefined || this.#idle.length === 0) return
    const oldest = this.#idle[0] as PostgresConn
    this.#idleTimer = setTimeout(
      () => {
        this.#idleTimer = undefined
        const now = Date.now()
        while (this.#idle.length > 0 && now - (this.#idle[0] as PostgresConn).idleSince >= idleMs) {
          const c = this.#idle.shift() as PostgresConn
          c.idle = false
          this.#remove(c, false)
        }
        this.#armIdleTimer()
      },
      Math.max(0, oldest.idleSince + idleMs - Date.now()),
    )
    this.#idleTimer.unref()
  }

  #dropIdle(conn: PostgresConn): void {
    const i = this.#idle.indexOf(conn)
    if (i >= 0) this.#idle.splice(i, 1)
    conn.idle = false
  }

  #remove(conn: PostgresConn, destroy: boolean): void {
    if (!this.#all.delete(conn)) return
    closeConnection(conn, destroy)
    this.#checkDrained()
  }

  #checkDrained(): void {
    if (this.#onDrained !== undefined && this.#all.size === 0) {
      const done = this.#onDrained
      this.#onDrained = undefined
      done()
    }
  }

  /** Errors of idle connections (the server closing them) are reported here. */
  reportIdleError(err: unknown): void {
    this.#onError(err)
  }
}
