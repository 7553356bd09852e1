import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Balancer, NodeView } from '../balancer/balancer.js'
import { QueryTimeoutError } from '../errors/query-timeout-error.js'
import type { Driver } from './driver.js'
import { resolveConfig } from './config.js'
import { RouterEmitter } from './events.js'
import { FakeConnectError, fakeDriver } from './fake-driver.test-kit.js'
import { createRouter } from './router.js'
import { RouterNode } from './router-node.js'
import { startedInScope } from './scope.js'
import { mustClose, runsOneStatement, textOf, withCallerStack } from './statement.js'

afterEach(() => {
  vi.useRealTimers()
})

describe('RouterNode through a router (fake driver)', () => {
  it('a balancer that observes hears every statement its replicas serve, never the primary; its errors are ignored', async () => {
    const heard: string[] = []
    let i = 0
    const balancer: Balancer = {
      name: 'observing',
      pick: (nodes: readonly NodeView[]) => nodes[i++ % nodes.length] as NodeView,
      observe: (node, ms, ok) => {
        heard.push(`${node.name} ${ok} ${ms >= 0}`)
        throw new Error('balancer bug')
      },
    }
    const kit = fakeDriver()
    const router = createRouter({
      driver: kit.driver,
      primary: 'postgres://db1/app',
      replicas: ['postgres://db2/app', 'postgres://db3/app'],
      balancer,
      healthCheck: false,
    })
    try {
      await router.readOnly(() => router.query('SELECT 1'))
      await router.readOnly(() => router.query('SELECT 1'))
      await router.query('INSERT INTO t VALUES (1)')
      kit.onExecute = (node) => (node === 'replica1' ? new FakeConnectError(node) : undefined)
      await router.readOnly(() => router.query('SELECT 1'))
      expect(heard).toEqual([
        'replica1 true true',
        'replica2 true true',
        'replica1 false true',
        'replica2 true true',
      ])
      expect(router.stats().clusters[0]?.balancer).toBe('observing')
    } finally {
      await router.close()
    }
  })

  it("a session's write on a driver whose execute throws synchronously fails cleanly (both driver paths)", async () => {
    for (const callbacks of [true, false]) {
      const kit = fakeDriver({}, { callbacks })
      const router = createRouter({ driver: kit.driver, primary: 'postgres://db1/app', healthCheck: false })
      try {
        const bug = () => {
          throw new Error('driver bug')
        }
        if (callbacks) kit.driver.executeCallback = bug
        else kit.driver.execute = bug
        await expect(router.session(() => router.query('INSERT INTO t VALUES (1)'))).rejects.toThrow(
          'driver bug',
        )
        expect(kit.pools.primary?.busy).toBe(0)
      } finally {
        await router.close()
      }
    }
  })

  it('a session write past queryTimeoutMs (cancel accepted, error after it) is a QueryTimeoutError; the connection is kept', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver()
    const router = createRouter({
      driver: kit.driver,
      primary: 'postgres://db1/app',
      healthCheck: false,
      queryTimeoutMs: 100,
      connectTimeoutMs: 50,
    })
    kit.driver.cancel = async (conn) => {
      setTimeout(() => conn.fail?.(new Error('canceling statement due to user request')), 10)
      return true
    }
    try {
      kit.onExecute = () => new Promise(() => {})
      const err = router.session(() => router.query('UPDATE t SET a = 1')).catch((e: unknown) => e)
      await vi.advanceTimersByTimeAsync(200)
      const e = (await err) as QueryTimeoutError
      expect(e).toBeInstanceOf(QueryTimeoutError)
      expect([e.cancelled, e.outcome]).toEqual([true, undefined])
      expect(kit.pools.primary).toMatchObject({ destroyed: 0, busy: 0 })
    } finally {
      await router.close()
    }
  })
})

describe('statement helpers', () => {
  const pg = { dialect: 'postgres' } as Driver
  const mysql = { dialect: 'mysql' } as Driver

  it('textOf reads text, sql, or nothing', () => {
    expect(textOf('SELECT 1')).toBe('SELECT 1')
    expect(textOf({ text: 'SELECT 2' })).toBe('SELECT 2')
    expect(textOf({ sql: 'SELECT 3' })).toBe('SELECT 3')
    expect(textOf({ name: 'prepared' })).toBe('')
  })

  it('runsOneStatement: parameters (or a query config with values) make pg run one statement; mysql2 always does', () => {
    expect(runsOneStatement(pg, 'SELECT 1; DELETE FROM t', undefined)).toBe(false)
    expect(runsOneStatement(pg, 'SELECT $1', [1])).toBe(true)
    expect(runsOneStatement(pg, { text: 'SELECT $1', values: [1] }, undefined)).toBe(true)
    expect(runsOneStatement(pg, { text: 'SELECT 1' }, undefined)).toBe(false)
    expect(runsOneStatement(mysql, 'SELECT 1; DELETE FROM t', undefined)).toBe(true)
  })

  it('mustClose: never for a QueryTimeoutError (its expiry decided), else by class', () => {
    const driver = { classify: () => 'connection' } as unknown as Driver
    const timeout = new QueryTimeoutError({
      node: 'n',
      cluster: 'c',
      timeoutMs: 1,
      elapsedMs: 2,
      cancelled: true,
      outcome: undefined,
      cause: undefined,
    })
    expect(mustClose(driver, timeout)).toBe(false)
    expect(mustClose(driver, new Error('x'))).toBe(true)
  })

  it('withCallerStack appends the caller once, leaves non-errors and frozen errors alone', () => {
    const err = new Error('x')
    withCallerStack(err)
    withCallerStack(err)
    expect(err.stack?.split('--- routemate caller ---')).toHaveLength(2)
    expect(withCallerStack('text')).toBe('text')
    const frozen = Object.freeze(new Error('frozen'))
    expect(withCallerStack(frozen)).toBe(frozen)
  })

  it('startedInScope starts a lazy thenable, leaves promises and values as they are', async () => {
    let started = 0
    // a lazy thenable, as Drizzle's query builders and Prisma's PrismaPromise are
    const lazy = Object.defineProperty({}, 'then', {
      value: (resolve: (v: number) => void) => {
        started++
        resolve(7)
      },
    })
    const p = startedInScope(lazy)
    expect(p).toBeInstanceOf(Promise)
    await p
    expect(started).toBe(1)
    const promise = Promise.resolve(1)
    expect(startedInScope(promise)).toBe(promise)
    expect(startedInScope(null)).toBe(null)
  })
})

