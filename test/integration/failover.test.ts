/**
 * Real faults on a real cluster: a replica killed with SIGKILL, a replica frozen with SIGSTOP,
 * every replica down, the primary down. Each test asserts what a user checks: reads that could
 * succeed do, no hang, no leaked connection, no write on a replica.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  NoHealthyReplicaError,
  PrimaryUnavailableError,
  type Router,
  type RouterEvents,
} from '../../src/index.js'
import {
  type DialectCase,
  dialectsFor,
  expectIdle,
  LIVENESS_MS,
  nodeByPort,
  sleep,
  stateOf,
  type TestCluster,
  testRouter,
  waitFor,
} from './support/dialects.js'
import { logProbes, type ProbeLog } from './support/probe-log.js'

const HC = { intervalMs: 500, timeoutMs: 450, failureThreshold: 2 }
/**
 * Probe rounds of a node that may start between a fault and its `node:down`: `failureThreshold`
 * failures in a row, plus one round that may start in the instant before the fault takes effect.
 */
const DOWN_ROUNDS = HC.failureThreshold + 1

const activeLoads: Array<{ stop(): Promise<void> }> = []

/** Runs `readers` concurrent read loops until `stop()`; records results per node and failures. */
function readLoad(router: Router, d: DialectCase, who: (p: unknown) => string, readers: number) {
  let running = true
  const served: Record<string, number> = {}
  const failures: unknown[] = []
  const durations: Array<{ start: number; end: number }> = []
  const hardStop = Date.now() + 60_000 // a failed assertion must never leave a load running
  const loops = Array.from({ length: readers }, async () => {
    while (running && Date.now() < hardStop) {
      const start = Date.now()
      try {
        const { rows } = await router.readOnly(() => router.query<{ port: number }>(d.whoAmI))
        const node = who(rows[0]?.port)
        served[node] = (served[node] ?? 0) + 1
      } catch (err) {
        failures.push(err)
        await new Promise(setImmediate) // a read failing without I/O must not starve the timers
      }
      durations.push({ start, end: Date.now() })
    }
  })
  return {
    served,
    failures,
    durations,
    async stop() {
      running = false
      await Promise.all(loops)
    },
  }
}

