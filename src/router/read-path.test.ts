import { afterEach, describe, expect, it, vi } from 'vitest'
import { NoHealthyReplicaError } from '../errors/no-healthy-replica-error.js'
import { NodeAbortError } from '../errors/node-abort-error.js'
import { PrimaryUnavailableError } from '../errors/primary-unavailable-error.js'
import { ReadOnlyViolationError } from '../errors/read-only-violation-error.js'
import {
  FakeConnectError,
  type FakeDriverKit,
  FakeReadOnlyError,
  FakeStatementError,
  fakeDriver,
  HANG,
} from './fake-driver.test-kit.js'
import type { RouterOptions } from './options.js'
import { createRouter, type Router } from './router.js'

const PRIMARY = 'postgres://db1/app'
const R1 = 'postgres://db2/app'
const R2 = 'postgres://db3/app'

/** A router over the fake driver, no probes: every node is usable at once. */
function setup(
  options: Partial<RouterOptions> = {},
  callbacks = true,
): { kit: FakeDriverKit; router: Router; retries: string[]; events: string[] } {
  const kit = fakeDriver({}, { callbacks })
  const router = createRouter({
    driver: kit.driver,
    primary: PRIMARY,
    replicas: [R1, R2],
    healthCheck: false,
    ...options,
  } as RouterOptions) as unknown as Router
  const retries: string[] = []
  const events: string[] = []
  router.on('retry', (e) => retries.push(`${e.from}->${e.to}`))
  for (const name of ['fallback', 'fallback:end', 'node:down', 'node:up', 'node:suspect'] as const)
    router.on(name, (e) => events.push(`${name}${'node' in e ? ` ${e.node}` : ''}`))
  return { kit, router, retries, events }
}

const read = (router: Router, sql = 'SELECT 1') => router.readOnly(() => router.query(sql))
const nodeOf = (r: { rows: unknown[] }) => (r.rows[0] as { node: string }).node

afterEach(() => {
  vi.useRealTimers()
})

