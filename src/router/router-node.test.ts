import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Balancer, NodeView } from '../balancer/balancer.js'
import { QueryTimeoutError } from '../errors/query-timeout-error.js'
import type { Driver } from './driver.js'
import { RouterEmitter } from './events.js'
import { FakeConnectError, fakeDriver } from './fake-driver.test-kit.js'
import { createRouter } from './router.js'
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

  it("a session's write on a driver whose execute throws synchronously fails cleanly", async () => {
    const kit = fakeDriver()
    const router = createRouter({ driver: kit.driver, primary: 'postgres://db1/app', healthCheck: false })
    try {
      kit.driver.execute = () => {
        throw new Error('driver bug')
      }
      await expect(router.session(() => router.query('INSERT INTO t VALUES (1)'))).rejects.toThrow(
        'driver bug',
      )
      expect(kit.pools.primary?.busy).toBe(0)
    } finally {
      await router.close()
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
