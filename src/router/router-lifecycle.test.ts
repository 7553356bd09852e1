import { afterEach, describe, expect, it, vi } from 'vitest'
import { PrimaryUnavailableError } from '../errors/primary-unavailable-error.js'
import { QueryTimeoutError } from '../errors/query-timeout-error.js'
import { RouterClosedError } from '../errors/router-closed-error.js'
import { WriteOutcomeUnknownError } from '../errors/write-outcome-unknown-error.js'
import {
  FakeConnectError,
  type FakeDriverKit,
  FakeTimeoutError,
  fakeDriver,
  HANG,
} from './fake-driver.test-kit.js'
import type { RouterOptions } from './options.js'
import { createRouter, type Router } from './router.js'
import type { QueryObservation } from './router-node.js'

const PRIMARY = 'postgres://app:s3cr3t@db1/app'
const R1 = 'postgres://db2/app'

function setup(
  options: Partial<RouterOptions> = {},
  callbacks = true,
): { kit: FakeDriverKit; router: Router } {
  const kit = fakeDriver({}, { callbacks })
  const router = createRouter({
    driver: kit.driver,
    primary: PRIMARY,
    replicas: [R1],
    healthCheck: false,
    ...options,
  } as RouterOptions) as unknown as Router
  return { kit, router }
}

const nodeOf = (r: { rows: unknown[] }) => (r.rows[0] as { node: string }).node

afterEach(() => {
  vi.useRealTimers()
})

describe('router lifecycle (fake driver)', () => {
  it('close() lets in-flight statements finish, then ends every pool; later calls share it; then RouterClosedError', async () => {
    vi.useFakeTimers({ now: 0 })
    const { kit, router } = setup()
    kit.onExecute = () => new Promise((r) => setTimeout(() => r(undefined), 30))
    const running = router.query('UPDATE t SET a = 1')
    await vi.advanceTimersByTimeAsync(0)
    const closing = router.close()
    expect(router.close()).toBe(closing)
    expect(router.closed).toBe(true)
    await vi.advanceTimersByTimeAsync(50)
    await closing
    expect(nodeOf(await running)).toBe('primary') // finished, not aborted
    expect(kit.pools.primary?.ended).toBe(1)
    await expect(router.query('SELECT 1')).rejects.toBeInstanceOf(RouterClosedError)
  })

  it('onQuery listeners see every statement (node, role, duration, outcome) until unsubscribed; a throwing one is ignored', async () => {
    const { kit, router } = setup()
    const seen: QueryObservation[] = []
    const off = router.onQuery((o) => seen.push(o))
    const offBad = router.onQuery(() => {
      throw new Error('metrics bug')
    })
    try {
      await router.query('INSERT INTO t VALUES (1)')
      await router.readOnly(() => router.query('SELECT 1'))
      kit.onExecute = () => new FakeConnectError('x')
      await router.query('INSERT INTO t VALUES (1)').catch(() => {})
      off()
      offBad()
      off()
      await router.query('INSERT INTO t VALUES (1)').catch(() => {})
      expect(seen.map((o) => [o.cluster, o.node, o.role, o.ok])).toEqual([
        ['default', 'primary', 'primary', true],
        ['default', 'replica1', 'replica', true],
        ['default', 'primary', 'primary', false],
      ])
      expect(seen.every((o) => o.durationMs >= 0)).toBe(true)
    } finally {
      await router.close()
    }
  })

  it('stats() redacts passwords and counts queries and errors per node', async () => {
    const { kit, router } = setup()
    try {
      await router.query('SELECT 1')
      kit.onExecute = () => new FakeConnectError('primary')
      await router.query('SELECT 1').catch(() => {})
      const [primary] = router.stats().nodes
      expect(primary).toMatchObject({
        name: 'primary',
        role: 'primary',
        queries: 1,
        errors: 1,
        state: 'suspect',
      })
      expect(JSON.stringify(router.stats())).not.toContain('s3cr3t')
      expect(primary?.lastError).toContain('ECONNREFUSED')
    } finally {
      await router.close()
    }
  })

  it('a write whose connection is lost after it was sent: WriteOutcomeUnknownError (both driver paths)', async () => {
    for (const callbacks of [true, false]) {
      const { kit, router } = setup({}, callbacks)
      try {
        await router.query('SELECT 1') // the primary was reached: later writes take the hot path
        kit.onExecute = (node) => new FakeConnectError(node, 'ECONNRESET')
        const err = await router.query('UPDATE t SET a = 1').catch((e: unknown) => e)
        expect(err).toBeInstanceOf(WriteOutcomeUnknownError)
        expect((err as Error).cause).toBeInstanceOf(FakeConnectError)
        // a session's write takes its own connection: same mapping
        const inSession = await router
          .session(() => router.query('UPDATE t SET a = 1'))
          .catch((e: unknown) => e)
        expect(inSession).toBeInstanceOf(WriteOutcomeUnknownError)
      } finally {
        await router.close()
      }
    }
  })

  it('a driver timeout is evidence about the statement: its connection is closed, the node stays up', async () => {
    const { kit, router } = setup()
    try {
      kit.onExecute = () => new FakeTimeoutError('Query read timeout')
      await expect(router.query('SELECT 1')).rejects.toBeInstanceOf(FakeTimeoutError)
      await expect(router.query('SELECT 1')).rejects.toBeInstanceOf(FakeTimeoutError)
      expect(router.stats().nodes[0]?.state).toBe('up')
      expect(kit.pools.primary?.busy).toBe(0)
    } finally {
      await router.close()
    }
  })

  it('queryTimeoutMs on the hot path: cancelled on the server (connection kept) or not (closed, node probed soon)', async () => {
    vi.useFakeTimers({ now: 0 })
    const { kit, router } = setup({ queryTimeoutMs: 100, connectTimeoutMs: 50 })
    try {
      await router.query('SELECT 1')
      // no cancel in the driver: the connection is closed, the statement fails with a connection error
      kit.onExecute = () => HANG
      const lost = router.query('UPDATE t SET a = 1').catch((e: unknown) => e)
      await vi.advanceTimersByTimeAsync(200)
      expect(await lost).toMatchObject({ name: 'QueryTimeoutError', cancelled: false, outcome: 'unknown' })
      // a cancel the server accepts: the statement fails with its cancellation error, the connection is kept
      kit.driver.cancel = async (conn) => {
        conn.fail?.(new Error('canceling statement due to user request'))
        return true
      }
      const cancelled = router.readOnly(() => router.query('SELECT pg_sleep(1)')).catch((e: unknown) => e)
      await vi.advanceTimersByTimeAsync(200)
      const err = (await cancelled) as QueryTimeoutError
      expect(err).toBeInstanceOf(QueryTimeoutError)
      expect(err.cancelled).toBe(true)
      expect(kit.pools.replica1?.destroyed).toBe(0)
      // the statement completes anyway after its timeout: its result is returned
      kit.onExecute = () => new Promise((r) => setTimeout(() => r(undefined), 120))
      kit.driver.cancel = () => new Promise((r) => setTimeout(() => r(true), 30))
      const late = router.query('SELECT 1')
      await vi.advanceTimersByTimeAsync(200)
      expect(nodeOf(await late)).toBe('primary')
      expect(router.stats().nodes.map((n) => n.state)).toEqual(['up', 'up'])
    } finally {
      await router.close()
    }
  })

  it('a driver whose execute throws synchronously fails the statement cleanly (both driver paths)', async () => {
    for (const callbacks of [true, false]) {
      const { kit, router } = setup({}, callbacks)
      try {
        await router.query('SELECT 1')
        const bug = () => {
          throw new Error('driver bug')
        }
        if (callbacks) kit.driver.executeCallback = bug
        else kit.driver.execute = bug
        await expect(router.query('SELECT 1')).rejects.toThrow('driver bug')
        expect(kit.pools.primary?.busy).toBe(0)
        expect(router.stats().nodes[0]?.inFlight).toBe(0)
      } finally {
        await router.close()
      }
    }
  })
})