describe.each([
  ['callback path (acquireCallback/executeCallback)', true],
  ['promise path (driver without callbacks)', false],
])('ReadPath over the fake driver: %s', (_name, callbacks) => {
  it('balances reads over the replicas; writes and unscoped statements go to the primary', async () => {
    const { kit, router } = setup({}, callbacks)
    try {
      const served = [nodeOf(await read(router)), nodeOf(await read(router)), nodeOf(await read(router))]
      expect(new Set(served)).toEqual(new Set(['replica1', 'replica2']))
      expect(nodeOf(await router.query('SELECT 1'))).toBe('primary')
      expect(nodeOf(await router.primary(() => router.query('SELECT 1')))).toBe('primary')
      expect(kit.executed.primary).toBe(2)
      expect(router.stats().nodes.find((n) => n.name === 'replica1')?.queries).toBeGreaterThan(0)
    } finally {
      await router.close()
    }
  })

  it('retries a read that failed with a connection error once, on another replica (retry event)', async () => {
    const { kit, router, retries } = setup({}, callbacks)
    try {
      kit.onExecute = (node) => (node === 'replica1' ? new FakeConnectError(node, 'ECONNRESET') : undefined)
      const served = new Set<string>()
      for (let i = 0; i < 4; i++) served.add(nodeOf(await read(router)))
      expect(served).toEqual(new Set(['replica2']))
      expect(retries.length).toBeGreaterThanOrEqual(1)
      expect(new Set(retries)).toEqual(new Set(['replica1->replica2']))
      expect(router.stats().nodes.find((n) => n.name === 'replica1')?.errors).toBeGreaterThanOrEqual(1)
      // every checkout and statement, retries included, took the path this driver offers
      const { acquire, acquireCallback, execute, executeCallback } = kit.calls
      if (callbacks) expect([acquire, execute]).toEqual([0, 0])
      else expect([acquireCallback, executeCallback]).toEqual([0, 0])
      expect(callbacks ? acquireCallback : acquire).toBe(4 + retries.length)
      expect(callbacks ? executeCallback : execute).toBe(4 + retries.length)
    } finally {
      await router.close()
    }
  })

  it('a failed checkout is retried elsewhere too; a retry that fails again rejects with its error', async () => {
    const { kit, router, retries } = setup({ replicas: [R1] }, callbacks)
    try {
      kit.modes.replica1 = 'refusing'
      // the only replica refuses: the retry goes to the primary (fallbackToPrimary)
      expect(nodeOf(await read(router))).toBe('primary')
      expect(retries).toEqual(['replica1->primary'])
      kit.modes.primary = 'refusing'
      kit.modes.replica1 = 'up'
      kit.onExecute = (node) => (node === 'replica1' ? new FakeConnectError(node) : undefined)
      const err = await read(router).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(FakeConnectError)
      expect((err as Error).message).toContain('fake primary')
      expect(retries).toEqual(['replica1->primary', 'replica1->primary'])
    } finally {
      await router.close()
    }
  })

  it('statement errors are never retried, nor are reads with retryReads: false', async () => {
    const { kit, router, retries } = setup({ retryReads: false }, callbacks)
    try {
      kit.onExecute = () => new FakeConnectError('x')
      await expect(read(router)).rejects.toBeInstanceOf(FakeConnectError)
      kit.onExecute = () => new FakeStatementError('syntax error')
      await expect(read(router)).rejects.toThrow('syntax error')
      expect(retries).toEqual([])
    } finally {
      await router.close()
    }
    const s = setup({}, callbacks)
    try {
      s.kit.onExecute = () => new FakeStatementError('syntax error')
      const err = (await read(s.router).catch((e: unknown) => e)) as Error
      expect(err).toBeInstanceOf(FakeStatementError)
      expect(err.stack).toContain('--- routemate caller ---')
      expect(s.retries).toEqual([])
      expect(s.kit.executed.primary).toBeUndefined()
      // the caller's async frames are there: a named caller of a read, and of a write
      async function namedReadCaller(): Promise<unknown> {
        return await read(s.router)
      }
      async function namedWriteCaller(): Promise<unknown> {
        return await s.router.query('INSERT INTO t VALUES (1)')
      }
      for (const [caller, name] of [
        [namedReadCaller, 'namedReadCaller'],
        [namedWriteCaller, 'namedWriteCaller'],
      ] as const) {
        const e = (await caller().catch((x: unknown) => x)) as Error
        expect(e).toBeInstanceOf(FakeStatementError)
        expect(e.stack?.split('--- routemate caller ---')[1]).toContain(name)
      }
    } finally {
      await s.router.close()
    }
  })

  it('a read the server refuses as a write is ReadOnlyViolationError; a write in readOnly is refused before sending', async () => {
    const { kit, router } = setup({}, callbacks)
    try {
      kit.onExecute = () => new FakeReadOnlyError('cannot execute UPDATE in a read-only transaction')
      const err = (await read(router, 'SELECT f()').catch((e: unknown) => e)) as Error
      expect(err).toBeInstanceOf(ReadOnlyViolationError)
      expect(err.cause).toBeInstanceOf(FakeReadOnlyError)
      const before = kit.statements.length
      await expect(read(router, 'UPDATE t SET a = 1')).rejects.toThrow(/before sending it to "default"/)
      expect(kit.statements.length).toBe(before)
    } finally {
      await router.close()
    }
  })
})

