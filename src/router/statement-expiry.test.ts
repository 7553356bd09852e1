import { afterEach, describe, expect, it, vi } from 'vitest'
import { QueryTimeoutError } from '../errors/query-timeout-error.js'
import { RoutemateError } from '../errors/routemate-error.js'
import { WriteOutcomeUnknownError } from '../errors/write-outcome-unknown-error.js'
import { HealthMonitor } from '../health/health-monitor.js'
import { Cluster } from './cluster.js'
import { resolveConfig } from './config.js'
import type { Driver, DriverPool, QueryResult } from './driver.js'
import { RouterEmitter } from './events.js'
import { RouterNode } from './router-node.js'

/** A fake connection: the statement pending on it, if any. */
interface FakeConn {
  readonly id: number
  pending: ((err: unknown, res?: QueryResult) => void) | undefined
}

const CANCELLED = Object.assign(new Error('canceling statement due to user request'), { code: '57014' })
const LOST = Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' })
const RESULT: QueryResult = { rows: [{ x: 1 }], rowCount: 1 }

/**
 * A fake driver and pool: statements stay pending until the test ends them (`finish`); `cancel`
 * resolves as the test says (`cancelWith`); destroying a connection fails its pending statement
 * with a connection error, as a real socket does.
 */
function harness(options: { queryTimeoutMs: number; connectTimeoutMs?: number; cancel?: boolean }) {
  const conns: FakeConn[] = []
  const released: Array<{ id: number; destroy: boolean }> = []
  const destroyed: number[] = []
  const cancels: Array<{ id: number; signal: AbortSignal; settle: (ok: boolean) => void }> = []
  const finish = (conn: FakeConn, err: unknown, res?: QueryResult): void => {
    const cb = conn.pending
    conn.pending = undefined
    cb?.(err, res)
  }
  const pool: DriverPool<FakeConn> = {
    acquire: async () => {
      const c: FakeConn = { id: conns.length + 1, pending: undefined }
      conns.push(c)
      return c
    },
    release: (c, destroy) => {
      released.push({ id: c.id, destroy })
    },
    destroy: (c) => {
      destroyed.push(c.id)
      queueMicrotask(() => finish(c, LOST))
    },
    end: async () => {},
    counts: () => ({ total: 0, idle: 0, waiting: 0 }),
  }
  const driver: Driver<FakeConn> = {
    dialect: 'postgres',
    name: 'fake',
    createPool: () => pool,
    execute: (conn) =>
      new Promise((resolve, reject) => {
        conn.pending = (err, res) => (err == null ? resolve(res as QueryResult) : reject(err))
      }),
    executeCallback: (conn, _stmt, _params, cb) => {
      conn.pending = cb
    },
    probe: async () => ({ role: 'primary' }),
    positionReached: () => true,
    positionAfterWrite: async () => '0/1',
    waitForPosition: async () => '0/1',
    beginSql: () => 'BEGIN',
    savepointSql: (n) => `SAVEPOINT ${n}`,
    classify: (err) => ((err as { code?: string })?.code === 'ECONNRESET' ? 'connection' : 'statement'),
    ...(options.cancel === false
      ? {}
      : {
          cancel: (conn: FakeConn, _node: unknown, signal: AbortSignal) =>
            new Promise<boolean>((settle) => cancels.push({ id: conn.id, signal, settle })),
        }),
  }
  const config = resolveConfig({
    driver: driver as Driver,
    primary: { name: 'p', url: 'postgres://db1/app' },
    queryTimeoutMs: options.queryTimeoutMs,
    connectTimeoutMs: options.connectTimeoutMs ?? 1000,
    healthCheck: false,
  })
  const resolved = config.clusters[0]?.primary
  if (resolved === undefined) throw new Error('no primary')
  const node = new RouterNode<FakeConn>(driver, resolved, 'default', config.healthCheck, () => {})
  let timeouts = 0
  node.onStatementTimeout(() => timeouts++)
  return {
    node,
    conns,
    released,
    destroyed,
    cancels,
    finish,
    timeouts: () => timeouts,
  }
}

/** Lets the fake pool's checkout and the promise reactions run. */
const settle = () => vi.advanceTimersByTimeAsync(0)

