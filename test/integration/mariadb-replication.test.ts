/**
 * MariaDB-specific replication behaviour on a real GTID cluster: stopped replication threads take
 * a replica out of rotation, GTID positions drive lag and read-your-writes (MASTER_DELAY), and the
 * primary's @@read_only role check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRouter, type Router, type RouterEvents } from '../../src/index.js'
import { mysql2Driver } from '../../src/mysql2/index.js'
import { type MariaDbCluster, startMariaDbCluster } from '../../src/testing/index.js'
import { expectIdle, sleep, stateOf, waitFor } from './support/dialects.js'
import { logProbes } from './support/probe-log.js'

const HC = { intervalMs: 500, timeoutMs: 450, failureThreshold: 2, successThreshold: 1, maxBackoffMs: 1000 }

describe('replication (mariadb, GTID)', () => {
  let cluster: MariaDbCluster
  const portOwner = new Map<number, string>()

  beforeAll(async () => {
    cluster = await startMariaDbCluster({ replicas: 2 })
    portOwner.set(cluster.primary.port, 'primary')
    for (const r of cluster.replicas) portOwner.set(r.port, r.name)
    await cluster.query('primary', 'CREATE TABLE ryw (id INT AUTO_INCREMENT PRIMARY KEY, v INT NOT NULL)')
    await cluster.waitForReplication()
  })

  afterAll(async () => {
    await cluster?.stop()
  })

  const makeRouter = (options: Partial<Parameters<typeof createRouter>[0]> = {}): Router =>
    createRouter({
      driver: mysql2Driver(),
      primary: { name: 'primary', url: cluster.primary.url },
      replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
      healthCheck: HC,
      ...options,
    })

  it('STOP SLAVE takes a replica out of rotation; START SLAVE brings it back', async () => {
    const router = makeRouter()
    const events: string[] = []
    router.on('node:lagging', (e) => events.push(`lagging:${e.node}`))
    router.on('node:caught-up', (e) => events.push(`caught-up:${e.node}`))
    try {
      await router.ready()
      expect(router.stats().clusters[0]?.candidates).toEqual(['replica1', 'replica2'])
      await cluster.stopReplication('replica1', 'all')
      await waitFor(() => events.includes('lagging:replica1'), 3 * HC.intervalMs + 1000, 'replica1 out')
      expect(router.stats().nodes.find((n) => n.name === 'replica1')?.unusableReason).toBe('not-replicating')
      for (let i = 0; i < 20; i++) {
        const { rows } = await router.readOnly(() => router.query<{ port: number }>('SELECT @@port AS port'))
        expect(portOwner.get(Number(rows[0]?.port))).toBe('replica2')
      }
      await cluster.startReplication('replica1')
      await waitFor(() => events.includes('caught-up:replica1'), 3 * HC.intervalMs + 2000, 'replica1 back')
      expect(router.stats().clusters[0]?.candidates).toEqual(['replica1', 'replica2'])
      await expectIdle(router)
    } finally {
      await router.close()
      await cluster.startReplication('replica1').catch(() => {})
    }
  })

  it('STOP SLAVE SQL_THREAD with writes going on: excluded once the lag passes maxReplicationLagMs, back after START SLAVE', async () => {
    const log = logProbes(mysql2Driver())
    const router = makeRouter({ driver: log.driver, maxReplicationLagMs: 1000 })
    const lagging: Array<RouterEvents['node:lagging'] & { at: number }> = []
    router.on('node:lagging', (e) => lagging.push({ ...e, at: Date.now() }))
    let writing = true
    const writer = (async () => {
      while (writing) {
        await router.query('INSERT INTO ryw (v) VALUES (0)')
        await sleep(20)
      }
    })()
    try {
      await router.ready()
      await sleep(300)
      await cluster.stopReplication('replica2', 'sql')
      const stoppedAt = Date.now()
      await waitFor(() => lagging.some((e) => e.node === 'replica2'), 4000, 'replica2 excluded')
      // A stopped SQL thread is seen by the next probe (Slave_SQL_Running: No): excluded at once,
      // whatever the lag. Counted in probe rounds of replica2 since the stop (one may be in flight).
      const rounds = log.probesOf('replica2', stoppedAt, lagging[0]?.at).length
      console.log(`[mariadb] SQL thread stopped: excluded ${rounds} probe round(s) later`)
      expect(rounds).toBeLessThanOrEqual(2)
      expect(router.stats().clusters[0]?.candidates).toEqual(['replica1'])
      await cluster.startReplication('replica2')
      await waitFor(() => router.stats().clusters[0]?.candidates.length === 2, 5000, 'replica2 back')
    } finally {
      writing = false
      await writer
      await router.close()
      await cluster.startReplication('replica2').catch(() => {})
    }
  })

  it('position mode with one replica delayed (MASTER_DELAY=1): 1,000 write-then-read iterations, zero stale reads', async () => {
    await cluster.setApplyDelay('replica1', 1000)
    const router = makeRouter({
      readYourWrites: { mode: 'position', maxWaitMs: 100 },
      maxReplicationLagMs: 0,
    })
    try {
      await router.ready()
      let stale = 0
      const served: Record<string, number> = {}
      for (let i = 0; i < 1000; i++) {
        await router.session(async () => {
          const w = await router.query('INSERT INTO ryw (v) VALUES (?)', [i])
          const id = Number(w.insertId)
          const r = await router.readOnly(() =>
            router.query<{ v: number | null; port: number }>(
              'SELECT (SELECT v FROM ryw WHERE id = ?) AS v, @@port AS port',
              [id],
            ),
          )
          if (r.rows[0]?.v !== i) stale++
          const node = portOwner.get(Number(r.rows[0]?.port)) ?? '?'
          served[node] = (served[node] ?? 0) + 1
        })
      }
      console.log(
        `[mariadb] position mode, replica1 MASTER_DELAY=1: ${stale} stale of 1000; served ${JSON.stringify(served)}`,
      )
      expect(stale).toBe(0)
      expect(served.replica2 ?? 0).toBeGreaterThan(500)
      await expectIdle(router)
    } finally {
      await router.close()
      await cluster.setApplyDelay('replica1', 0)
    }
  })

  it('kill -9 of the primary: marked down, writes fail fast, reads go on on the replicas', async () => {
    const router = makeRouter()
    try {
      await router.ready()
      await cluster.kill('primary')
      await waitFor(() => stateOf(router, 'primary') === 'down', 3000, 'primary down')
      for (let i = 0; i < 10; i++) {
        const { rows } = await router.readOnly(() => router.query<{ port: number }>('SELECT @@port AS port'))
        expect(portOwner.get(Number(rows[0]?.port))).toMatch(/^replica/)
      }
      // A replica whose IO thread is merely reconnecting to a dead primary keeps serving reads.
      expect(router.stats().clusters[0]?.candidates).toEqual(['replica1', 'replica2'])
    } finally {
      await router.close()
      await cluster.restart('primary')
    }
  })
})