describe('ReadPath: fallback and candidates', () => {
  it('no replica configured: reads go to the primary, or fail with NoHealthyReplicaError when fallback is off', async () => {
    const a = setup({ replicas: [] })
    try {
      expect(nodeOf(await read(a.router))).toBe('primary')
    } finally {
      await a.router.close()
    }
    const b = setup({ replicas: [], fallbackToPrimary: false })
    try {
      await expect(read(b.router)).rejects.toThrow(
        'no replica configured in cluster "default" and fallbackToPrimary is false',
      )
    } finally {
      await b.router.close()
    }
  })

  it('a retry with fallback off and no other replica rethrows the error', async () => {
    const { kit, router, retries } = setup({ replicas: [R1], fallbackToPrimary: false })
    try {
      kit.onExecute = (node) => (node === 'replica1' ? new FakeConnectError(node) : undefined)
      await expect(read(router)).rejects.toBeInstanceOf(FakeConnectError)
      expect(retries).toEqual([])
    } finally {
      await router.close()
    }
  })

  it('replicas marked down: reads fall back to the primary (fallback event), and back when one is up again (fallback:end)', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver()
    const router = createRouter({
      driver: kit.driver,
      primary: PRIMARY,
      replicas: [R1],
      healthCheck: { intervalMs: 100, timeoutMs: 50, failureThreshold: 1 },
    })
    const events: string[] = []
    router.on('fallback', (e) => events.push(`fallback ${e.toPrimary} ${JSON.stringify(e.replicas)}`))
    router.on('fallback:end', () => events.push('fallback:end'))
    try {
      await vi.advanceTimersByTimeAsync(0)
      await router.ready()
      expect(nodeOf(await read(router as unknown as Router))).toBe('replica1')
      kit.modes.replica1 = 'refusing'
      await vi.advanceTimersByTimeAsync(100)
      expect(router.stats().clusters[0]?.fallingBack).toBe(true)
      expect(nodeOf(await read(router as unknown as Router))).toBe('primary')
      kit.modes.replica1 = 'up'
      await vi.advanceTimersByTimeAsync(100)
      expect(nodeOf(await read(router as unknown as Router))).toBe('replica1')
      expect(events).toEqual(['fallback true {"replica1":"down"}', 'fallback:end'])
    } finally {
      await router.close()
    }
  })

  it('NoHealthyReplicaError names why each replica is unusable; the primary down is PrimaryUnavailableError', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver({ primary: 'refusing', replica2: 'refusing' })
    kit.probeExtras.replica1 = { replicating: false }
    const router = createRouter({
      driver: kit.driver,
      primary: PRIMARY,
      replicas: [R1, R2],
      fallbackToPrimary: false,
      healthCheck: { intervalMs: 100, timeoutMs: 50, failureThreshold: 1 },
    })
    try {
      await vi.advanceTimersByTimeAsync(0)
      await router.ready()
      const err = await read(router as unknown as Router).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(NoHealthyReplicaError)
      expect((err as Error).message).toBe(
        'no usable replica in cluster "default" (replica1: not-replicating, replica2: not-probed-yet) and fallbackToPrimary is false',
      )
      const w = (await router.query('INSERT INTO t VALUES (1)').catch((e: unknown) => e)) as Error
      expect(w).toBeInstanceOf(PrimaryUnavailableError)
      expect(w.message).toMatch(
        /^the primary of cluster "default" is "primary", which is down: connect ECONNREFUSED/,
      )
      expect(w.cause).toBeInstanceOf(FakeConnectError)
    } finally {
      await router.close()
    }
  })

  it('a read before the first probes waits for them instead of falling back', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver()
    const router = createRouter({
      driver: kit.driver,
      primary: PRIMARY,
      replicas: [R1],
      healthCheck: { intervalMs: 100, timeoutMs: 50 },
    })
    try {
      const p = read(router as unknown as Router)
      await vi.advanceTimersByTimeAsync(0)
      expect(nodeOf(await p)).toBe('replica1')
      expect(kit.executed.primary).toBeUndefined()
    } finally {
      await router.close()
    }
  })

  it('classify: true sends plain reads outside any scope to replicas, writes to the primary', async () => {
    const { kit, router } = setup({ classify: true })
    try {
      expect(nodeOf(await router.query('SELECT * FROM t'))).toMatch(/^replica/)
      expect(nodeOf(await router.query('SELECT * FROM t FOR UPDATE'))).toBe('primary')
      expect(nodeOf(await router.primary(() => router.query('SELECT 1')))).toBe('primary')
      expect(kit.executed.primary).toBe(2)
    } finally {
      await router.close()
    }
  })
})