describe('queryTimeoutMs (RouterNode, fake driver, fake timers)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('with queryTimeoutMs 0 arms no timer and never cancels', async () => {
    vi.useFakeTimers()
    const h = harness({ queryTimeoutMs: 0 })
    const p = h.node.run('SELECT 1', undefined)
    await settle()
    expect(vi.getTimerCount()).toBe(0)
    await vi.advanceTimersByTimeAsync(60_000)
    h.finish(h.conns[0] as FakeConn, null, RESULT)
    await expect(p).resolves.toBe(RESULT)
    expect(h.cancels).toEqual([])
    expect(h.released).toEqual([{ id: 1, destroy: false }])
  })

  it('a statement that finishes in time clears its timer: no cancel', async () => {
    vi.useFakeTimers()
    const h = harness({ queryTimeoutMs: 500 })
    const p = h.node.run('SELECT 1', undefined)
    await settle()
    expect(vi.getTimerCount()).toBe(1)
    await vi.advanceTimersByTimeAsync(499)
    h.finish(h.conns[0] as FakeConn, null, RESULT)
    await expect(p).resolves.toBe(RESULT)
    expect(vi.getTimerCount()).toBe(0)
    await vi.advanceTimersByTimeAsync(5000)
    expect(h.cancels).toEqual([])
    expect(h.timeouts()).toBe(0)
  })

  it('a statement past the timeout is cancelled; the server stops it: QueryTimeoutError, connection kept, node told once', async () => {
    vi.useFakeTimers()
    const h = harness({ queryTimeoutMs: 500 })
    const p = h.node.run('SELECT pg_sleep(3)', undefined)
    const seen = p.catch((e: unknown) => e)
    await settle()
    await vi.advanceTimersByTimeAsync(500)
    expect(h.cancels.map((c) => c.id)).toEqual([1])
    expect(h.timeouts()).toBe(1)
    h.cancels[0]?.settle(true)
    await vi.advanceTimersByTimeAsync(3)
    h.finish(h.conns[0] as FakeConn, CANCELLED)
    const err = (await seen) as QueryTimeoutError
    expect(err).toBeInstanceOf(QueryTimeoutError)
    expect(err).toBeInstanceOf(RoutemateError)
    expect(err).toMatchObject({
      node: 'p',
      cluster: 'default',
      timeoutMs: 500,
      cancelled: true,
      cause: CANCELLED,
    })
    expect(err.elapsedMs).toBeGreaterThanOrEqual(500)
    expect(err.outcome).toBeUndefined()
    expect(h.released).toEqual([{ id: 1, destroy: false }])
    expect(h.destroyed).toEqual([])
    expect(h.node.inFlight).toBe(0)
  })

  it('the error waits for the cancel to be accepted even when the statement ends first', async () => {
    vi.useFakeTimers()
    const h = harness({ queryTimeoutMs: 100 })
    let settled = false
    const p = h.node.run('SELECT 1', undefined).finally(() => {
      settled = true
    })
    p.catch(() => {})
    await settle()
    await vi.advanceTimersByTimeAsync(100)
    h.finish(h.conns[0] as FakeConn, CANCELLED)
    await settle()
    expect(settled).toBe(false)
    expect(h.released).toEqual([])
    h.cancels[0]?.settle(true)
    await expect(p).rejects.toBeInstanceOf(QueryTimeoutError)
    expect(h.released).toEqual([{ id: 1, destroy: false }])
  })

  it('a statement that ended before its cancel failed: the connection is closed (the cancel may still land)', async () => {
    vi.useFakeTimers()
    const h = harness({ queryTimeoutMs: 100 })
    const p = h.node.run('SELECT 1', undefined).catch((e: unknown) => e)
    const q = h.node.run('SELECT 2', undefined)
    await settle()
    await vi.advanceTimersByTimeAsync(100)
    h.finish(h.conns[0] as FakeConn, CANCELLED)
    h.finish(h.conns[1] as FakeConn, null, RESULT)
    for (const c of h.cancels) c.settle(false)
    expect(await p).toMatchObject({ name: 'QueryTimeoutError', cancelled: false, cause: CANCELLED })
    await expect(q).resolves.toBe(RESULT)
    expect(h.destroyed).toEqual([])
    expect(h.released).toEqual([
      { id: 1, destroy: true },
      { id: 2, destroy: true },
    ])
  })

  it('a statement that completes while being cancelled resolves with its result', async () => {
    vi.useFakeTimers()
    const h = harness({ queryTimeoutMs: 100 })
    const p = h.node.run('SELECT 1', undefined)
    await settle()
    await vi.advanceTimersByTimeAsync(100)
    h.finish(h.conns[0] as FakeConn, null, RESULT)
    h.cancels[0]?.settle(true)
    await expect(p).resolves.toBe(RESULT)
    expect(h.released).toEqual([{ id: 1, destroy: false }])
  })

  it('a cancel that cannot be delivered closes the connection: QueryTimeoutError (not cancelled), outcome unknown for a write', async () => {
    vi.useFakeTimers()
    const h = harness({ queryTimeoutMs: 100 })
    const read = h.node.run('SELECT 1', undefined).catch((e: unknown) => e)
    const write = h.node.run('UPDATE t SET x = 1', undefined, false, true).catch((e: unknown) => e)
    await settle()
    await vi.advanceTimersByTimeAsync(100)
    for (const c of h.cancels) c.settle(false)
    const [r, w] = (await Promise.all([read, write])) as QueryTimeoutError[]
    expect(h.destroyed.sort()).toEqual([1, 2])
    expect(r).toMatchObject({ cancelled: false, cause: LOST })
    expect(r?.outcome).toBeUndefined()
    expect(w).toMatchObject({ cancelled: false, outcome: 'unknown', cause: LOST })
    expect(h.released.map((x) => x.destroy)).toEqual([true, true])
  })

  it('no answer within connectTimeoutMs: the cancel is aborted and the connection closed', async () => {
    vi.useFakeTimers()
    const h = harness({ queryTimeoutMs: 100, connectTimeoutMs: 2000 })
    const p = h.node.run('SELECT pg_sleep(60)', undefined).catch((e: unknown) => e)
    await settle()
    await vi.advanceTimersByTimeAsync(100)
    await vi.advanceTimersByTimeAsync(1999)
    expect(h.destroyed).toEqual([])
    expect(h.cancels[0]?.signal.aborted).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(h.cancels[0]?.signal.aborted).toBe(true)
    expect(h.destroyed).toEqual([1])
    const err = (await p) as QueryTimeoutError
    expect(err).toBeInstanceOf(QueryTimeoutError)
    expect(err.cancelled).toBe(false)
    expect(err.elapsedMs).toBeGreaterThanOrEqual(2100)
    expect(h.released).toEqual([{ id: 1, destroy: true }])
  })

  it('a driver without cancel: the connection is closed at the timeout', async () => {
    vi.useFakeTimers()
    const h = harness({ queryTimeoutMs: 100, cancel: false })
    const p = h.node.run('SELECT 1', undefined).catch((e: unknown) => e)
    await settle()
    await vi.advanceTimersByTimeAsync(100)
    expect(h.destroyed).toEqual([1])
    expect(await p).toMatchObject({ name: 'QueryTimeoutError', cancelled: false })
  })

  it('a write that loses its connection after it was sent: WriteOutcomeUnknownError; a read keeps the driver error', async () => {
    vi.useFakeTimers()
    const h = harness({ queryTimeoutMs: 0 })
    const write = h.node.run('INSERT INTO t VALUES (1)', undefined, false, true).catch((e: unknown) => e)
    const read = h.node.run('SELECT 1', undefined).catch((e: unknown) => e)
    await settle()
    for (const c of h.conns) h.finish(c, LOST)
    const w = (await write) as WriteOutcomeUnknownError
    expect(w).toBeInstanceOf(WriteOutcomeUnknownError)
    expect(w).toBeInstanceOf(RoutemateError)
    expect(w).toMatchObject({ outcome: 'unknown', node: 'p', cluster: 'default', cause: LOST })
    expect(w.message).toContain('Connection terminated unexpectedly')
    expect(await read).toBe(LOST)
  })

  it('a write whose statement fails on its own (not a lost connection) keeps the driver error', async () => {
    vi.useFakeTimers()
    const h = harness({ queryTimeoutMs: 0 })
    const dup = Object.assign(new Error('duplicate key'), { code: '23505' })
    const write = h.node.run('INSERT INTO t VALUES (1)', undefined, false, true).catch((e: unknown) => e)
    await settle()
    h.finish(h.conns[0] as FakeConn, dup)
    expect(await write).toBe(dup)
  })

  it('runOn on a checked-out connection: a cancel not confirmed makes release close it; a confirmed one keeps it', async () => {
    vi.useFakeTimers()
    const h = harness({ queryTimeoutMs: 100 })
    const a = await h.node.acquire()
    const b = await h.node.acquire()
    const pa = h.node.runOn(a, 'SELECT 1', undefined).catch((e: unknown) => e)
    const pb = h.node.runOn(b, 'COMMIT', undefined, true).catch((e: unknown) => e)
    await vi.advanceTimersByTimeAsync(100)
    h.cancels.find((c) => c.id === a.id)?.settle(true)
    h.cancels.find((c) => c.id === b.id)?.settle(false)
    h.finish(a, CANCELLED)
    const [ea, eb] = (await Promise.all([pa, pb])) as QueryTimeoutError[]
    expect(ea).toMatchObject({ cancelled: true })
    expect(eb).toMatchObject({ cancelled: false, outcome: 'unknown' })
    h.node.release(a, false)
    h.node.release(b, false)
    expect(h.released).toEqual([
      { id: a.id, destroy: false },
      { id: b.id, destroy: true },
    ])
  })

  it('runOn: a COMMIT that loses its connection is a WriteOutcomeUnknownError', async () => {
    vi.useFakeTimers()
    const h = harness({ queryTimeoutMs: 0 })
    const c = await h.node.acquire()
    const p = h.node.runOn(c, 'COMMIT', undefined, true).catch((e: unknown) => e)
    h.finish(c, LOST)
    expect(await p).toBeInstanceOf(WriteOutcomeUnknownError)
    h.node.release(c, true)
  })
})

