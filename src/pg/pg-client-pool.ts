import type pg from 'pg'
import { PoolExhaustedError } from '../errors/pool-exhausted-error.js'
import { MAX_TIMER_MS } from '../router/config-checks.js'
import { clientClosing, destroyClient, refClient } from './pg-internals.js'

/** Pool sizing and lifetime options, read from a node's `pool` options (the names `pg.Pool` uses). */
export interface PgClientPoolOptions {
  /** Most connections open at once (checked out, idle or connecting). */
  readonly max: number
  /** Idle connections kept open however long they idle. */
  readonly min: number
  /** An idle connection is closed after this long, in ms; 0 = never. */
  readonly idleTimeoutMillis: number
  /** A connection is closed after this many checkouts. */
  readonly maxUses: number
  /** A connection this old, in s, is closed when next released or found idle at checkout; 0 = no limit. */
  readonly maxLifetimeSeconds: number
  /** Idle connections do not keep the process alive. */
  readonly allowExitOnIdle: boolean
  /** Called on each new connection before its first use (as `pg.Pool`'s `verify`). */
  readonly verify: ((client: pg.Client, done: (err?: unknown) => void) => void) | undefined
  /**
   * A checkout waiting for a connection of a full pool fails after this long, in ms, with a
   * {@link PoolExhaustedError} (as `pg.Pool`'s `connectionTimeoutMillis`); 0 = wait however long.
   * Opening a connection is bounded by the node's `connectTimeoutMs` instead.
   */
  readonly connectionTimeoutMillis?: number
  /** Most checkouts waiting at once; one more fails at once with a {@link PoolExhaustedError}. Default: no bound. */
  readonly maxWaiting?: number
  /** Called on each new connection after it connected, before `verify` (as `pg.Pool`'s `onConnect`); a rejection fails the checkout. */
  readonly onConnect?: ((client: pg.Client) => unknown) | undefined
}

/** A pooled client: pg's `Client` plus the pool's bookkeeping (fields on the instance, no side maps). */
export interface PooledClient extends pg.Client {
  /** Checkouts so far. */
  rmUses: number
  /** `Date.now()` when it connected. */
  rmCreatedAt: number
  /** `Date.now()` when it went idle last. */
  rmIdleSince: number
  /** Whether it sits in the idle list now. */
  rmIdle: boolean
  /** It reported an error or ended: never handed out again. */
  rmBroken: boolean
}

type Callback = (err: unknown, client?: PooledClient) => void

/** A checkout waiting for a connection, since `performance.now()` = `since` (monotonic: clock changes do not move deadlines). */
interface Waiter {
  readonly cb: Callback
  readonly since: number
}

const noop = (): void => {}

/**
 * A connection pool of `pg.Client`s for one node, lean on the hot path: a checkout of an idle
 * connection and its release are a pop and a push — no timer, tick, event or closure per query
 * (`pg.Pool` arms an idle timer on every release, defers every checkout to a tick and re-wires the
 * client's error listener both ways). Idle connections are closed by one timer per pool, armed for
 * the oldest idle connection's deadline. Waiters are served in order; a connection released while
 * someone waits goes straight to them. A waiter fails with a {@link PoolExhaustedError} once it
 * waited `connectionTimeoutMillis` (one timer per pool, for the oldest waiter: waiters share the
 * limit, so the oldest is always due first), or at once when `maxWaiting` others wait already.
 */
export class PgClientPool {
  readonly #Client: new () => PooledClient
  readonly #options: PgClientPoolOptions
  readonly #onError: (err: unknown) => void
  readonly #all = new Set<PooledClient>()
  /** Idle connections, oldest first (a stack: checkouts take the most recently used). */
  readonly #idle: PooledClient[] = []
  readonly #waiters: Waiter[] = []
  readonly #name: string
  readonly #waitLimitMs: number
  readonly #maxWaiting: number
  #idleTimer: NodeJS.Timeout | undefined = undefined
  #waitTimer: NodeJS.Timeout | undefined = undefined
  #ending = false
  #ended: Promise<void> | undefined = undefined
  #closing = 0
  #onDrained: (() => void) | undefined = undefined

  /**
   * @param Client the `pg.Client` class to instantiate, already bound to the node's client config.
   * @param onError gets errors of idle connections (they are closed and replaced on demand).
   * @param name the node's name, for errors.
   */
  constructor(
    Client: new () => pg.Client,
    options: PgClientPoolOptions,
    onError: (err: unknown) => void,
    name = 'pool',
  ) {
    this.#Client = Client as new () => PooledClient
    this.#options = options
    this.#onError = onError
    this.#name = name
    this.#waitLimitMs = options.connectionTimeoutMillis ?? 0
    this.#maxWaiting = options.maxWaiting ?? Number.POSITIVE_INFINITY
  }