describe('ReadPath: abort of in-flight work', () => {
  it('close() aborts a statement still running past its timeout and a checkout that hangs; no retry behind close()', async () => {
    const { kit, router, retries } = setup()
    kit.onExecute = (node) => (node === 'replica1' ? HANG : undefined)
    kit.modes.replica2 = 'hung'
    const running = read(router).catch((e: unknown) => e)
    const connecting = read(router).catch((e: unknown) => e)
    await new Promise((r) => setTimeout(r, 5))
    expect(router.stats().nodes.map((n) => n.inFlight)).toEqual([0, 1, 1])
    await router.close({ timeoutMs: 0 })
    const [a, b] = [await running, await connecting]
    expect(a).toBeInstanceOf(FakeConnectError)
    expect((a as Error).message).toContain('connection destroyed')
    expect(b).toBeInstanceOf(NodeAbortError)
    expect(retries).toEqual([])
    expect(kit.pools.replica1?.destroyed).toBeGreaterThanOrEqual(1)
    expect(router.stats().nodes.map((n) => n.inFlight)).toEqual([0, 0, 0])
    expect(kit.pools.replica1?.ended).toBe(2) // its pool and its read-only pool
  })

  it('a node marked down aborts its in-flight reads, which are retried on another replica', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver()
    const router = createRouter({
      driver: kit.driver,
      primary: PRIMARY,
      replicas: [R1, R2],
      balancer: 'round-robin',
      healthCheck: { intervalMs: 100, timeoutMs: 50, failureThreshold: 1 },
    }) as unknown as Router
    const retries: string[] = []
    router.on('retry', (e) => retries.push(`${e.from}->${e.to}`))
    try {
      await vi.advanceTimersByTimeAsync(0)
      await router.ready()
      kit.onExecute = (node) => (node === 'replica1' ? HANG : undefined)
      const results = [read(router), read(router)]
      await vi.advanceTimersByTimeAsync(0)
      kit.modes.replica1 = 'refusing'
      await vi.advanceTimersByTimeAsync(100) // the probe fails: down, its work aborted
      const served = (await Promise.all(results)).map(nodeOf)
      expect(served).toEqual(['replica2', 'replica2'])
      expect(retries).toEqual(['replica1->replica2'])
    } finally {
      await router.close()
    }
  })
})