describe.each(dialectsFor('failover'))('failover ($name)', (d: DialectCase) => {
  let cluster: TestCluster
  let router: Router
  let who: (port: unknown) => string
  let log: ProbeLog
  const events: Array<{ name: keyof RouterEvents; e: unknown; at: number }> = []
  /** When `node` was last marked down at or after `since`. */
  const downAt = (node: string, since: number): number | undefined =>
    events.find((x) => x.name === 'node:down' && (x.e as { node: string }).node === node && x.at >= since)?.at

  beforeAll(async () => {
    cluster = await d.start(2)
    who = nodeByPort(cluster)
    log = logProbes(d.driver())
    router = testRouter(d, cluster, {
      driver: log.driver,
      healthCheck: { ...HC, successThreshold: 1, maxBackoffMs: 1000 },
    })
    for (const name of ['node:down', 'node:up', 'fallback', 'fallback:end', 'retry'] as const) {
      router.on(name, (e) => events.push({ name, e, at: Date.now() }))
    }
    await router.ready()
  })

  afterEach(async () => {
    // A failed assertion must not leave a load running (nor blame its in-flight reads on a leak).
    await Promise.all(activeLoads.splice(0).map((l) => l.stop()))
    await expectIdle(router)
  })

  afterAll(async () => {
    await router?.close()
    await cluster?.stop()
  })

  it('kill -9 of a replica under 32 concurrent readers: marked down in time, reads carry on, re-admitted after restart', async () => {
    const load = readLoad(router, d, who, 32)
    activeLoads.push(load)
    await sleep(500)
    events.length = 0
    const killedAt = Date.now()
    await cluster.kill('replica1')
    await waitFor(() => stateOf(router, 'replica1') === 'down', LIVENESS_MS, 'replica1 down')
    const rounds = log.probesOf('replica1', killedAt, downAt('replica1', killedAt)).length
    const servedBefore = load.served.replica2 ?? 0
    await sleep(1000)
    expect(load.served.replica2 ?? 0).toBeGreaterThan(servedBefore) // reads carry on on the other replica
    await cluster.restart('replica1')
    const r1Before = load.served.replica1 ?? 0
    await waitFor(() => stateOf(router, 'replica1') === 'up', 10_000, 'replica1 re-admitted')
    await waitFor(() => (load.served.replica1 ?? 0) > r1Before, 5000, 'reads on replica1 again')
    await load.stop()
    console.log(
      `[${d.name}] kill -9 replica1: down after ${rounds} probe rounds (bound ${DOWN_ROUNDS}); ` +
        `failed reads ${load.failures.length} of ${load.durations.length}; ` +
        `retries ${events.filter((e) => e.name === 'retry').length}`,
    )
    expect(rounds).toBeLessThanOrEqual(DOWN_ROUNDS)
    expect(load.failures).toEqual([]) // retries absorb the kill
    await cluster.waitForReplication()
  })

  it('healthCheck: false: a replica killed under load is marked down by its failed queries and re-admitted after restart', async () => {
    const r = testRouter(d, cluster, { healthCheck: false })
    try {
      await r.ready()
      const load = readLoad(r, d, who, 8)
      activeLoads.push(load)
      await sleep(300)
      await cluster.kill('replica1')
      await waitFor(() => stateOf(r, 'replica1') === 'down', 5000, 'replica1 down (passive detection)')
      await cluster.restart('replica1')
      const before = load.served.replica1 ?? 0
      await waitFor(
        () => stateOf(r, 'replica1') === 'up',
        10_000,
        'replica1 re-admitted without health checks',
      )
      await waitFor(() => (load.served.replica1 ?? 0) > before, 5000, 'reads on replica1 again')
      await load.stop()
      expect(load.failures).toEqual([])
    } finally {
      await r.close()
    }
    await cluster.waitForReplication()
  })

  it('kill -9 of a replica under 16 concurrent read-only transactions: failures are reported, never retried mid-transaction', async () => {
    let running = true
    let committed = 0
    const failures: unknown[] = []
    const mixed: string[] = []
    const loops = Array.from({ length: 16 }, async () => {
      while (running) {
        const ports = new Set<string>()
        try {
          await router.transaction(
            async (tx) => {
              for (let i = 0; i < 4; i++) {
                const { rows } = await tx.query<{ port: number }>(d.slowWhoAmI(20))
                ports.add(who(rows[0]?.port))
              }
            },
            { readOnly: true },
          )
          committed++
          if (ports.size !== 1) mixed.push([...ports].join('+'))
        } catch (err) {
          failures.push(err)
          if (ports.size > 1) mixed.push([...ports].join('+'))
        }
      }
    })
    try {
      await sleep(400)
      await cluster.kill('replica1')
      await waitFor(() => stateOf(router, 'replica1') === 'down', LIVENESS_MS, 'replica1 down')
      await sleep(400)
    } finally {
      running = false
      await Promise.all(loops)
    }
    console.log(
      `[${d.name}] kill -9 under read-only transactions: ${committed} committed, ${failures.length} failed (reported)`,
    )
    expect(mixed).toEqual([]) // no transaction ever moved to another node
    expect(committed).toBeGreaterThan(0)
    for (const err of failures) {
      expect(d.isReadOnlyServerError(err)).toBe(false)
      expect(String((err as Error).message)).toMatch(
        /terminat|ECONNRE|closed|lost|gone|abort|not queryable|Connection/i,
      )
    }
    await cluster.restart('replica1')
    await waitFor(() => stateOf(router, 'replica1') === 'up', 10_000, 'replica1 re-admitted')
    await cluster.waitForReplication()
  })

  it('SIGSTOP of a replica under 8 concurrent readers: marked down within its probe rounds, every read completes soon after, no new read goes to it, SIGCONT brings it back', async () => {
    const load = readLoad(router, d, who, 8)
    activeLoads.push(load)
    await sleep(500)
    const stoppedAt = Date.now()
    await cluster.pause('replica2')
    try {
      await waitFor(() => stateOf(router, 'replica2') === 'down', LIVENESS_MS, 'replica2 down')
      const down = downAt('replica2', stoppedAt) ?? Date.now()
      expect(log.probesOf('replica2', stoppedAt, down).length).toBeLessThanOrEqual(DOWN_ROUNDS)
      // After it is down, the work that was on it is aborted at once (its sockets destroyed; the
      // callers see the errors a moment later): before the next probe round of it has begun.
      const inFlightOn = () => router.stats().nodes.find((n) => n.name === 'replica2')?.inFlight
      await waitFor(() => inFlightOn() === 0, LIVENESS_MS, 'aborted work on replica2 to settle')
      expect(log.probesOf('replica2', down, Date.now()).length).toBeLessThanOrEqual(1)
      for (let i = 0; i < 10; i++) {
        expect(router.stats().nodes.find((n) => n.name === 'replica2')?.inFlight).toBe(0)
        await sleep(50)
      }
      // Every read that could have been stuck on replica2 (started before it was down, still
      // open at the stop) ended, retried elsewhere, within one more round of replica2's probes.
      const open = load.durations.filter((x) => x.end >= stoppedAt && x.start < down)
      expect(open.length).toBeGreaterThan(0)
      for (const x of open) {
        expect(log.probesOf('replica2', stoppedAt, x.end).length).toBeLessThanOrEqual(DOWN_ROUNDS + 1)
      }
    } finally {
      await cluster.resume('replica2')
    }
    const before = load.served.replica2 ?? 0
    await waitFor(() => stateOf(router, 'replica2') === 'up', 10_000, 'replica2 back')
    await waitFor(() => (load.served.replica2 ?? 0) > before, 5000, 'reads on replica2 again')
    await load.stop()
    console.log(
      `[${d.name}] SIGSTOP replica2: failed reads ${load.failures.length} of ${load.durations.length}`,
    )
    expect(load.failures).toEqual([])
  })

  it('queryTimeoutMs bounds a single query on a frozen node', async () => {
    const r = testRouter(d, cluster, { queryTimeoutMs: 300, healthCheck: false, retryReads: false })
    try {
      await r.readOnly(() => r.query(d.whoAmI)) // warm a connection to a replica
      await cluster.pause('replica1')
      await cluster.pause('replica2')
      const results = await Promise.allSettled([
        r.readOnly(() => r.query(d.whoAmI)),
        r.readOnly(() => r.query(d.whoAmI)),
      ])
      // Both ended while the servers were still frozen, so by a deadline: the query timeout (or
      // the connect timeout, for a new connection), never an answer.
      const reasons = results.map((x) =>
        x.status === 'rejected' ? String((x.reason as Error)?.message) : 'ok',
      )
      for (const reason of reasons) expect(reason).toMatch(/timeout|timed out|ETIMEDOUT/i)
    } finally {
      await cluster.resume('replica1')
      await cluster.resume('replica2')
      await r.close()
    }
    // The main router saw both replicas frozen too: let it re-admit them before the next test.
    await waitFor(
      () => stateOf(router, 'replica1') === 'up' && stateOf(router, 'replica2') === 'up',
      10_000,
      'replicas re-admitted',
    )
  })

  it('all replicas down: reads are served by the primary with one fallback event; with fallbackToPrimary false they fail with NoHealthyReplicaError', async () => {
    const strict = testRouter(d, cluster, { fallbackToPrimary: false })
    await strict.ready()
    events.length = 0
    await Promise.all([cluster.kill('replica1'), cluster.kill('replica2')])
    try {
      await waitFor(
        () => stateOf(router, 'replica1') === 'down' && stateOf(router, 'replica2') === 'down',
        LIVENESS_MS,
        'both replicas down',
      )
      await waitFor(
        () => stateOf(strict, 'replica1') === 'down' && stateOf(strict, 'replica2') === 'down',
        LIVENESS_MS,
        'both replicas down (strict router)',
      )
      for (let i = 0; i < 50; i++) {
        const { rows } = await router.readOnly(() => router.query<{ port: number }>(d.whoAmI))
        expect(who(rows[0]?.port)).toBe('primary')
      }
      expect(events.filter((e) => e.name === 'fallback')).toHaveLength(1)
      await expect(strict.readOnly(() => strict.query(d.whoAmI))).rejects.toBeInstanceOf(
        NoHealthyReplicaError,
      )
      expect(router.stats().clusters[0]?.fallingBack).toBe(true)
    } finally {
      await strict.close()
      await Promise.all([cluster.restart('replica1'), cluster.restart('replica2')])
    }
    await waitFor(
      () => stateOf(router, 'replica1') === 'up' && stateOf(router, 'replica2') === 'up',
      10_000,
      'replicas back',
    )
    await waitFor(() => events.some((e) => e.name === 'fallback:end'), LIVENESS_MS, 'fallback:end')
    expect(events.filter((e) => e.name === 'fallback')).toHaveLength(1)
    await cluster.waitForReplication()
  })

  it('primary down: writes fail fast with PrimaryUnavailableError, readOnly reads keep working on the replicas', async () => {
    await cluster.kill('primary')
    try {
      await waitFor(() => stateOf(router, 'primary') === 'down', LIVENESS_MS, 'primary down')
      const checkouts = log.acquires('primary')
      await expect(router.query('SELECT 1')).rejects.toBeInstanceOf(PrimaryUnavailableError)
      await expect(router.transaction(async () => 1)).rejects.toBeInstanceOf(PrimaryUnavailableError)
      expect(log.acquires('primary')).toBe(checkouts) // fast: not even a connection was tried
      for (let i = 0; i < 20; i++) {
        const { rows } = await router.readOnly(() => router.query<{ port: number }>(d.whoAmI))
        expect(who(rows[0]?.port)).toMatch(/^replica/)
      }
    } finally {
      await cluster.restart('primary')
    }
    await waitFor(() => stateOf(router, 'primary') === 'up', 10_000, 'primary back')
    const { rows } = await router.query<{ port: number }>(d.whoAmI)
    expect(who(rows[0]?.port)).toBe('primary')
  })
})