describe('RouterEmitter', () => {
  it('has() says who listens; a throwing listener becomes an error event, a throwing error listener is dropped', () => {
    const events = new RouterEmitter()
    expect(events.has('retry')).toBe(false)
    const errors: string[] = []
    const off = events.on('retry', () => {
      throw new Error('bug')
    })
    events.on('error', (e) => {
      errors.push(e.context)
      throw new Error('error listener bug')
    })
    expect(events.has('retry')).toBe(true)
    events.emit('retry', { cluster: 'c', from: 'a', to: 'b', error: 'x' })
    expect(errors).toEqual(['listener of "retry" threw'])
    off()
    expect(events.has('retry')).toBe(false)
    events.clear()
    expect(events.has('error')).toBe(false)
  })
})

describe('RouterNode state changes (intent methods)', () => {
  function makeNode(failureThreshold = 2) {
    const kit = fakeDriver()
    const config = resolveConfig({
      driver: kit.driver,
      primary: { name: 'p', url: 'postgres://db1/app' },
      replicas: [{ name: 'r1', url: 'postgres://db2/app', weight: 3 }],
      healthCheck: { failureThreshold },
    })
    const resolved = config.clusters[0]?.replicas[0]
    if (resolved === undefined) throw new Error('no replica')
    return new RouterNode(kit.driver, resolved, 'default', config.healthCheck, () => {})
  }

  it('failures walk up → suspect → down; failures while down only update the last error; a success brings it back', () => {
    const node = makeNode()
    expect(node.recordFailure('boom 1', 'e1')).toBe('suspect')
    expect(node.recordFailure('boom 2', 'e2')).toBe('down')
    expect(node.available).toBe(false)
    expect(node.recordFailure('boom 3', 'e3')).toBeUndefined()
    expect(node).toMatchObject({ state: 'down', lastError: 'boom 3', lastFailure: 'e3' })
    expect(node.recordSuccess()).toBe('up')
    expect(node.available).toBe(true)
  })

  it('probe outcomes: first good probe clears awaitingProbe once; hung failures count up and reset', () => {
    const node = makeNode()
    node.awaitProbe()
    node.probeStarted()
    expect(node.probing).toBe(true)
    node.probeFailed(900, true)
    node.probeFailed(950, true)
    expect(node).toMatchObject({ probes: 2, hungProbes: 2, lastProbeMs: 950, awaitingProbe: true })
    node.probeFailed(3, false)
    expect(node.hungProbes).toBe(0)
    expect(node.probeSucceeded({ role: 'replica', position: '0/5' }, 4)).toBe(true)
    expect(node.probeSucceeded({ role: 'replica', position: '0/6' }, 4)).toBe(false)
    expect(node).toMatchObject({ reportedRole: 'replica', position: '0/6', seenHealthy: true, probes: 5 })
    node.probeEnded(12345)
    expect(node).toMatchObject({ probing: false, nextProbeAt: 12345 })
  })

  it('trust, role and lag changes report whether they changed anything', () => {
    const node = makeNode()
    expect(node.setTrusted(true)).toBe(false)
    expect(node.setTrusted(false)).toBe(true)
    node.probeSucceeded({ role: 'primary' }, 1)
    node.assignRole('primary') // discovery: it reported primary, so it is trusted in that role
    expect(node).toMatchObject({ role: 'primary', trusted: true })
    node.assignRole('replica')
    expect(node.trusted).toBe(false)
    expect(node.recordLag(50, true, 100)).toBe(false)
    expect(node.recordLag(150, true, 100)).toBe(true)
    expect(node).toMatchObject({ lagMs: 150, lagging: true })
    expect(node.recordLag(150, true, 0)).toBe(true) // no limit
    expect(node.recordLag(undefined, false, 0)).toBe(true) // not replicating
    expect(node).toMatchObject({ lagging: true, replicating: false })
  })

  it('replayed keeps the furthest position; weight, errors and the timeout listener', () => {
    const node = makeNode()
    node.replayed('0/3')
    node.replayed('0/2')
    expect(node.position).toBe('0/3')
    node.replayed('0/9')
    expect(node.position).toBe('0/9')
    expect(node.weight).toBe(3)
    node.setWeight(0)
    expect(node.weight).toBe(0)
    node.recordError()
    expect(node.errors).toBe(1)
    const first = () => {}
    node.onStatementTimeout(first)
    node.onStatementTimeout(() => {})
    expect(node.timeoutListener).toBe(first)
  })

  it('drain marks it drained once and closes its pools once, however often it is called', async () => {
    const node = makeNode()
    let marked = 0
    const done: number[] = []
    const a = node.drain(
      1000,
      () => marked++,
      (n) => done.push(n),
    )
    const b = node.drain(
      1000,
      () => marked++,
      (n) => done.push(n),
    )
    expect(a).toBe(b)
    expect(node.drained).toBe(true)
    await a
    expect(marked).toBe(1)
    expect(done).toEqual([0])
    expect(node.draining).toBe(a)
  })
})