describe('ReadPath: read-your-writes', () => {
  it('window mode: a session that wrote reads from the primary until the window passed', async () => {
    vi.useFakeTimers({ now: 1_000_000 })
    const { router, kit } = setup({ readYourWrites: { mode: 'window', windowMs: 1000 } })
    try {
      await router.session(async () => {
        expect(nodeOf(await read(router))).toMatch(/^replica/)
        await router.query('INSERT INTO t VALUES (1)')
        expect(nodeOf(await read(router))).toBe('primary')
        vi.setSystemTime(1_000_000 + 1001)
        expect(nodeOf(await read(router))).toMatch(/^replica/)
      })
      expect(kit.executed.primary).toBe(2)
      expect(router.stats().clusters[0]?.readYourWritesRedirects).toBe(1)
    } finally {
      await router.close()
    }
  })

  it('position mode with a wait: a replica that reached the write serves it, else the primary; the check runs on the serving connection', async () => {
    const { router, kit } = setup({ readYourWrites: { mode: 'position', maxWaitMs: 1 } })
    kit.positions.primary = '0/10'
    kit.positions.replica1 = '0/5'
    kit.positions.replica2 = '0/5'
    try {
      await router.session(async () => {
        await router.query('INSERT INTO t VALUES (1)')
        expect(nodeOf(await read(router))).toBe('primary') // neither replica reached 0/10
        kit.positions.replica2 = '0/12'
        expect(nodeOf(await read(router))).toBe('replica2')
        // now known to have replayed it (its position was recorded): routed without asking
        const checks = kit.statements.length
        expect(nodeOf(await read(router))).toBe('replica2')
        expect(kit.statements.length).toBe(checks + 1)
        // a SELECT does not make the session "have written"
        await router.query('SELECT 1')
      })
      expect(router.stats().clusters[0]?.readYourWritesRedirects).toBe(1)
    } finally {
      await router.close()
    }
  })

  it.each([
    [
      'the check fails with a statement error (a foreign token)',
      (kit: FakeDriverKit) => {
        kit.onWait = () => Promise.reject(new FakeStatementError('invalid input syntax for type pg_lsn'))
      },
    ],
    [
      'the check fails with a connection error',
      (kit: FakeDriverKit) => {
        kit.onWait = () => Promise.reject(new FakeConnectError('replica1'))
      },
    ],
    [
      'the replica cannot say',
      (kit: FakeDriverKit) => {
        kit.onWait = async () => undefined
      },
    ],
    [
      'the checkout fails',
      (kit: FakeDriverKit) => {
        kit.modes.replica1 = 'refusing'
      },
    ],
    [
      'the read fails with a connection error',
      (kit: FakeDriverKit) => {
        kit.onExecute = (node) => (node === 'replica1' ? new FakeConnectError(node) : undefined)
      },
    ],
  ])('position mode: %s: the read goes to the primary', async (_name, arrange) => {
    const { router, kit } = setup({ replicas: [R1], readYourWrites: { mode: 'position', maxWaitMs: 50 } })
    kit.positions.primary = '0/10'
    kit.onWait = async () => '0/11'
    try {
      await router.session(async () => {
        await router.query('INSERT INTO t VALUES (1)')
        arrange(kit)
        expect(nodeOf(await read(router))).toBe('primary')
      })
    } finally {
      await router.close()
    }
  })

  it('position mode with a wait: a statement error of the read on a caught-up replica is thrown', async () => {
    const { router, kit } = setup({ replicas: [R1], readYourWrites: { mode: 'position', maxWaitMs: 5 } })
    kit.positions.primary = '0/10'
    kit.onWait = async (_node, target, timeoutMs) => {
      expect([target, timeoutMs]).toEqual(['0/10', 5])
      return '0/11'
    }
    try {
      await router.session(async () => {
        await router.query('INSERT INTO t VALUES (1)')
        kit.onExecute = (node) => (node === 'replica1' ? new FakeStatementError('boom') : undefined)
        await expect(read(router)).rejects.toThrow('boom')
        expect(kit.executed.primary).toBe(1)
      })
    } finally {
      await router.close()
    }
  })

  it('position mode, no wait (the default): a read not known to be caught up goes to the primary at once; one shared background read of the replica position serves the next reads', async () => {
    const { router, kit } = setup({ replicas: [R1] })
    kit.positions.primary = '0/10'
    kit.positions.replica1 = '0/5'
    const asked: Array<[string, string, number]> = []
    let release: () => void = () => {}
    kit.onWait = async (node, target, timeoutMs) => {
      asked.push([node, target, timeoutMs])
      await new Promise<void>((r) => {
        release = r
      })
      return kit.positions[node]
    }
    try {
      await router.session(async () => {
        await router.query('INSERT INTO t VALUES (1)')
        const before = kit.checkouts.length
        // 8 concurrent reads: all on the primary, none waits, one replica check in flight
        const nodes = await Promise.all(Array.from({ length: 8 }, async () => nodeOf(await read(router))))
        expect(nodes).toEqual(Array(8).fill('primary'))
        // (the session's position is read beside the first reads, then the replica's)
        await vi.waitFor(() => expect(asked).toEqual([['replica1', '0/10', 0]]))
        expect(kit.checkouts.slice(before).filter((c) => c === 'ro:replica1')).toHaveLength(1)
        kit.positions.replica1 = '0/12' // the replica catches up while the check runs
        release()
        await vi.waitFor(() => expect(kit.pools.replica1?.busy).toBe(0)) // the check gave its connection back
        // recorded: the next read goes to the replica with no check of its own
        const statements = kit.statements.length
        expect(nodeOf(await read(router))).toBe('replica1')
        expect(kit.statements.length).toBe(statements + 1)
        expect(asked).toHaveLength(1)
      })
      expect(router.stats().clusters[0]?.readYourWritesRedirects).toBe(8)
    } finally {
      await router.close()
    }
  })

  it('position mode, no wait: a failing background check only counts for health; reads stay on the primary', async () => {
    const { router, kit, events } = setup({ replicas: [R1] })
    kit.positions.primary = '0/10'
    kit.onWait = () => Promise.reject(new FakeConnectError('replica1'))
    const errors: unknown[] = []
    router.on('error', (e) => errors.push(e))
    try {
      await router.session(async () => {
        await router.query('INSERT INTO t VALUES (1)')
        for (let i = 0; i < 3; i++) {
          expect(nodeOf(await read(router))).toBe('primary')
          await new Promise((r) => setImmediate(r))
        }
      })
      expect(router.stats().nodes.find((n) => n.name === 'replica1')?.errors).toBeGreaterThan(0)
      expect(events.filter((e) => e.startsWith('node:'))).not.toContain('node:up replica1')
    } finally {
      await router.close()
    }
  })

  it('position mode: a write whose position cannot be read sends the session to the primary', async () => {
    const { router, kit } = setup()
    kit.failPositionAfterWrite = true
    try {
      await router.session(async () => {
        await router.query('INSERT INTO t VALUES (1)')
        expect(nodeOf(await read(router))).toBe('primary')
        const checkouts = kit.checkouts.length
        expect(nodeOf(await read(router))).toBe('primary')
        expect(kit.checkouts.slice(checkouts)).toEqual(['ro:primary'])
      })
    } finally {
      await router.close()
    }
  })

  it('position mode: a read of a session that wrote, failing on its replica, is retried only where the write is visible', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver()
    kit.positions.primary = '0/10'
    kit.positions.replica1 = '0/20'
    kit.positions.replica2 = '0/20'
    const router = createRouter({
      driver: kit.driver,
      primary: PRIMARY,
      replicas: [R1, R2],
      healthCheck: { intervalMs: 100, timeoutMs: 50 },
    }) as unknown as Router
    const retries: string[] = []
    router.on('retry', (e) => retries.push(`${e.from}->${e.to}`))
    try {
      await vi.advanceTimersByTimeAsync(0)
      await router.ready()
      await router.session(async () => {
        await router.query('INSERT INTO t VALUES (1)')
        // the position is not read yet: the first read goes to the primary at once, the position is read beside it
        expect(nodeOf(await read(router))).toBe('primary')
        await vi.advanceTimersByTimeAsync(0)
        // both replicas replayed 0/10 (probes said 0/20): one fails, the other serves
        kit.onExecute = (node) => (node === 'replica1' ? new FakeConnectError(node) : undefined)
        expect(nodeOf(await read(router))).toBe('replica2')
        expect(nodeOf(await read(router))).toBe('replica2')
      })
      expect(retries).toEqual(['replica1->replica2'])
    } finally {
      await router.close()
    }
  })

  it("position mode: the session's read failing on the only replica that has the write is retried on the primary", async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver()
    kit.positions.primary = '0/10'
    kit.positions.replica1 = '0/20'
    const router = createRouter({
      driver: kit.driver,
      primary: PRIMARY,
      replicas: [R1],
      healthCheck: { intervalMs: 100, timeoutMs: 50 },
    }) as unknown as Router
    const retries: string[] = []
    router.on('retry', (e) => retries.push(`${e.from}->${e.to}`))
    try {
      await vi.advanceTimersByTimeAsync(0)
      await router.ready()
      await router.session(async () => {
        await router.query('INSERT INTO t VALUES (1)')
        expect(nodeOf(await read(router))).toBe('primary') // position not read yet: no wait, the primary
        await vi.advanceTimersByTimeAsync(0)
        kit.onExecute = (node) => (node === 'replica1' ? new FakeConnectError(node) : undefined)
        expect(nodeOf(await read(router))).toBe('primary')
      })
      expect(retries).toEqual(['replica1->primary'])
      expect(router.stats().clusters[0]?.readYourWritesRedirects).toBe(2)
    } finally {
      await router.close()
    }
  })

  it("a token from another instance: its position is checked by reading the primary's, then routes the reads", async () => {
    const a = setup()
    const b = setup() // another instance: it never saw the write
    for (const kit of [a.kit, b.kit]) {
      kit.positions.primary = '0/10'
      kit.positions.replica1 = '0/10'
      kit.positions.replica2 = '0/3'
    }
    try {
      const token = await a.router.session(async () => {
        await a.router.query('INSERT INTO t VALUES (1)')
        return a.router.consistencyToken()
      })
      const served = await b.router.withConsistencyToken(token, async () => [
        nodeOf(await read(b.router)),
        nodeOf(await read(b.router)),
      ])
      // replica2 (0/3) never serves it: the checked position 0/10 holds
      expect(served.every((n) => n === 'replica1' || n === 'primary')).toBe(true)
      // The session only wrote: its token says `unknown` (no position was read at the write), and
      // the primary's position was read (on its read-only pool) after the token arrived.
      expect(b.kit.checkouts).toContain('ro:primary')
      // a session that wrote and then read has its position (0/10) in its token
      const positioned = await a.router.session(async () => {
        await a.router.query('INSERT INTO t VALUES (2)')
        await read(a.router) // (to the primary at once; the position is read beside it)
        const positionIn = (t: string | undefined) =>
          JSON.parse(Buffer.from(String(t).split('.')[1] ?? '', 'base64url').toString()).p.default
        await vi.waitFor(() => expect(positionIn(a.router.consistencyToken())).toBe('0/10'))
        return a.router.consistencyToken()
      })
      // a token whose position is beyond what the primary reached is dropped: reads are balanced again
      const c = setup()
      c.kit.positions.primary = '0/5'
      const dropped = await c.router.withConsistencyToken(positioned, async () => {
        const nodes = new Set<string>()
        for (let i = 0; i < 4; i++) nodes.add(nodeOf(await read(c.router)))
        return nodes
      })
      expect(dropped).toEqual(new Set(['replica1', 'replica2']))
      expect(c.router.stats().tokens).toMatchObject({ received: 1, rejected: 0, ignored: 1 })
      await c.router.close()
    } finally {
      await a.router.close()
      await b.router.close()
    }
  })

  it('a consistency token resumed elsewhere is checked against the primary before it routes', async () => {
    const a = setup()
    a.kit.positions.primary = '0/10'
    a.kit.positions.replica1 = '0/1'
    a.kit.positions.replica2 = '0/1'
    try {
      const token = await a.router.session(async () => {
        await a.router.query('INSERT INTO t VALUES (1)')
        return a.router.consistencyToken()
      })
      expect(token).toMatch(/^rm1\./)
      await a.router.withConsistencyToken(token, async () => {
        expect(nodeOf(await read(a.router))).toBe('primary')
        expect(nodeOf(await read(a.router))).toBe('primary')
      })
      expect(a.router.readYourWritesMode).toBe('position')
      expect(a.router.consistencyToken()).toBeUndefined()
    } finally {
      await a.router.close()
    }
  })
})