describe('HealthMonitor.probeSoon', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('a statement timeout probes its node at once (health checks off too), once at a time, and changes no state by itself', async () => {
    vi.useFakeTimers({ now: 0 })
    const probed: string[] = []
    let answer: (() => void) | undefined
    const driver = {
      dialect: 'postgres',
      name: 'fake',
      createPool: () => ({}) as DriverPool,
      execute: async () => RESULT,
      probe: (node: { name: string }) => {
        probed.push(node.name)
        return new Promise((resolve) => {
          answer = () => resolve({ role: node.name === 'primary' ? 'primary' : 'replica' })
        })
      },
      positionReached: () => true,
      positionAfterWrite: async () => '0/1',
      waitForPosition: async () => '0/1',
      beginSql: () => 'BEGIN',
      savepointSql: (n: string) => `SAVEPOINT ${n}`,
      classify: () => 'statement',
    } as unknown as Driver
    const config = resolveConfig({
      driver,
      primary: 'postgres://db1/app',
      replicas: [{ name: 'r1', url: 'postgres://db2/app' }],
      healthCheck: false,
    })
    const events = new RouterEmitter()
    const changes: string[] = []
    for (const name of ['node:down', 'node:suspect', 'node:up'] as const)
      events.on(name, (e) => changes.push(name + e.node))
    const cluster = new Cluster(config.clusters[0]!, config.driver, config.healthCheck, events)
    const monitor = new HealthMonitor([cluster], config, events)
    const r1 = cluster.nodes.find((n) => n.name === 'r1') as RouterNode
    r1.timeoutListener?.()
    r1.timeoutListener?.() // a probe is running: not another one
    expect(probed).toEqual(['r1'])
    answer?.()
    await vi.advanceTimersByTimeAsync(0)
    r1.timeoutListener?.()
    expect(probed).toEqual(['r1', 'r1'])
    answer?.()
    await vi.advanceTimersByTimeAsync(0)
    expect(changes).toEqual([])
    expect(r1.state).toBe('up')
    monitor.stop()
    r1.timeoutListener?.() // stopped: nothing
    expect(probed).toEqual(['r1', 'r1'])
  })
})
