import { EventEmitter } from 'node:events'
import type pg from 'pg'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { PoolExhaustedError } from '../errors/pool-exhausted-error.js'
import { MAX_TIMER_MS } from '../router/config-checks.js'
import { PgClientPool, type PgClientPoolOptions, type PooledClient } from './pg-client-pool.js'

type ConnectMode = 'sync' | 'tick' | 'manual'

interface Control {
  /** How `connect` calls back: at once, on a microtask, or when the test calls `finishConnect`. */
  mode: ConnectMode
  /** Errors for the next connects, in order (`undefined` = succeed). */
  connectErrors: (Error | undefined)[]
  /** Make `end()` reject (a polite close that fails). */
  endRejects: boolean
  /** Make `end()` wait until the test calls `finishEnd`. */
  holdEnd: boolean
}

/** A `pg.Client` stand-in: pure bookkeeping, no socket. */
class FakeClient extends EventEmitter {
  readonly id: number
  _queryable = false
  _ending = false
  password: unknown = undefined
  endCalls = 0
  readonly connection = { stream: { destroy: vi.fn(), ref: vi.fn(), unref: vi.fn() } }
  readonly #control: Control
  #pendingConnect: ((err?: Error) => void) | undefined = undefined
  #pendingEnd: (() => void) | undefined = undefined
  #endEmitted = false

  constructor(id: number, control: Control) {
    super()
    this.id = id
    this.#control = control
  }

