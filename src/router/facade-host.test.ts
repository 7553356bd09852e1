import { afterEach, describe, expect, it, vi } from 'vitest'
import { PrimaryUnavailableError } from '../errors/primary-unavailable-error.js'
import { ReadOnlyViolationError } from '../errors/read-only-violation-error.js'
import { RouterClosedError } from '../errors/router-closed-error.js'
import { ShardKeyRequiredError } from '../errors/shard-key-required-error.js'
import type { FacadeHost } from './facade-host.js'
import {
  type FakeConn,
  FakeConnectError,
  type FakeDriverKit,
  FakeStatementError,
  fakeDriver,
} from './fake-driver.test-kit.js'
import type { RouterOptions } from './options.js'
import { createRouter, type Router } from './router.js'

const PRIMARY = 'postgres://db1/app'
const R1 = 'postgres://db2/app'
const R2 = 'postgres://db3/app'

function setup(options: Partial<RouterOptions> = {}): {
  kit: FakeDriverKit
  router: Router
  host: FacadeHost<FakeConn>
} {
  const kit = fakeDriver()
  const router = createRouter({
    driver: kit.driver,
    primary: PRIMARY,
    replicas: [R1, R2],
    healthCheck: false,
    ...options,
  } as RouterOptions) as unknown as Router
  return { kit, router, host: router.pool<FacadeHost<FakeConn>>() }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('the pool facade host (router.pool())', () => {
  it('queryAs maps the result before its promise settles, on every route (read, write, retried read, transaction); errors are not mapped', async () => {
    const { kit, router, host } = setup()
    const shape = (r: { rows: unknown[] }) => ({ mapped: r.rows })
    try {
      expect(await host.queryAs('INSERT INTO t VALUES (1)', undefined, shape)).toEqual({
        mapped: [{ node: 'primary' }],
      })
      const read = await router.readOnly(() => host.queryAs('SELECT 1', undefined, shape))
      expect(read.mapped).toEqual([{ node: expect.stringMatching(/^replica/) }])
      // a replica refusing connections: the read is retried elsewhere, the retry's result mapped
      kit.onExecute = (node) => (node === 'replica1' ? new FakeConnectError(node) : undefined)
      for (let i = 0; i < 4; i++) {
        const r = await router.readOnly(() => host.queryAs('SELECT 1', undefined, shape))
        expect(r.mapped).toEqual([{ node: expect.stringMatching(/^replica2|primary$/) }])
      }
      kit.onExecute = undefined
      await router.transaction(async () => {
        expect(await host.queryAs('UPDATE t SET x = 1', undefined, shape)).toEqual({
          mapped: [{ node: 'primary' }],
        })
      })
      kit.onExecute = () => new FakeStatementError('syntax error')
      await expect(host.queryAs('SELEC 1', undefined, shape)).rejects.toBeInstanceOf(FakeStatementError)
      await expect(router.readOnly(() => host.queryAs('SELEC 1', undefined, shape))).rejects.toBeInstanceOf(
        FakeStatementError,
      )
      kit.onExecute = undefined
      // a map that throws rejects the statement's promise; the connection goes back all the same
      const boom = new Error('map failed')
      await expect(
        host.queryAs('SELECT 1', undefined, () => {
          throw boom
        }),
      ).rejects.toBe(boom)
      expect(kit.pools.primary).toMatchObject({ busy: 0 })
    } finally {
      await host.close()
    }
  })

  it('is made once; query routes like router.query; connect picks the node by scope', async () => {
    const { kit, router, host } = setup()
    try {
      expect(router.pool()).toBe(host)
      expect((await host.query('SELECT 1')).rows).toEqual([{ node: 'primary' }])
      const w = await host.connect()
      expect([w.node, w.readOnly, w.pinned, w.conn.readOnly]).toEqual(['primary', false, false, false])
      w.check('DELETE FROM t') // a write connection checks nothing
      expect(w.translate('BEGIN')).toBe('BEGIN')
      expect(host.counts()).toEqual({ total: 2, idle: 1, waiting: 0 }) // host.query's, pooled, and this one
      w.release(false)
      w.release(false) // idempotent
      expect(kit.pools.primary).toMatchObject({ acquired: 2, released: 2, busy: 0 })
      const r = await router.readOnly(() => host.connect())
      try {
        expect([r.node.startsWith('replica'), r.readOnly, r.conn.readOnly]).toEqual([true, true, true])
        expect(() => r.check('DELETE FROM t')).toThrow(ReadOnlyViolationError)
        expect(() => r.check('SELECT 1; DELETE FROM t', false)).toThrow(ReadOnlyViolationError)
        r.check('SELECT 1')
      } finally {
        r.release(false)
      }
    } finally {
      await host.close()
    }
    expect(router.closed).toBe(true)
    await expect(host.connect()).rejects.toBeInstanceOf(RouterClosedError)
  })

  it('a read-only connection left inside a transaction the caller opened is closed, not pooled', async () => {
    const { kit, router, host } = setup({ replicas: [R1] })
    try {
      const c = await router.readOnly(() => host.connect())
      expect(c.translate('BEGIN READ ONLY')).toBe('BEGIN READ ONLY')
      c.release(false)
      expect(kit.pools.replica1).toMatchObject({ released: 1 })
      expect(host.counts().total).toBe(0) // closed, not pooled
      const d = await router.readOnly(() => host.connect())
      for (const t of ['START TRANSACTION READ ONLY', 'ROLLBACK TO SAVEPOINT a', 'COMMIT']) d.translate(t)
      d.release(false) // ended: pooled again
      expect(host.counts()).toEqual({ total: 1, idle: 1, waiting: 0 })
    } finally {
      await router.close()
    }
  })

  it('a read-only session changed by a routine is refused and never pooled again', async () => {
    const { kit, router, host } = setup({ replicas: [R1] })
    kit.driver.readOnlySessionLost = () => true
    try {
      const c = await router.readOnly(() => host.connect())
      expect(() => c.check('SELECT 1')).toThrow(/was changed \(by a function or routine\)/)
      const before = host.counts().total
      c.release(false)
      expect(host.counts().total).toBe(before - 1)
    } finally {
      await router.close()
    }
  })

  it("inside a transaction: the transaction's connection, pinned; BEGIN/COMMIT/ROLLBACK become savepoints", async () => {
    const { kit, router, host } = setup()
    try {
      await router
        .transaction(async () => {
          const c = await host.connect()
          expect([c.node, c.pinned, c.readOnly]).toEqual(['primary', true, false])
          expect(c.translate('BEGIN')).toBe('SAVEPOINT routemate_sp_1')
          expect(c.translate('START TRANSACTION')).toBe('SAVEPOINT routemate_sp_2')
          expect(c.translate('ROLLBACK')).toBe('ROLLBACK TO SAVEPOINT routemate_sp_2')
          expect(c.translate('COMMIT')).toBe('RELEASE SAVEPOINT routemate_sp_1')
          expect(c.translate('COMMIT')).toBe('COMMIT') // nothing of ours open: as written
          expect(c.translate('ROLLBACK')).toBe('ROLLBACK')
          expect(c.translate('SELECT 1')).toBe('SELECT 1')
          // errors are the transaction's: a connection error breaks it
          expect(c.fail(new FakeConnectError('primary'))).toBeInstanceOf(FakeConnectError)
          c.release(false) // left to the transaction
          expect(kit.pools.primary?.busy).toBe(1)
        })
        .catch(() => {})
      expect(kit.pools.primary?.busy).toBe(0)
      await router.readOnly(() =>
        router.transaction(async () => {
          const c = await host.connect()
          expect([c.pinned, c.readOnly]).toEqual([true, true])
          c.check('BEGIN')
          expect(() => c.check('COMMIT')).toThrow(ReadOnlyViolationError) // would end routemate's transaction
          c.translate('BEGIN')
          c.check('COMMIT')
          expect(() => c.check('INSERT INTO t VALUES (1)')).toThrow(ReadOnlyViolationError)
        }),
      )
    } finally {
      await router.close()
    }
  })

  it('fail() on a pooled connection records the failure; timed() bounds a statement by queryTimeoutMs', async () => {
    vi.useFakeTimers({ now: 0 })
    const { router, host } = setup({ queryTimeoutMs: 100, connectTimeoutMs: 50 })
    try {
      const c = await host.connect()
      expect(c.fail(new FakeConnectError('primary'))).toBeInstanceOf(FakeConnectError)
      expect(router.stats().nodes[0]).toMatchObject({ errors: 1, state: 'suspect' })
      const outcomes: unknown[] = []
      const quick = c.timed<string>((err, v) => outcomes.push(err ?? v))
      quick(null, 'fast')
      const slow = c.timed<string>((err, v) => outcomes.push(err ?? v))
      await vi.advanceTimersByTimeAsync(100) // passes the timeout: no cancel in the driver, the connection is closed
      slow(new FakeConnectError('primary', 'connection destroyed'))
      await vi.advanceTimersByTimeAsync(0)
      expect(outcomes[0]).toBe('fast')
      expect(outcomes[1]).toMatchObject({ name: 'QueryTimeoutError', outcome: 'unknown' })
      c.release(false)
    } finally {
      await router.close()
    }
  })

  it('connect on a fresh router whose primary refuses: PrimaryUnavailableError; the replica checkout is retried', async () => {
    const { kit, router, host } = setup()
    const retries: string[] = []
    router.on('retry', (e) => retries.push(`${e.from}->${e.to}`))
    try {
      kit.modes.primary = 'refusing'
      await expect(host.connect()).rejects.toBeInstanceOf(PrimaryUnavailableError)
      kit.modes.replica1 = 'refusing'
      const served = new Set<string>()
      for (let i = 0; i < 2; i++) {
        const c = await router.readOnly(() => host.connect())
        served.add(c.node)
        c.release(false)
      }
      expect(served).toEqual(new Set(['replica2']))
      expect(new Set(retries)).toEqual(new Set(['replica1->replica2']))
      kit.modes.replica2 = 'refusing'
      await expect(router.readOnly(() => host.connect())).rejects.toBeInstanceOf(FakeConnectError)
    } finally {
      await router.close()
    }
  })

  it('onError hears background errors of the pools', async () => {
    const { router, host } = setup()
    const seen: unknown[] = []
    const off = host.onError((e) => seen.push(e))
    try {
      const errors: string[] = []
      router.on('error', (e) => errors.push(e.context))
      // a listener that throws is reported as an error event, never to the emitter
      router.on('node:added', () => {
        throw new Error('listener bug')
      })
      await router.addReplica('postgres://db9/app')
      expect(errors).toEqual(['listener of "node:added" threw'])
      expect(seen).toHaveLength(1)
      off()
    } finally {
      await router.close()
    }
  })

  it('a sharded router without a shard in scope: ShardKeyRequiredError', async () => {
    const kit = fakeDriver()
    const router = createRouter({
      driver: kit.driver,
      shards: { s0: { primary: PRIMARY }, s1: { primary: R1 } },
      sharding: { strategy: 'hash' },
      healthCheck: false,
    })
    try {
      await expect(router.pool().connect()).rejects.toBeInstanceOf(ShardKeyRequiredError)
      const c = await router.withShard(1, () => router.pool().connect())
      expect(c.node).toMatch(/^s[01]\.primary$/)
      c.release(false)
    } finally {
      await router.close()
    }
  })
})

describe('the pool facade under a multi-host URL with target_session_attrs', () => {
  it('prefer-standby: unscoped statements and checkouts read from a standby; scopes still route', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver()
    kit.roles['h1:5432'] = 'primary'
    const router = createRouter({
      driver: kit.driver,
      url: 'postgres://app@h1,h2/app?target_session_attrs=prefer-standby',
      healthCheck: { intervalMs: 100, timeoutMs: 50 },
    })
    const host = router.pool()
    try {
      await vi.advanceTimersByTimeAsync(0)
      await router.ready()
      expect((await host.query('SELECT 1')).rows).toEqual([{ node: 'h2:5432' }])
      await expect(host.query('INSERT INTO t VALUES (1)')).rejects.toBeInstanceOf(ReadOnlyViolationError)
      expect((await router.primary(() => host.query('SELECT 1'))).rows).toEqual([{ node: 'h1:5432' }])
      const c = await host.connect()
      expect([c.node, c.readOnly]).toEqual(['h2:5432', true])
      c.release(false)
      await router.close()
      await expect(host.query('SELECT 1')).rejects.toBeInstanceOf(RouterClosedError)
    } finally {
      await router.close()
    }
  })
})

describe('a driver without a facade', () => {
  it('router.pool() is a TypeError', async () => {
    const kit = fakeDriver()
    kit.driver.facade = undefined
    const router = createRouter({ driver: kit.driver, primary: PRIMARY, healthCheck: false })
    try {
      expect(() => router.pool()).toThrow('driver "fake" has no pool facade')
    } finally {
      await router.close()
    }
  })
})