describe('discovery and roles (fake driver, fake timers)', () => {
  it('nodes without roles: the probes find the primary; a promotion moves writes (primary:changed)', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver()
    kit.roles.node1 = 'primary'
    kit.roles.node2 = 'replica'
    const router = createRouter({
      driver: kit.driver,
      nodes: ['postgres://db1/app', 'postgres://db2/app'],
      healthCheck: { intervalMs: 100, timeoutMs: 50, failureThreshold: 1 },
    })
    const changes: string[] = []
    router.on('primary:changed', (e) => changes.push(`${e.from}->${e.to}`))
    try {
      const early = await router.query('INSERT INTO t VALUES (1)').catch((e: unknown) => e)
      expect(early).toBeInstanceOf(PrimaryUnavailableError)
      expect((early as Error).message).toBe(
        'the primary of cluster "default" is not known yet (no node reports being the primary)',
      )
      await vi.advanceTimersByTimeAsync(0)
      await router.ready()
      expect(nodeOf(await router.query('INSERT INTO t VALUES (1)'))).toBe('node1')
      expect(nodeOf(await router.readOnly(() => router.query('SELECT 1')))).toBe('node2')
      kit.modes.node1 = 'refusing'
      kit.roles.node2 = 'primary'
      await vi.advanceTimersByTimeAsync(100)
      expect(changes).toEqual(['undefined->node1', 'node1->node2'])
      expect(nodeOf(await router.query('INSERT INTO t VALUES (1)'))).toBe('node2')
    } finally {
      await router.close()
    }
  })

  it('a configured primary reporting replica is untrusted (role-mismatch), writes refused until it reports primary again', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver()
    const router = createRouter({
      driver: kit.driver,
      primary: 'postgres://db1/app',
      replicas: [R1],
      healthCheck: { intervalMs: 100, timeoutMs: 50 },
    })
    const events: string[] = []
    router.on('node:role-mismatch', (e) => events.push(`mismatch ${e.node} ${e.actual}`))
    router.on('node:role-ok', (e) => events.push(`ok ${e.node}`))
    try {
      await vi.advanceTimersByTimeAsync(0)
      await router.ready()
      kit.roles.primary = 'replica'
      await vi.advanceTimersByTimeAsync(100)
      const err = await router.query('INSERT INTO t VALUES (1)').catch((e: unknown) => e)
      expect((err as Error).message).toBe(
        'the primary of cluster "default" is "primary", which is not trusted: it reports being a replica',
      )
      delete kit.roles.primary
      await vi.advanceTimersByTimeAsync(100)
      expect(nodeOf(await router.query('INSERT INTO t VALUES (1)'))).toBe('primary')
      expect(events).toEqual(['mismatch primary replica', 'ok primary'])
    } finally {
      await router.close()
    }
  })

  it('replication lag from positions: a replica behind maxReplicationLagMs is excluded (node:lagging), back when caught up', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver()
    const router = createRouter({
      driver: kit.driver,
      primary: 'postgres://db1/app',
      replicas: [R1],
      maxReplicationLagMs: 250,
      healthCheck: { intervalMs: 100, timeoutMs: 50 },
    })
    const events: string[] = []
    router.on('node:lagging', (e) => events.push(`lagging ${e.node} ${e.lagMs}`))
    router.on('node:caught-up', (e) => events.push(`caught-up ${e.node} ${e.lagMs}`))
    try {
      await vi.advanceTimersByTimeAsync(0)
      await router.ready()
      // the primary moves on every probe; the replica stays at 0/1
      for (let i = 2; i <= 6; i++) {
        kit.positions.primary = `0/${i}`
        await vi.advanceTimersByTimeAsync(100)
      }
      expect(router.stats().nodes[1]?.unusableReason).toBe('lagging')
      expect(nodeOf(await router.readOnly(() => router.query('SELECT 1')))).toBe('primary')
      kit.positions.replica1 = '0/6'
      await vi.advanceTimersByTimeAsync(100)
      expect(nodeOf(await router.readOnly(() => router.query('SELECT 1')))).toBe('replica1')
      expect(events).toHaveLength(2)
      expect(events[0]).toMatch(/^lagging replica1 \d+$/)
      expect(events[1]).toBe('caught-up replica1 0')
    } finally {
      await router.close()
    }
  })

  it('split brain: after the primary is lost, two nodes reporting primary promote neither until one steps down', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver()
    kit.roles.node1 = 'primary'
    const router = createRouter({
      driver: kit.driver,
      nodes: ['postgres://db1/app', 'postgres://db2/app', 'postgres://db3/app'],
      healthCheck: { intervalMs: 100, timeoutMs: 50, failureThreshold: 1 },
    })
    const changes: string[] = []
    router.on('primary:changed', (e) => changes.push(`${e.from}->${e.to}`))
    try {
      await vi.advanceTimersByTimeAsync(0)
      await router.ready()
      kit.roles.node2 = 'primary' // while node1 is up and primary: nothing changes, both are untrusted
      kit.roles.node3 = 'primary'
      await vi.advanceTimersByTimeAsync(100)
      expect(router.stats().nodes.map((n) => n.unusableReason)).toEqual([
        undefined,
        'role-mismatch',
        'role-mismatch',
      ])
      kit.modes.node1 = 'refusing'
      await vi.advanceTimersByTimeAsync(100)
      const err = await router.query('INSERT INTO t VALUES (1)').catch((e: unknown) => e)
      expect((err as Error).message).toMatch(/^the primary of cluster "default" is "node1", which is down/)
      kit.roles.node3 = 'replica'
      await vi.advanceTimersByTimeAsync(100)
      expect(nodeOf(await router.query('INSERT INTO t VALUES (1)'))).toBe('node2')
      expect(changes).toEqual(['undefined->node1', 'node1->node2'])
    } finally {
      await router.close()
    }
  })

  it("a driver's kept-connection prober is used for probes and closed with the router", async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver()
    const made: string[] = []
    let closed = 0
    kit.driver.createProber = (node, { maxAgeMs }) => {
      made.push(`${node.name} ${maxAgeMs > 0}`)
      return { probe: (signal) => kit.driver.probe(node, signal), close: () => void closed++ }
    }
    const router = createRouter({
      driver: kit.driver,
      primary: 'postgres://db1/app',
      replicas: [R1],
      healthCheck: { intervalMs: 100, timeoutMs: 50 },
    })
    await vi.advanceTimersByTimeAsync(250)
    await router.ready()
    expect(made).toEqual(['primary true', 'replica1 true']) // one per node, kept across rounds
    expect(kit.probes.primary?.length).toBeGreaterThanOrEqual(3)
    await router.close()
    expect(closed).toBe(2)
  })
})