  connect(cb: (err: Error | null) => void): void {
    const planned = this.#control.connectErrors.shift()
    const finish = (err?: Error): void => {
      if (err === undefined) this._queryable = true
      cb(err ?? null)
    }
    if (this.#control.mode === 'sync') finish(planned)
    else if (this.#control.mode === 'tick') queueMicrotask(() => finish(planned))
    else this.#pendingConnect = (err) => finish(err ?? planned)
  }

  /** Completes a connect started in `manual` mode. */
  finishConnect(err?: Error): void {
    const pending = this.#pendingConnect
    if (pending === undefined) throw new Error(`client ${this.id} has no connect pending`)
    this.#pendingConnect = undefined
    pending(err)
  }

  end(): Promise<void> {
    this.endCalls++
    this._ending = true
    this._queryable = false
    if (this.#control.endRejects) return Promise.reject(new Error('end failed'))
    return new Promise((resolve) => {
      const finish = (): void => {
        if (!this.#endEmitted) {
          this.#endEmitted = true
          this.emit('end')
        }
        resolve()
      }
      if (this.#control.holdEnd) this.#pendingEnd = finish
      else queueMicrotask(finish)
    })
  }

  /** Completes an `end()` started while `holdEnd` was set. */
  finishEnd(): void {
    const pending = this.#pendingEnd
    if (pending === undefined) throw new Error(`client ${this.id} has no end pending`)
    this.#pendingEnd = undefined
    pending()
  }

  get closed(): boolean {
    return this.endCalls > 0
  }

  get destroyed(): boolean {
    return this.connection.stream.destroy.mock.calls.length > 0
  }
}

const defaults: PgClientPoolOptions = {
  max: 10,
  min: 0,
  idleTimeoutMillis: 0,
  maxUses: Number.MAX_SAFE_INTEGER,
  maxLifetimeSeconds: 0,
  allowExitOnIdle: false,
  verify: undefined,
}

/** A pool over fake clients; `created` lists every client it opened, in order. */
function makePool(options: Partial<PgClientPoolOptions> = {}, mode: ConnectMode = 'sync') {
  const control: Control = { mode, connectErrors: [], endRejects: false, holdEnd: false }
  const created: FakeClient[] = []
  class Client extends FakeClient {
    constructor() {
      super(created.length + 1, control)
      created.push(this)
    }
  }
  const errors: unknown[] = []
  const pool = new PgClientPool(
    Client as unknown as new () => pg.Client,
    { ...defaults, ...options },
    (err) => errors.push(err),
    'replica1',
  )
  return { pool, created, control, errors }
}

interface Checkout {
  done: boolean
  err: unknown
  client: FakeClient | undefined
  pooled: PooledClient | undefined
}

/** Starts a checkout; the returned record fills in when the pool calls back. */
function checkout(pool: PgClientPool): Checkout {
  const r: Checkout = { done: false, err: undefined, client: undefined, pooled: undefined }
  pool.acquireCallback((err, client) => {
    if (r.done) throw new Error('called back twice')
    r.done = true
    r.err = err
    r.pooled = client
    r.client = client as unknown as FakeClient | undefined
  })
  return r
}

/** A checkout that must complete synchronously with a connection. */
function take(pool: PgClientPool): PooledClient {
  const r = checkout(pool)
  if (!r.done || r.pooled === undefined)
    throw new Error(`checkout did not complete at once: ${String(r.err)}`)
  return r.pooled
}

const fake = (c: PooledClient | undefined): FakeClient => c as unknown as FakeClient
const pooled = (c: FakeClient | undefined): PooledClient => c as unknown as PooledClient
const flush = () => new Promise<void>((resolve) => setImmediate(resolve))

afterEach(() => {
  vi.restoreAllMocks()
  vi.useRealTimers()
})

describe('PgClientPool checkout and release', () => {
  it('hands an idle connection out synchronously, the most recently released first', async () => {
    const { pool, created } = makePool({}, 'tick')
    const [a, b, c] = await Promise.all([pool.acquire(), pool.acquire(), pool.acquire()])
    pool.release(a!, false)
    pool.release(b!, false)
    pool.release(c!, false)
    expect(pool.counts()).toEqual({ total: 3, idle: 3, waiting: 0 })

    const first = checkout(pool)
    expect(first.done).toBe(true)
    expect(first.pooled).toBe(c)
    expect(pool.counts()).toEqual({ total: 3, idle: 2, waiting: 0 })

    const second = checkout(pool)
    expect(second.pooled).toBe(b)
    expect(pool.counts()).toEqual({ total: 3, idle: 1, waiting: 0 })

    pool.release(c!, false)
    expect(take(pool)).toBe(c)
    expect(created).toHaveLength(3)
  })

  it('counts a connecting connection in total, and it is not idle', async () => {
    const { pool, created } = makePool({}, 'manual')
    const r = checkout(pool)
    expect(r.done).toBe(false)
    expect(pool.counts()).toEqual({ total: 1, idle: 0, waiting: 0 })
    created[0]!.finishConnect()
    expect(r.client).toBe(created[0])
    expect(pool.counts()).toEqual({ total: 1, idle: 0, waiting: 0 })
    pool.release(r.pooled!, false)
    expect(pool.counts()).toEqual({ total: 1, idle: 1, waiting: 0 })
  })

  it('never opens more than max connections: extra callers wait', () => {
    const { pool, created } = makePool({ max: 2 })
    const a = checkout(pool)
    const b = checkout(pool)
    const c = checkout(pool)
    const d = checkout(pool)
    expect([a.done, b.done, c.done, d.done]).toEqual([true, true, false, false])
    expect(created).toHaveLength(2)
    expect(pool.counts()).toEqual({ total: 2, idle: 0, waiting: 2 })
  })

  it('counts connections still connecting against max', () => {
    const { pool, created } = makePool({ max: 2 }, 'manual')
    checkout(pool)
    checkout(pool)
    const third = checkout(pool)
    expect(created).toHaveLength(2)
    expect(third.done).toBe(false)
    expect(pool.counts()).toEqual({ total: 2, idle: 0, waiting: 1 })
  })

  it('serves waiters in FIFO order, a release handing the connection straight to the first waiter', () => {
    const { pool, created } = makePool({ max: 2 })
    const a = take(pool)
    const b = take(pool)
    const w1 = checkout(pool)
    const w2 = checkout(pool)
    const w3 = checkout(pool)

    pool.release(b, false)
    expect(w1.pooled).toBe(b)
    expect([w2.done, w3.done]).toEqual([false, false])
    expect(pool.counts()).toEqual({ total: 2, idle: 0, waiting: 2 })
    expect(b.rmIdle).toBe(false)

    pool.release(a, false)
    expect(w2.pooled).toBe(a)
    expect(w3.done).toBe(false)

    pool.release(w1.pooled!, false)
    expect(w3.pooled).toBe(b)
    expect(pool.counts()).toEqual({ total: 2, idle: 0, waiting: 0 })
    expect(created).toHaveLength(2)
  })

  it('ignores the release of a client it does not know', () => {
    const { pool } = makePool()
    const stranger = new FakeClient(99, {
      mode: 'sync',
      connectErrors: [],
      endRejects: false,
      holdEnd: false,
    })
    pool.release(pooled(stranger), false)
    pool.release(pooled(stranger), true)
    expect(pool.counts()).toEqual({ total: 0, idle: 0, waiting: 0 })
    expect(stranger.closed).toBe(false)
    expect(stranger.destroyed).toBe(false)
  })

  it('ignores a second release of an idle client: it is idle once and handed out once', () => {
    const { pool, created } = makePool()
    const a = take(pool)
    pool.release(a, false)
    pool.release(a, false)
    pool.release(a, true)
    expect(pool.counts()).toEqual({ total: 1, idle: 1, waiting: 0 })
    expect(a.rmUses).toBe(1)
    expect(fake(a).closed).toBe(false)
    expect(take(pool)).toBe(a)
    expect(take(pool)).not.toBe(a)
    expect(created).toHaveLength(2)
  })
})

describe('PgClientPool closing connections on release', () => {
  it('release(c, true) destroys the socket and forgets the connection', () => {
    const { pool } = makePool()
    const a = take(pool)
    pool.release(a, true)
    expect(fake(a).destroyed).toBe(true)
    expect(fake(a).closed).toBe(true)
    expect(pool.counts()).toEqual({ total: 0, idle: 0, waiting: 0 })
  })

  it('release(c, true) while someone waits opens a NEW connection for the waiter', () => {
    const { pool, created } = makePool({ max: 1 })
    const a = take(pool)
    const w = checkout(pool)
    pool.release(a, true)
    expect(w.done).toBe(true)
    expect(w.client).toBe(created[1])
    expect(w.pooled).not.toBe(a)
    expect(pool.counts()).toEqual({ total: 1, idle: 0, waiting: 0 })
  })

  it('closes a connection that emitted error while checked out, instead of reusing it', () => {
    const { pool, created, errors } = makePool()
    const a = take(pool)
    fake(a).emit('error', new Error('connection reset'))
    expect(pool.counts()).toEqual({ total: 1, idle: 0, waiting: 0 })
    pool.release(a, false)
    expect(fake(a).closed).toBe(true)
    expect(pool.counts()).toEqual({ total: 0, idle: 0, waiting: 0 })
    expect(take(pool)).toBe(pooled(created[1]))
    expect(errors).toEqual([])
  })

  it('closes a connection that ended while checked out, on release', () => {
    const { pool } = makePool()
    const a = take(pool)
    fake(a).emit('end')
    pool.release(a, false)
    expect(fake(a).closed).toBe(true)
    expect(pool.counts().total).toBe(0)
  })

  it('closes a connection pg marks as no longer queryable, on release', () => {
    const { pool } = makePool()
    const a = take(pool)
    fake(a)._queryable = false
    pool.release(a, false)
    expect(fake(a).closed).toBe(true)
    expect(pool.counts()).toEqual({ total: 0, idle: 0, waiting: 0 })
  })

  it('closes a connection pg marks as ending, on release', () => {
    const { pool } = makePool()
    const a = take(pool)
    fake(a)._ending = true
    pool.release(a, false)
    expect(fake(a).closed).toBe(true)
    expect(pool.counts().total).toBe(0)
  })

  it('a closed connection while someone waits: the waiter gets a new connection', () => {
    const { pool, created } = makePool({ max: 1 })
    const a = take(pool)
    const w = checkout(pool)
    fake(a).emit('error', new Error('boom'))
    pool.release(a, false)
    expect(w.client).toBe(created[1])
  })

  it('falls back to destroying the socket when a polite close fails', async () => {
    const { pool, control } = makePool()
    const a = take(pool)
    control.endRejects = true
    fake(a)._queryable = false
    pool.release(a, false)
    expect(fake(a).destroyed).toBe(false)
    await flush()
    expect(fake(a).destroyed).toBe(true)
  })
})

describe('PgClientPool idle connections that break', () => {
  it('removes an idle connection that emits error at once, and passes the error to onError', () => {
    const { pool, created, errors } = makePool()
    const a = take(pool)
    const b = take(pool)
    pool.release(a, false)
    pool.release(b, false)
    const err = new Error('terminating connection due to administrator command')
    fake(a).emit('error', err)
    expect(errors).toEqual([err])
    expect(fake(a).destroyed).toBe(true)
    expect(pool.counts()).toEqual({ total: 1, idle: 1, waiting: 0 })
    expect(take(pool)).toBe(b)
    expect(take(pool)).toBe(pooled(created[2]))
  })

  it('removes an idle connection that ends at once, without calling onError', () => {
    const { pool, created, errors } = makePool()
    const a = take(pool)
    pool.release(a, false)
    fake(a).emit('end')
    expect(pool.counts()).toEqual({ total: 0, idle: 0, waiting: 0 })
    expect(errors).toEqual([])
    expect(take(pool)).toBe(pooled(created[1]))
  })

  it('does not crash on errors a connection emits while being closed', async () => {
    const { pool, errors } = makePool()
    const a = take(pool)
    pool.release(a, true)
    expect(() => fake(a).emit('error', new Error('late socket error'))).not.toThrow()
    await flush()
    expect(errors).toEqual([])
  })
})

describe('PgClientPool connect failures', () => {
  it('calls back with the connect error, and the failed connection is not counted', () => {
    const { pool, control, created } = makePool()
    const refused = new Error('connect ECONNREFUSED')
    control.connectErrors.push(refused)
    const r = checkout(pool)
    expect(r.done).toBe(true)
    expect(r.err).toBe(refused)
    expect(r.client).toBeUndefined()
    expect(pool.counts()).toEqual({ total: 0, idle: 0, waiting: 0 })
    expect(created[0]!.destroyed).toBe(true)
  })

  it('rejects acquire() with the connect error', async () => {
    const { pool, control } = makePool({}, 'tick')
    control.connectErrors.push(new Error('password authentication failed'))
    await expect(pool.acquire()).rejects.toThrow('password authentication failed')
    expect(pool.counts().total).toBe(0)
  })

  it('gives a waiter queued behind a failed connect a fresh connect attempt', () => {
    const { pool, created } = makePool({ max: 1 }, 'manual')
    const first = checkout(pool)
    const waiter = checkout(pool)
    expect(pool.counts()).toEqual({ total: 1, idle: 0, waiting: 1 })

    created[0]!.finishConnect(new Error('timeout expired'))
    expect(first.err).toBeInstanceOf(Error)
    expect(waiter.done).toBe(false)
    expect(created).toHaveLength(2)
    expect(pool.counts()).toEqual({ total: 1, idle: 0, waiting: 0 })

    created[1]!.finishConnect()
    expect(waiter.err).toBeUndefined()
    expect(waiter.client).toBe(created[1])
  })

  it('fails each waiter in turn when every connect fails, leaving nothing open', () => {
    const { pool, control, created } = makePool({ max: 1 }, 'manual')
    const first = checkout(pool)
    const w1 = checkout(pool)
    const w2 = checkout(pool)
    control.mode = 'sync'
    control.connectErrors.push(new Error('down 2'), new Error('down 3'))
    created[0]!.finishConnect(new Error('down 1'))
    expect([first, w1, w2].map((r) => (r.err as Error).message)).toEqual(['down 1', 'down 2', 'down 3'])
    expect(created).toHaveLength(3)
    expect(pool.counts()).toEqual({ total: 0, idle: 0, waiting: 0 })
  })
})

/** Fake `setTimeout` and `Date` only: microtasks and `setImmediate` stay real. */
function fakeClock(): void {
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'],
    now: new Date('2030-01-01T00:00:00Z'),
  })
}

describe('PgClientPool maxUses and maxLifetimeSeconds', () => {
  it('closes a connection after maxUses checkouts', () => {
    const { pool, created } = makePool({ maxUses: 3 })
    const a = take(pool)
    pool.release(a, false)
    expect(take(pool)).toBe(a)
    pool.release(a, false)
    expect(take(pool)).toBe(a)
    expect(fake(a).closed).toBe(false)
    pool.release(a, false)
    expect(fake(a).closed).toBe(true)
    expect(fake(a).destroyed).toBe(false)
    expect(pool.counts()).toEqual({ total: 0, idle: 0, waiting: 0 })
    expect(take(pool)).toBe(pooled(created[1]))
  })

  it('counts checkouts handed straight to a waiter towards maxUses', () => {
    const { pool, created } = makePool({ max: 1, maxUses: 2 })
    const a = take(pool)
    const w1 = checkout(pool)
    const w2 = checkout(pool)
    pool.release(a, false)
    expect(w1.pooled).toBe(a)
    pool.release(a, false)
    expect(fake(a).closed).toBe(true)
    expect(w2.client).toBe(created[1])
  })

  it('closes a connection maxLifetimeSeconds old when it is released', () => {
    fakeClock()
    const { pool } = makePool({ maxLifetimeSeconds: 60 })
    const a = take(pool)
    vi.advanceTimersByTime(60_000)
    pool.release(a, false)
    expect(fake(a).closed).toBe(true)
    expect(pool.counts()).toEqual({ total: 0, idle: 0, waiting: 0 })
  })

  it('keeps a connection younger than maxLifetimeSeconds', () => {
    fakeClock()
    const { pool } = makePool({ maxLifetimeSeconds: 60 })
    const a = take(pool)
    vi.advanceTimersByTime(59_999)
    pool.release(a, false)
    expect(fake(a).closed).toBe(false)
    expect(take(pool)).toBe(a)
  })

  it('skips an idle connection that expired, closing it, and opens a new one at checkout', () => {
    fakeClock()
    const { pool, created } = makePool({ maxLifetimeSeconds: 1 })
    const a = take(pool)
    pool.release(a, false)
    vi.advanceTimersByTime(1_000)
    const b = take(pool)
    expect(b).toBe(pooled(created[1]))
    expect(fake(a).closed).toBe(true)
    expect(fake(a).destroyed).toBe(false)
    expect(pool.counts()).toEqual({ total: 1, idle: 0, waiting: 0 })
  })

  it('skips every expired idle connection at checkout and hands out a fresh idle one', () => {
    fakeClock()
    const { pool } = makePool({ maxLifetimeSeconds: 10 })
    const old1 = take(pool)
    const old2 = take(pool)
    vi.advanceTimersByTime(5_000)
    const young = take(pool)
    pool.release(young, false)
    pool.release(old1, false)
    pool.release(old2, false)
    vi.advanceTimersByTime(5_000)
    expect(take(pool)).toBe(young)
    expect([fake(old1).closed, fake(old2).closed]).toEqual([true, true])
    expect(pool.counts()).toEqual({ total: 1, idle: 0, waiting: 0 })
  })

  it('maxLifetimeSeconds 0 never expires a connection', () => {
    fakeClock()
    const { pool } = makePool({ maxLifetimeSeconds: 0 })
    const a = take(pool)
    vi.advanceTimersByTime(365 * 86_400_000)
    pool.release(a, false)
    expect(take(pool)).toBe(a)
  })
})

describe('PgClientPool idle timeout', () => {
  it('closes idle connections older than idleTimeoutMillis, oldest first, with one timer', () => {
    fakeClock()
    const { pool } = makePool({ idleTimeoutMillis: 100 })
    const a = take(pool)
    const b = take(pool)
    pool.release(a, false)
    vi.advanceTimersByTime(50)
    pool.release(b, false)
    expect(vi.getTimerCount()).toBe(1)

    vi.advanceTimersByTime(50)
    expect(fake(a).closed).toBe(true)
    expect(fake(a).destroyed).toBe(false)
    expect(fake(b).closed).toBe(false)
    expect(pool.counts()).toEqual({ total: 1, idle: 1, waiting: 0 })

    vi.advanceTimersByTime(49)
    expect(fake(b).closed).toBe(false)
    vi.advanceTimersByTime(1)
    expect(fake(b).closed).toBe(true)
    expect(pool.counts()).toEqual({ total: 0, idle: 0, waiting: 0 })
    expect(vi.getTimerCount()).toBe(0)
  })

  it('never closes idle connections below min, keeping the most recently used', () => {
    fakeClock()
    const { pool } = makePool({ idleTimeoutMillis: 100, min: 1 })
    const a = take(pool)
    const b = take(pool)
    const c = take(pool)
    pool.release(a, false)
    pool.release(b, false)
    pool.release(c, false)
    vi.advanceTimersByTime(60_000)
    expect([fake(a).closed, fake(b).closed, fake(c).closed]).toEqual([true, true, false])
    expect(pool.counts()).toEqual({ total: 1, idle: 1, waiting: 0 })
    expect(vi.getTimerCount()).toBe(0)
  })

  it('counts checked-out connections towards min', () => {
    fakeClock()
    const { pool } = makePool({ idleTimeoutMillis: 100, min: 2 })
    const a = take(pool)
    const b = take(pool)
    const c = take(pool)
    pool.release(a, false)
    pool.release(b, false)
    vi.advanceTimersByTime(60_000)
    expect([fake(a).closed, fake(b).closed, fake(c).closed]).toEqual([true, false, false])
    expect(pool.counts()).toEqual({ total: 2, idle: 1, waiting: 0 })
  })

  it('idleTimeoutMillis 0 keeps idle connections and arms no timer', () => {
    fakeClock()
    const { pool } = makePool({ idleTimeoutMillis: 0 })
    const a = take(pool)
    const b = take(pool)
    pool.release(a, false)
    pool.release(b, false)
    expect(vi.getTimerCount()).toBe(0)
    vi.advanceTimersByTime(86_400_000)
    expect(pool.counts()).toEqual({ total: 2, idle: 2, waiting: 0 })
    expect([fake(a).closed, fake(b).closed]).toEqual([false, false])
  })

  it('arms at most one timer across 100 checkout/release cycles', () => {
    fakeClock()
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout')
    const { pool } = makePool({ idleTimeoutMillis: 10_000 })
    for (let i = 0; i < 100; i++) {
      const a = take(pool)
      const b = take(pool)
      pool.release(b, false)
      pool.release(a, false)
      vi.advanceTimersByTime(1)
    }
    expect(setTimeoutSpy.mock.calls.length).toBeLessThanOrEqual(1)
    expect(vi.getTimerCount()).toBeLessThanOrEqual(1)
    expect(pool.counts()).toEqual({ total: 2, idle: 2, waiting: 0 })
  })

  it('re-arms for the oldest idle deadline when the timer fires before anything is due', () => {
    fakeClock()
    const { pool } = makePool({ idleTimeoutMillis: 100 })
    const a = take(pool)
    pool.release(a, false)
    vi.advanceTimersByTime(60)
    expect(take(pool)).toBe(a)
    vi.advanceTimersByTime(10)
    pool.release(a, false)
    vi.advanceTimersByTime(30)
    expect(fake(a).closed).toBe(false)
    expect(vi.getTimerCount()).toBe(1)
    vi.advanceTimersByTime(69)
    expect(fake(a).closed).toBe(false)
    vi.advanceTimersByTime(1)
    expect(fake(a).closed).toBe(true)
  })

  it('arms the idle timer again when connections go idle after it found none to wait for', () => {
    fakeClock()
    const { pool } = makePool({ idleTimeoutMillis: 100 })
    const a = take(pool)
    pool.release(a, false)
    vi.advanceTimersByTime(100)
    expect(fake(a).closed).toBe(true)
    const b = take(pool)
    pool.release(b, false)
    vi.advanceTimersByTime(100)
    expect(fake(b).closed).toBe(true)
  })

  it('an idleTimeoutMillis beyond the largest timer delay arms one timer, not one per millisecond', async () => {
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => {})
    const pause = new Promise((resolve) => setTimeout(resolve, 30))
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout')
    const { pool } = makePool({ idleTimeoutMillis: 3_000_000_000 })
    pool.release(take(pool), false)
    await pause
    expect(setTimeoutSpy).toHaveBeenCalledTimes(1)
    expect(setTimeoutSpy.mock.calls[0]?.[1]).toBe(MAX_TIMER_MS)
    expect(warnings).not.toHaveBeenCalled()
    expect(pool.counts()).toEqual({ total: 1, idle: 1, waiting: 0 })
    await pool.end()
  })

  it('an idleTimeoutMillis beyond the largest timer delay still closes the connection when due', () => {
    fakeClock()
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout')
    const { pool } = makePool({ idleTimeoutMillis: 3_000_000_000 })
    const a = take(pool)
    pool.release(a, false)
    vi.advanceTimersByTime(10)
    expect(setTimeoutSpy).toHaveBeenCalledTimes(1)
    vi.advanceTimersByTime(2_999_999_989)
    expect(fake(a).closed).toBe(false)
    vi.advanceTimersByTime(1)
    expect(fake(a).closed).toBe(true)
  })

  it('the idle timer does not keep the process alive', async () => {
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout')
    const { pool } = makePool({ idleTimeoutMillis: 10_000 })
    pool.release(take(pool), false)
    expect(setTimeoutSpy).toHaveBeenCalledTimes(1)
    const timer = setTimeoutSpy.mock.results[0]?.value as NodeJS.Timeout
    expect(timer.hasRef()).toBe(false)
    await pool.end()
  })
})

describe('PgClientPool allowExitOnIdle', () => {
  it("unrefs an idle connection's socket, and refs it again at checkout", () => {
    const { pool } = makePool({ allowExitOnIdle: true })
    const a = take(pool)
    const stream = fake(a).connection.stream
    expect(stream.unref).not.toHaveBeenCalled()
    pool.release(a, false)
    expect(stream.unref).toHaveBeenCalledTimes(1)
    expect(stream.ref).not.toHaveBeenCalled()
    expect(take(pool)).toBe(a)
    expect(stream.ref).toHaveBeenCalledTimes(1)
  })

  it('does not unref a connection handed straight to a waiter', () => {
    const { pool } = makePool({ allowExitOnIdle: true, max: 1 })
    const a = take(pool)
    const w = checkout(pool)
    pool.release(a, false)
    expect(w.pooled).toBe(a)
    expect(fake(a).connection.stream.unref).not.toHaveBeenCalled()
  })

  it('without allowExitOnIdle, never touches the socket ref', () => {
    const { pool } = makePool({ allowExitOnIdle: false })
    const a = take(pool)
    pool.release(a, false)
    take(pool)
    expect(fake(a).connection.stream.unref).not.toHaveBeenCalled()
    expect(fake(a).connection.stream.ref).not.toHaveBeenCalled()
  })
})

describe('PgClientPool verify', () => {
  it('calls verify once per new connection, not when reusing one', () => {
    const verify = vi.fn((_client: pg.Client, done: (err?: unknown) => void) => done())
    const { pool } = makePool({ verify })
    const a = take(pool)
    pool.release(a, false)
    expect(take(pool)).toBe(a)
    const b = take(pool)
    expect(verify).toHaveBeenCalledTimes(2)
    expect(verify.mock.calls.map((call) => call[0])).toEqual([a, b])
  })

  it('hands the connection out only once verify calls done', () => {
    let done: ((err?: unknown) => void) | undefined
    const { pool, created } = makePool({ verify: (_c, d) => (done = d) })
    const r = checkout(pool)
    expect(r.done).toBe(false)
    done!()
    expect(r.client).toBe(created[0])
  })

  it('a verify error fails the checkout and destroys the connection', () => {
    const bad = new Error('not a primary')
    const { pool, created } = makePool({ verify: (_c, done) => done(bad) })
    const r = checkout(pool)
    expect(r.err).toBe(bad)
    expect(r.client).toBeUndefined()
    expect(created[0]!.destroyed).toBe(true)
    expect(pool.counts()).toEqual({ total: 0, idle: 0, waiting: 0 })
  })

  it('a verify error lets a waiter try a new connection', () => {
    const results: ((err?: unknown) => void)[] = []
    const { pool, created } = makePool({ max: 1, verify: (_c, done) => results.push(done) })
    const first = checkout(pool)
    const waiter = checkout(pool)
    results[0]!(new Error('verify failed'))
    expect(first.err).toBeInstanceOf(Error)
    expect(created).toHaveLength(2)
    results[1]!()
    expect(waiter.client).toBe(created[1])
  })
})

describe('PgClientPool end()', () => {
  it('fails waiters with an error', () => {
    const { pool } = makePool({ max: 1 })
    take(pool)
    const w1 = checkout(pool)
    const w2 = checkout(pool)
    void pool.end()
    expect(w1.err).toBeInstanceOf(Error)
    expect((w1.err as Error).message).toMatch(/ending/)
    expect(w2.err).toBeInstanceOf(Error)
    expect(pool.counts().waiting).toBe(0)
  })

  it('closes idle connections politely and resolves once they are closed', async () => {
    const { pool, control } = makePool()
    const a = take(pool)
    const b = take(pool)
    pool.release(a, false)
    pool.release(b, false)
    control.holdEnd = true
    let resolved = false
    const ended = pool.end().then(() => (resolved = true))
    expect([fake(a).closed, fake(b).closed]).toEqual([true, true])
    expect([fake(a).destroyed, fake(b).destroyed]).toEqual([false, false])
    expect(pool.counts()).toEqual({ total: 0, idle: 0, waiting: 0 })
    fake(a).finishEnd()
    await flush()
    expect(resolved).toBe(false)
    fake(b).finishEnd()
    await ended
    expect(resolved).toBe(true)
  })

  it('resolves only after checked-out connections are released and closed', async () => {
    const { pool } = makePool()
    const a = take(pool)
    let resolved = false
    const ended = pool.end().then(() => (resolved = true))
    await flush()
    expect(resolved).toBe(false)
    expect(fake(a).closed).toBe(false)
    pool.release(a, false)
    expect(fake(a).closed).toBe(true)
    expect(pool.counts().total).toBe(0)
    await ended
    expect(resolved).toBe(true)
  })

  it('resolves at once when nothing is open', async () => {
    const { pool } = makePool()
    await expect(pool.end()).resolves.toBeUndefined()
  })

  it('fails a checkout after end()', async () => {
    const { pool, created } = makePool()
    await pool.end()
    const r = checkout(pool)
    expect(r.err).toBeInstanceOf(Error)
    await expect(pool.acquire()).rejects.toThrow('Cannot use a pool after calling end on the pool')
    expect(created).toHaveLength(0)
  })

  it('returns the same promise when called twice', () => {
    const { pool } = makePool()
    take(pool)
    expect(pool.end()).toBe(pool.end())
  })

  it('closes a connection whose connect completes after end(), failing its caller', async () => {
    const { pool, created } = makePool({}, 'manual')
    const r = checkout(pool)
    let resolved = false
    const ended = pool.end().then(() => (resolved = true))
    await flush()
    expect(resolved).toBe(false)
    created[0]!.finishConnect()
    expect(r.err).toBeInstanceOf(Error)
    expect(r.client).toBeUndefined()
    expect(created[0]!.closed).toBe(true)
    await ended
  })

  it('a connect failing after end() fails its caller, and end() then resolves', async () => {
    const { pool, created } = makePool({}, 'manual')
    const r = checkout(pool)
    const ended = pool.end()
    created[0]!.finishConnect(new Error('refused'))
    expect((r.err as Error).message).toBe('refused')
    expect(created).toHaveLength(1)
    await expect(ended).resolves.toBeUndefined()
  })

  it('clears the idle timer', async () => {
    fakeClock()
    const { pool } = makePool({ idleTimeoutMillis: 100 })
    pool.release(take(pool), false)
    expect(vi.getTimerCount()).toBe(1)
    await pool.end()
    expect(vi.getTimerCount()).toBe(0)
  })
})

describe('PgClientPool checkout wait (connectionTimeoutMillis)', () => {
  it('fails a waiter of a full pool after connectionTimeoutMillis with a PoolExhaustedError', () => {
    fakeClock()
    const { pool } = makePool({ max: 1, connectionTimeoutMillis: 500 })
    take(pool)
    const w = checkout(pool)
    vi.advanceTimersByTime(499)
    expect(w.done).toBe(false)
    vi.advanceTimersByTime(1)
    expect(w.done).toBe(true)
    expect(w.err).toBeInstanceOf(PoolExhaustedError)
    const err = w.err as PoolExhaustedError
    expect([err.node, err.reason, err.waitedMs, err.max, err.waiting, err.limit]).toEqual([
      'replica1',
      'timeout',
      500,
      1,
      0,
      500,
    ])
    expect(err.code).toBe('ROUTEMATE_POOL_EXHAUSTED')
    expect(err.message).toMatch(/^timeout exceeded when trying to connect: waited 500 ms/)
    expect(err.message).toContain('node "replica1"')
    expect(pool.counts()).toEqual({ total: 1, idle: 0, waiting: 0 })
  })

  it('a waiter served before the limit is not failed later, and the connection it got is not touched', () => {
    fakeClock()
    const { pool } = makePool({ max: 1, connectionTimeoutMillis: 500 })
    const a = take(pool)
    const w = checkout(pool)
    vi.advanceTimersByTime(300)
    pool.release(a, false)
    expect(w.pooled).toBe(a)
    vi.advanceTimersByTime(10_000)
    expect(w.err).toBeUndefined()
    expect(fake(a).closed).toBe(false)
  })

  it('fails waiters in arrival order, each at its own deadline, with one timer', () => {
    fakeClock()
    const { pool } = makePool({ max: 1, connectionTimeoutMillis: 500 })
    take(pool)
    const w1 = checkout(pool)
    vi.advanceTimersByTime(100)
    const w2 = checkout(pool)
    vi.advanceTimersByTime(100)
    const w3 = checkout(pool)
    expect(vi.getTimerCount()).toBe(1)
    vi.advanceTimersByTime(300) // t = 500: w1 due
    expect([w1.done, w2.done, w3.done]).toEqual([true, false, false])
    expect((w1.err as PoolExhaustedError).waiting).toBe(2)
    expect(vi.getTimerCount()).toBe(1)
    vi.advanceTimersByTime(100) // t = 600: w2 due
    expect([w2.done, w3.done]).toEqual([true, false])
    expect((w2.err as PoolExhaustedError).waitedMs).toBe(500)
    vi.advanceTimersByTime(100)
    expect(w3.err).toBeInstanceOf(PoolExhaustedError)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('fails waiters that are due together in one timer run', () => {
    fakeClock()
    const { pool } = makePool({ max: 1, connectionTimeoutMillis: 200 })
    take(pool)
    const ws = [checkout(pool), checkout(pool), checkout(pool)]
    vi.advanceTimersByTime(200)
    expect(ws.map((w) => (w.err as PoolExhaustedError | undefined)?.reason)).toEqual([
      'timeout',
      'timeout',
      'timeout',
    ])
    expect(ws.map((w) => (w.err as PoolExhaustedError).waiting)).toEqual([2, 1, 0])
  })

  it('arms no timer while nobody waits: a checkout of an idle connection and its release stay timer-free', () => {
    fakeClock()
    const { pool } = makePool({ max: 1, connectionTimeoutMillis: 500, idleTimeoutMillis: 0 })
    for (let i = 0; i < 100; i++) pool.release(take(pool), false)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('after the timer found the queue served, a new waiter arms it again', () => {
    fakeClock()
    const { pool } = makePool({ max: 1, connectionTimeoutMillis: 500 })
    const a = take(pool)
    const w1 = checkout(pool)
    pool.release(a, false) // w1 served; the armed timer finds nobody
    vi.advanceTimersByTime(500)
    expect(vi.getTimerCount()).toBe(0)
    const w2 = checkout(pool)
    expect(vi.getTimerCount()).toBe(1)
    vi.advanceTimersByTime(500)
    expect(w1.err).toBeUndefined()
    expect(w2.err).toBeInstanceOf(PoolExhaustedError)
  })

  it('connectionTimeoutMillis 0 waits however long (as pg.Pool)', () => {
    fakeClock()
    const { pool } = makePool({ max: 1, connectionTimeoutMillis: 0 })
    const a = take(pool)
    const w = checkout(pool)
    expect(vi.getTimerCount()).toBe(0)
    vi.advanceTimersByTime(3_600_000)
    expect(w.done).toBe(false)
    pool.release(a, false)
    expect(w.pooled).toBe(a)
  })

  it("does not bound opening a connection: a slow connect is the connect deadline's business", () => {
    fakeClock()
    const { pool, created } = makePool({ max: 1, connectionTimeoutMillis: 100 }, 'manual')
    const r = checkout(pool)
    vi.advanceTimersByTime(10_000)
    expect(r.done).toBe(false)
    created[0]!.finishConnect()
    expect(r.client).toBe(created[0])
  })

  it('a waiter handed a fresh connect (a connection was closed) is no longer timed', () => {
    fakeClock()
    const { pool, created, control } = makePool({ max: 1, connectionTimeoutMillis: 100 })
    const a = take(pool)
    const w = checkout(pool)
    control.mode = 'manual'
    pool.release(a, true) // closes it: a new connect starts for w
    expect(created).toHaveLength(2)
    vi.advanceTimersByTime(1000)
    expect(w.done).toBe(false)
    created[1]!.finishConnect()
    expect(w.client).toBe(created[1])
  })

  it('the wait timer does not keep the process alive', () => {
    const unref = vi.fn()
    const real = globalThis.setTimeout
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms: number) => {
      const t = real(fn, ms)
      const u = t.unref.bind(t)
      t.unref = () => {
        unref()
        return u()
      }
      return t
    }) as typeof setTimeout)
    const { pool } = makePool({ max: 1, connectionTimeoutMillis: 60_000 })
    const a = take(pool)
    checkout(pool)
    expect(unref).toHaveBeenCalledTimes(1)
    pool.release(a, false)
  })

  it('end() clears the wait timer and fails the waiters with the pool-ending error', async () => {
    fakeClock()
    const { pool } = makePool({ max: 1, connectionTimeoutMillis: 500 })
    const a = take(pool)
    const w = checkout(pool)
    expect(vi.getTimerCount()).toBe(1)
    const ended = pool.end()
    expect(vi.getTimerCount()).toBe(0)
    expect((w.err as Error).message).toBe('the pool is ending')
    expect(w.err).not.toBeInstanceOf(PoolExhaustedError)
    pool.release(a, false)
    await ended
  })
})

describe('PgClientPool waiting queue bound (maxWaiting)', () => {
  it('fails a checkout at once when maxWaiting checkouts already wait', () => {
    const { pool } = makePool({ max: 2, maxWaiting: 2 })
    take(pool)
    take(pool)
    const w1 = checkout(pool)
    const w2 = checkout(pool)
    const over = checkout(pool)
    expect([w1.done, w2.done]).toEqual([false, false])
    expect(over.done).toBe(true)
    expect(over.err).toBeInstanceOf(PoolExhaustedError)
    const err = over.err as PoolExhaustedError
    expect([err.reason, err.waitedMs, err.max, err.waiting, err.limit]).toEqual(['queue-full', 0, 2, 2, 2])
    expect(err.message).toContain(
      'pool exhausted: all 2 connections of node "replica1" busy and 2 checkouts already waiting',
    )
    expect(pool.counts()).toEqual({ total: 2, idle: 0, waiting: 2 })
  })

  it('maxWaiting 0 never queues: a full pool fails the checkout at once', () => {
    const { pool } = makePool({ max: 1, maxWaiting: 0 })
    const a = take(pool)
    const r = checkout(pool)
    expect((r.err as PoolExhaustedError).reason).toBe('queue-full')
    pool.release(a, false)
    expect(take(pool)).toBe(a)
  })

  it('a checkout that can open a connection or take an idle one is never refused by the bound', () => {
    const { pool } = makePool({ max: 2, maxWaiting: 0 })
    const a = take(pool)
    const b = take(pool)
    pool.release(a, false)
    expect(take(pool)).toBe(a)
    expect(b).toBeDefined()
  })

  it('makes room again as waiters are served', () => {
    const { pool } = makePool({ max: 1, maxWaiting: 1 })
    const a = take(pool)
    const w1 = checkout(pool)
    expect((checkout(pool).err as PoolExhaustedError).reason).toBe('queue-full')
    pool.release(a, false)
    expect(w1.pooled).toBe(a)
    const w2 = checkout(pool)
    expect(w2.done).toBe(false)
  })

  it('without maxWaiting the queue is unbounded (as pg.Pool)', () => {
    const { pool } = makePool({ max: 1 })
    take(pool)
    const ws = Array.from({ length: 1000 }, () => checkout(pool))
    expect(ws.some((w) => w.done)).toBe(false)
    expect(pool.counts().waiting).toBe(1000)
  })
})

describe('PgClientPool onConnect', () => {
  it('runs onConnect on each new connection, before verify, and hands it out after its promise resolves', async () => {
    const order: string[] = []
    let resolve: (() => void) | undefined
    const onConnect = vi.fn(() => {
      order.push('onConnect')
      return new Promise<void>((r) => (resolve = r))
    })
    const verify = vi.fn((_c: pg.Client, done: (err?: unknown) => void) => {
      order.push('verify')
      done()
    })
    const { pool, created } = makePool({ onConnect, verify })
    const r = checkout(pool)
    expect(onConnect).toHaveBeenCalledWith(created[0])
    await flush()
    expect(r.done).toBe(false)
    resolve!()
    await flush()
    expect(r.client).toBe(created[0])
    expect(order).toEqual(['onConnect', 'verify'])
    pool.release(r.pooled!, false)
    take(pool)
    expect(onConnect).toHaveBeenCalledTimes(1)
  })

  it('an onConnect that throws or rejects fails the checkout and destroys the connection', async () => {
    const bad = new Error('SET failed')
    const { pool, created } = makePool({
      max: 1,
      onConnect: vi
        .fn()
        .mockImplementationOnce(() => {
          throw bad
        })
        .mockImplementationOnce(() => Promise.reject(bad)),
    })
    const first = checkout(pool)
    expect(first.err).toBe(bad)
    expect(created[0]!.destroyed).toBe(true)
    const second = checkout(pool)
    await flush()
    expect(second.err).toBe(bad)
    expect(created[1]!.destroyed).toBe(true)
    expect(pool.counts()).toEqual({ total: 0, idle: 0, waiting: 0 })
  })
})

describe('PgClientPool checkout wait re-entrance', () => {
  it('a timed-out waiter that checks out again from its callback leaves exactly one timer armed', () => {
    fakeClock()
    const { pool } = makePool({ max: 1, connectionTimeoutMillis: 100 })
    take(pool)
    let again: Checkout | undefined
    pool.acquireCallback((err) => {
      expect(err).toBeInstanceOf(PoolExhaustedError)
      again = checkout(pool)
    })
    checkout(pool)
    vi.advanceTimersByTime(100)
    expect(again?.done).toBe(false)
    expect(pool.counts().waiting).toBe(1)
    expect(vi.getTimerCount()).toBe(1)
    vi.advanceTimersByTime(100)
    expect(again?.err).toBeInstanceOf(PoolExhaustedError)
    expect(vi.getTimerCount()).toBe(0)
  })
})