  /**
   * Checks a connection out: an idle one at once (synchronously), a new one, or the next one
   * released — failing with a {@link PoolExhaustedError} after `connectionTimeoutMillis` of
   * waiting, or at once when `maxWaiting` checkouts wait already.
   */
  acquireCallback(cb: Callback): void {
    if (this.#ending) {
      cb(new Error('Cannot use a pool after calling end on the pool'))
      return
    }
    const idle = this.#idle
    while (idle.length > 0) {
      const client = idle.pop() as PooledClient
      client.rmIdle = false
      if (client.rmBroken || this.#expired(client)) {
        this.#remove(client, false)
        continue
      }
      if (this.#options.allowExitOnIdle) refClient(client, true)
      cb(undefined, client)
      return
    }
    if (this.#all.size < this.#options.max) this.#open(cb)
    else this.#wait(cb)
  }

  /** Promise form of {@link acquireCallback}. */
  acquire(): Promise<PooledClient> {
    return new Promise((resolve, reject) => {
      this.acquireCallback((err, client) => (err == null ? resolve(client as PooledClient) : reject(err)))
    })
  }

  /** Gives a connection back; `destroy` (or a broken, worn-out or expired one) closes it instead. */
  release(client: PooledClient, destroy: boolean): void {
    if (!this.#all.has(client) || client.rmIdle) return
    client.rmUses++
    if (
      destroy ||
      client.rmBroken ||
      this.#ending ||
      clientClosing(client) ||
      client.rmUses >= this.#options.maxUses ||
      this.#expired(client)
    ) {
      this.#remove(client, destroy)
      this.#serveWaiters()
      return
    }
    const waiter = this.#waiters.shift()
    if (waiter !== undefined) {
      waiter.cb(undefined, client)
      return
    }
    client.rmIdle = true
    client.rmIdleSince = Date.now()
    this.#idle.push(client)
    if (this.#options.allowExitOnIdle) refClient(client, false)
    this.#armIdleTimer()
  }

  /** Occupancy: every connection (connecting, idle or checked out), idle ones, waiters. */
  counts(): { total: number; idle: number; waiting: number } {
    return { total: this.#all.size, idle: this.#idle.length, waiting: this.#waiters.length }
  }

  /** Closes idle connections, fails waiters, and resolves once every checked-out one is back and closed. */
  end(): Promise<void> {
    if (this.#ended !== undefined) return this.#ended
    this.#ending = true
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer)
    this.#idleTimer = undefined
    if (this.#waitTimer !== undefined) clearTimeout(this.#waitTimer)
    this.#waitTimer = undefined
    for (const w of this.#waiters.splice(0)) w.cb(new Error('the pool is ending'))
    for (const client of this.#idle.splice(0)) {
      client.rmIdle = false
      this.#remove(client, false)
    }
    this.#ended = new Promise<void>((resolve) => {
      this.#onDrained = resolve
      this.#checkDrained()
    })
    return this.#ended
  }

  #open(cb: Callback): void {
    const client = new this.#Client()
    client.rmUses = 0
    client.rmCreatedAt = Date.now()
    client.rmIdleSince = 0
    client.rmIdle = false
    client.rmBroken = false
    this.#all.add(client)
    const broken = (err?: unknown): void => {
      client.rmBroken = true
      if (!client.rmIdle) return // checked out: its user sees the error and releases it
      this.#dropIdle(client)
      this.#remove(client, true)
      if (err !== undefined) this.#onError(err)
    }
    client.on('error', broken)
    client.on('end', () => broken())
    client.connect((err: Error | null | undefined) => {
      if (err != null) {
        client.rmBroken = true
        this.#remove(client, true)
        cb(err)
        this.#serveWaiters()
        return
      }
      if (this.#ending) {
        this.#remove(client, false)
        cb(new Error('Cannot use a pool after calling end on the pool'))
        return
      }
      const onConnect = this.#options.onConnect
      if (onConnect === undefined) {
        this.#verify(client, cb)
        return
      }
      const failed = (herr: unknown): void => this.#failNew(client, cb, herr ?? new Error('onConnect failed'))
      let hooked: unknown
      try {
        hooked = onConnect(client)
      } catch (herr) {
        failed(herr)
        return
      }
      Promise.resolve(hooked).then(() => this.#verify(client, cb), failed)
    })
  }

  /** Runs `verify` (if any) on a new connection, then hands it out. */
  #verify(client: PooledClient, cb: Callback): void {
    const verify = this.#options.verify
    if (verify === undefined) {
      cb(undefined, client)
      return
    }
    verify(client, (verr) => {
      if (verr == null) cb(undefined, client)
      else this.#failNew(client, cb, verr)
    })
  }

  /** A new connection failed its `onConnect` or `verify`: close it, fail its checkout, let a waiter try. */
  #failNew(client: PooledClient, cb: Callback, err: unknown): void {
    this.#remove(client, true)
    cb(err)
    this.#serveWaiters()
  }

  /** Queues a checkout of a full pool, or fails it at once when `maxWaiting` others wait. */
  #wait(cb: Callback): void {
    const waiters = this.#waiters
    if (waiters.length >= this.#maxWaiting) {
      cb(this.#exhausted('queue-full', 0))
      return
    }
    waiters.push({ cb, since: performance.now() })
    if (this.#waitLimitMs > 0 && this.#waitTimer === undefined) this.#armWaitTimer()
  }

  #exhausted(reason: 'timeout' | 'queue-full', waitedMs: number): PoolExhaustedError {
    return new PoolExhaustedError({
      node: this.#name,
      reason,
      waitedMs,
      max: this.#options.max,
      waiting: this.#waiters.length,
      limit: reason === 'timeout' ? this.#waitLimitMs : this.#maxWaiting,
    })
  }

  /** Arms the pool's one wait timer for the oldest waiter's deadline (waiters are in arrival order). */
  #armWaitTimer(): void {
    const oldest = this.#waiters[0]
    if (oldest === undefined || this.#ending) return
    const due = Math.min(Math.max(oldest.since + this.#waitLimitMs - performance.now(), 1), MAX_TIMER_MS)
    this.#waitTimer = setTimeout(() => this.#expireWaiters(), due)
    // A waiting checkout does not keep the process alive by itself (as pg.Pool's timer).
    this.#waitTimer.unref()
  }

  /** Fails every waiter that waited `connectionTimeoutMillis`, oldest first; re-arms for the next. */
  #expireWaiters(): void {
    this.#waitTimer = undefined
    const now = performance.now()
    const waiters = this.#waiters
    while (waiters.length > 0) {
      const oldest = waiters[0] as Waiter
      const waited = now - oldest.since
      if (waited < this.#waitLimitMs) break
      waiters.shift()
      oldest.cb(this.#exhausted('timeout', Math.round(waited)))
    }
    if (waiters.length > 0 && this.#waitTimer === undefined) this.#armWaitTimer()
  }

  /** Opens connections for waiters while there is room (after a connection was removed). */
  #serveWaiters(): void {
    while (this.#waiters.length > 0 && this.#all.size < this.#options.max && !this.#ending) {
      this.#open((this.#waiters.shift() as Waiter).cb)
    }
  }

  #expired(client: PooledClient): boolean {
    const life = this.#options.maxLifetimeSeconds
    return life > 0 && Date.now() - client.rmCreatedAt >= life * 1000
  }

  #dropIdle(client: PooledClient): void {
    const i = this.#idle.indexOf(client)
    if (i >= 0) this.#idle.splice(i, 1)
    client.rmIdle = false
  }

  /** Forgets a connection and closes it: `destroy` drops the socket, else a polite `end()`. */
  #remove(client: PooledClient, destroy: boolean): void {
    if (!this.#all.delete(client)) return
    this.#closing++
    const closed = (): void => {
      this.#closing--
      this.#checkDrained()
    }
    if (destroy) {
      destroyClient(client)
      client.end().then(closed, closed)
    } else {
      client.end().then(closed, () => {
        destroyClient(client)
        closed()
      })
    }
    client.on('error', noop) // late socket errors of a client being closed
  }

  #checkDrained(): void {
    if (this.#onDrained !== undefined && this.#all.size === 0 && this.#closing === 0) {
      const done = this.#onDrained
      this.#onDrained = undefined
      done()
    }
  }

  /** Arms the pool's one idle timer for the oldest idle connection's deadline. */
  #armIdleTimer(): void {
    const ms = this.#options.idleTimeoutMillis
    if (ms <= 0 || this.#idleTimer !== undefined || this.#ending) return
    const oldest = this.#idle[0]
    if (oldest === undefined) return
    // Capped: Node fires a longer delay after 1 ms, which would re-arm every ms; #closeIdle re-arms.
    const due = Math.min(Math.max(oldest.rmIdleSince + ms - Date.now(), 1), MAX_TIMER_MS)
    this.#idleTimer = setTimeout(() => this.#closeIdle(), due)
    // Idle sockets keep the process alive unless allowExitOnIdle; the timer itself never does.
    this.#idleTimer.unref()
  }

  #closeIdle(): void {
    this.#idleTimer = undefined
    const deadline = Date.now() - this.#options.idleTimeoutMillis
    const idle = this.#idle
    let n = 0
    while (n < idle.length && this.#all.size - n > this.#options.min) {
      const client = idle[n] as PooledClient
      if (client.rmIdleSince > deadline) break
      n++
    }
    for (const client of idle.splice(0, n)) {
      client.rmIdle = false
      this.#remove(client, false)
    }
    if (this.#all.size > this.#options.min) this.#armIdleTimer()
  }
}
