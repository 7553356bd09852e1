/**
 * Runtime topology on a real cluster: replicas added, drained and removed under load, weights
 * changed, with what users check: no failed read, no query on a removed node after removal
 * returns, its pool closed exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, type Driver, type Router } from '../../src/index.js'
import {
  type DialectCase,
  dialects,
  expectIdle,
  nodeByPort,
  sleep,
  type TestCluster,
  testRouter,
  waitFor,
} from './support/dialects.js'

/** Wraps a driver to count how often each node's pools are ended. */
function countingEnds(driver: Driver): { driver: Driver; ends: Record<string, number> } {
  const ends: Record<string, number> = {}
  const wrapped: Driver = {
    dialect: driver.dialect,
    name: driver.name,
    createPool: (node, onError) => {
      const pool = driver.createPool(node, onError)
      return {
        acquire: () => pool.acquire(),
        release: (c, d) => pool.release(c, d),
        destroy: (c) => pool.destroy(c),
        counts: () => pool.counts(),
        end: () => {
          // a node has a pool for writes and a read-only one for reads: each must end once
          const key = node.readOnly ? `${node.name}:ro` : node.name
          ends[key] = (ends[key] ?? 0) + 1
          return pool.end()
        },
      }
    },
    execute: (c, t, p) => driver.execute(c, t, p),
    probe: (n, s) => driver.probe(n, s),
    positionReached: (a, b) => driver.positionReached(a, b),
    positionAfterWrite: (c) => driver.positionAfterWrite(c),
    waitForPosition: (c, t, ms) => driver.waitForPosition(c, t, ms),
    beginSql: (o) => driver.beginSql(o),
    savepointSql: (n, op) => driver.savepointSql(n, op),
    classify: (e) => driver.classify(e),
  }
  return { driver: wrapped, ends }
}

describe.each(dialects)('runtime topology ($name)', (d: DialectCase) => {
  let cluster: TestCluster
  let who: (port: unknown) => string

  beforeAll(async () => {
    cluster = await d.start(2)
    who = nodeByPort(cluster)
  })

  afterAll(async () => {
    await cluster?.stop()
  })

  it('removing a replica under 32 concurrent readers: zero failed reads, pool closed once, nothing reaches it after', async () => {
    const { driver, ends } = countingEnds(d.driver())
    const router: Router = testRouter(d, cluster, { driver } as never)
    let running = true
    let removedAt = Number.POSITIVE_INFINITY
    const failures: unknown[] = []
    const late: string[] = []
    let reads = 0
    const loops = Array.from({ length: 32 }, async () => {
      while (running) {
        const started = Date.now()
        try {
          const { rows } = await router.readOnly(() => router.query<{ port: number }>(d.whoAmI))
          reads++
          const node = who(rows[0]?.port)
          if (node === 'replica1' && started > removedAt) late.push(node)
        } catch (err) {
          failures.push(err)
          await new Promise(setImmediate) // a read failing without I/O must not starve the timers
        }
      }
    })
    try {
      await router.ready()
      await sleep(500)
      await router.removeReplica('replica1', { timeoutMs: 2000 })
      removedAt = Date.now()
      await sleep(500)
    } finally {
      running = false
      await Promise.all(loops)
    }
    console.log(`[${d.name}] removeReplica under 32 readers: ${failures.length} failed of ${reads}`)
    expect(failures).toEqual([])
    expect(late).toEqual([])
    expect(ends.replica1).toBe(1)
    expect(ends['replica1:ro']).toBe(1)
    expect(router.stats().nodes.map((n) => n.name)).toEqual(['primary', 'replica2'])
    await router.removeReplica('replica1').catch(() => {}) // unknown now: no second end()
    expect(ends.replica1).toBe(1)
    expect(ends['replica1:ro']).toBe(1)
    await router.close()
    expect(ends.replica1).toBe(1)
    expect(ends['replica1:ro']).toBe(1)
    expect(ends.replica2).toBe(1)
    expect(ends['replica2:ro']).toBe(1)
  })

  it('addReplica of an unreachable node: it resolves, and no read ever goes to the node until a probe of it succeeds', async () => {
    const router = testRouter(d, cluster)
    const dead = cluster.replicas[0]!.url.replace(`:${cluster.replicas[0]!.port}/`, ':1/')
    expect(dead).not.toBe(cluster.replicas[0]!.url)
    try {
      await router.ready()
      const name = await router.addReplica({ name: 'unreachable', url: dead })
      const reads = await Promise.all(
        Array.from({ length: 30 }, () => router.readOnly(() => router.query<{ port: number }>(d.whoAmI))),
      )
      expect(new Set(reads.map((r) => who(r.rows[0]?.port)))).toEqual(new Set(['replica1', 'replica2']))
      const stats = router.stats().nodes.find((n) => n.name === name)
      expect(stats?.usable).toBe(false)
      expect(stats?.unusableReason).toBe('not-probed-yet')
      expect(stats?.queries).toBe(0)
      await router.removeReplica(name)
      await expectIdle(router)
    } finally {
      await router.close()
    }
  })

  it('drain lets in-flight work finish, then closes the pool; addReplica brings a node in; weights change shares', async () => {
    const router = testRouter(d, cluster, { balancer: 'weighted-round-robin' })
    try {
      await router.ready()
      // A transaction in flight on replica2 when the drain starts completes normally.
      let txDone = false
      const tx = router.transaction(
        async (t) => {
          const { rows } = await t.query<{ port: number }>(d.slowWhoAmI(300))
          txDone = true
          return who(rows[0]?.port)
        },
        { readOnly: true },
      )
      await sleep(50)
      const target = router.stats().nodes.find((n) => n.inFlight > 0 && n.role === 'replica')?.name
      expect(target).toBeDefined()
      await router.drain(target as string, { timeoutMs: 3000 })
      expect(txDone).toBe(true)
      expect(await tx).toBe(target)
      expect(router.stats().nodes.find((n) => n.name === target)?.unusableReason).toBe('drained')
      // Everything now goes to the other replica.
      const other = target === 'replica1' ? 'replica2' : 'replica1'
      for (let i = 0; i < 10; i++) {
        expect(
          who((await router.readOnly(() => router.query<{ port: number }>(d.whoAmI))).rows[0]?.port),
        ).toBe(other)
      }
      // Weights: 3 to 1 between the other replica and a re-added one.
      await router.removeReplica(target as string)
      const url = cluster.replicas.find((r) => r.name === target)?.url as string
      await expect(router.addReplica({ name: other, url })).rejects.toBeInstanceOf(ConfigError) // duplicate name
      const added = await router.addReplica({ name: 'again', url, weight: 1 })
      expect(added).toBe('again')
      router.setWeight(other, 3)
      await waitFor(() => router.stats().clusters[0]?.candidates.length === 2, 3000, 'both replicas usable')
      const counts: Record<string, number> = {}
      for (let i = 0; i < 400; i++) {
        const n = who((await router.readOnly(() => router.query<{ port: number }>(d.whoAmI))).rows[0]?.port)
        counts[n] = (counts[n] ?? 0) + 1
      }
      expect(counts[other]).toBe(300)
      expect(counts[target as string]).toBe(100) // the server behind "again"
      await expectIdle(router)
    } finally {
      await router.close()
    }
  })
})
