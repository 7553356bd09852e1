/**
 * Consistency on a real cluster: read-your-writes (position and window modes) against a replica
 * delayed with recovery_min_apply_delay, lag exclusion of a replica whose replay is paused, and
 * primary discovery through a real promotion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRouter, PrimaryUnavailableError, type Router, type RouterEvents } from '../../src/index.js'
import { type PgCluster, startPgCluster } from '../../src/testing/index.js'
import {
  type DialectCase,
  dialectsFor,
  expectIdle,
  LIVENESS_MS,
  nodeByPort,
  sleep,
  stateOf,
  waitFor,
} from './support/dialects.js'
import { logProbes } from './support/probe-log.js'

const HC = { intervalMs: 500, timeoutMs: 450, failureThreshold: 2, successThreshold: 1, maxBackoffMs: 1000 }

describe.each(dialectsFor('consistency', 'postgres'))('consistency ($name)', (d: DialectCase) => {
  let cluster: PgCluster
  let who: (port: unknown) => string

  beforeAll(async () => {
    cluster = await startPgCluster({ replicas: 2 })
    who = nodeByPort(cluster)
    await cluster.query('primary', 'CREATE TABLE IF NOT EXISTS ryw (id serial PRIMARY KEY, v int NOT NULL)')
    await cluster.waitForReplication()
  })

  afterAll(async () => {
    await cluster?.stop()
  })

  const makeRouter = (options: Partial<Parameters<typeof createRouter>[0]> = {}): Router =>
    createRouter({
      driver: d.driver(),
      primary: { name: 'primary', url: cluster.primary.url },
      replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
      healthCheck: HC,
      ...options,
    })

  /** 1,000 iterations of write-then-read in a session; counts stale reads and where reads landed. */
  async function writeThenRead(router: Router, iterations: number) {
    let stale = 0
    const served: Record<string, number> = {}
    for (let i = 0; i < iterations; i++) {
      await router.session(async () => {
        const { rows } = await router.query<{ id: number }>('INSERT INTO ryw (v) VALUES ($1) RETURNING id', [
          i,
        ])
        const id = rows[0]?.id
        const read = await router.readOnly(() =>
          router.query<{ v: number | null; port: number }>(
            'SELECT (SELECT v FROM ryw WHERE id = $1) AS v, inet_server_port() AS port',
            [id],
          ),
        )
        const row = read.rows[0]
        if (row?.v !== i) stale++
        const node = who(row?.port)
        served[node] = (served[node] ?? 0) + 1
      })
    }
    return { stale, served }
  }

  it('without read-your-writes, reads right after a write are stale on a delayed replica (the problem)', async () => {
    await cluster.setApplyDelay('replica1', 300)
    const router = makeRouter({ maxReplicationLagMs: 0, readYourWrites: false })
    try {
      await router.ready()
      const { stale } = await writeThenRead(router, 40)
      console.log(`[${d.name}] read-your-writes off: ${stale} stale reads of 40`)
      expect(stale).toBeGreaterThan(0)
    } finally {
      await router.close()
      await cluster.setApplyDelay('replica1', 0)
    }
  })

  it('position mode: 1,000 write-then-read iterations, zero stale reads, and the undelayed replica serves most reads', async () => {
    await cluster.setApplyDelay('replica1', 300)
    const router = makeRouter({
      readYourWrites: { mode: 'position', maxWaitMs: 100 },
      maxReplicationLagMs: 0,
    })
    try {
      await router.ready()
      const { stale, served } = await writeThenRead(router, 1000)
      console.log(
        `[${d.name}] position mode, replica1 delayed 300 ms: ${stale} stale of 1000; served ${JSON.stringify(served)}`,
      )
      expect(stale).toBe(0)
      expect(served.replica2 ?? 0).toBeGreaterThan(500)
      // Every read the primary served was a read-your-writes redirect, counted once.
      expect(router.stats().clusters[0]?.readYourWritesRedirects).toBe(served.primary ?? 0)
      await expectIdle(router)
    } finally {
      await router.close()
      await cluster.setApplyDelay('replica1', 0)
    }
  })

  it('window mode: zero stale reads within the window (reads go to the primary)', async () => {
    await cluster.setApplyDelay('replica1', 300)
    const router = makeRouter({ readYourWrites: { mode: 'window', windowMs: 1000 }, maxReplicationLagMs: 0 })
    try {
      await router.ready()
      const { stale, served } = await writeThenRead(router, 1000)
      console.log(`[${d.name}] window mode: ${stale} stale of 1000; served ${JSON.stringify(served)}`)
      expect(stale).toBe(0)
      expect(served.primary).toBe(1000)
      const redirects = () => router.stats().clusters[0]?.readYourWritesRedirects
      expect(redirects()).toBe(1000) // one per read sent to the primary for read-your-writes
      // N reads after a write in a session: N redirects, whatever reads them (statements, a
      // read-only transaction, a connection of router.pool()).
      await router.session(async () => {
        await router.query('INSERT INTO ryw (v) VALUES (-2)')
        for (let i = 0; i < 5; i++) await router.readOnly(() => router.query('SELECT 1'))
        const tx = await router.transaction(
          async (t) => {
            await t.query('SELECT 1')
            return t.node
          },
          { readOnly: true },
        )
        expect(tx).toBe('primary')
        const client = await router.readOnly(() => d.checkout(router))
        try {
          const res = (await client.query('SELECT inet_server_port() AS port')) as
            | { rows: Array<{ port: number }> }
            | Array<{ port: number }>
          const rows = Array.isArray(res) ? res : res.rows
          expect(who(rows[0]?.port)).toBe('primary')
        } finally {
          client.release()
        }
      })
      expect(redirects()).toBe(1007)
      // Outside the window, the session reads from replicas again: no redirect.
      await router.session(async () => {
        await router.query('INSERT INTO ryw (v) VALUES (-1)')
        await sleep(1100)
        const { rows } = await router.readOnly(() =>
          router.query<{ port: number }>('SELECT inet_server_port() AS port'),
        )
        expect(who(rows[0]?.port)).toMatch(/^replica/)
      })
      expect(redirects()).toBe(1007)
    } finally {
      await router.close()
      await cluster.setApplyDelay('replica1', 0)
    }
  })

  it('a consistency token carries a session to another router (another app instance)', async () => {
    await cluster.setApplyDelay('replica1', 300)
    await cluster.setApplyDelay('replica2', 300)
    const a = makeRouter({ readYourWrites: { mode: 'position', maxWaitMs: 0 }, maxReplicationLagMs: 0 })
    const b = makeRouter({ readYourWrites: { mode: 'position', maxWaitMs: 0 }, maxReplicationLagMs: 0 })
    try {
      await Promise.all([a.ready(), b.ready()])
      let stale = 0
      for (let i = 0; i < 50; i++) {
        const { token, id } = await a.session(async () => {
          const { rows } = await a.query<{ id: number }>('INSERT INTO ryw (v) VALUES ($1) RETURNING id', [
            1000 + i,
          ])
          return { token: a.consistencyToken(), id: rows[0]?.id }
        })
        expect(token).toMatch(/^rm1\./)
        const row = await b.withConsistencyToken(token, () =>
          b.readOnly(() => b.query<{ v: number | null }>('SELECT v FROM ryw WHERE id = $1', [id])),
        )
        if (row.rows[0]?.v !== 1000 + i) stale++
      }
      expect(stale).toBe(0)
      // A garbage token is harmless: an empty session.
      await b.withConsistencyToken('not-a-token', () => b.readOnly(() => b.query('SELECT 1')))
    } finally {
      await Promise.all([a.close(), b.close()])
      await cluster.setApplyDelay('replica1', 0)
      await cluster.setApplyDelay('replica2', 0)
    }
  })

  it('a replica whose replay is paused is excluded once its lag passes maxReplicationLagMs, and returns after resume', async () => {
    const log = logProbes(d.driver())
    const router = makeRouter({ driver: log.driver, maxReplicationLagMs: 1000 })
    const events: Array<{ name: string; at: number; e: unknown }> = []
    const writes: Array<{ start: number; end: number }> = []
    router.on('node:lagging', (e) => events.push({ name: 'lagging', at: Date.now(), e }))
    router.on('node:caught-up', (e) => events.push({ name: 'caught-up', at: Date.now(), e }))
    let writing = true
    const writer = (async () => {
      while (writing) {
        const start = Date.now()
        await router.query('INSERT INTO ryw (v) VALUES (0)')
        writes.push({ start, end: Date.now() })
        await sleep(20)
      }
    })()
    try {
      await router.ready()
      await sleep(500)
      await cluster.pauseReplay('replica1')
      const pausedAt = Date.now()
      await waitFor(() => events.some((x) => x.name === 'lagging'), LIVENESS_MS, 'replica1 lagging')
      const lagging = events.find((x) => x.name === 'lagging')
      expect(lagging?.e).toMatchObject({ node: 'replica1', maxLagMs: 1000 })
      expect((lagging?.e as { lagMs?: number } | undefined)?.lagMs).toBeGreaterThan(1000)
      // Lag is measured from the probes: replica1 is behind from the first write after the pause,
      // and the router sees it once a primary probe has read that write's position. From then on
      // its measured lag only grows, so the first replica1 probe starting more than 1000 ms later
      // must exclude it: count the replica1 probes it took (1; 2 allows for clock rounding).
      const firstWrite = writes.find((w) => w.start >= pausedAt)
      const seen = log.probesOf('primary', firstWrite?.end ?? pausedAt).find((p) => p.endedAt !== undefined)
      expect(seen?.endedAt).toBeDefined()
      const rounds = log.probesOf('replica1', (seen?.endedAt ?? 0) + 1000, lagging?.at).length
      console.log(`[${d.name}] replay paused: excluded ${rounds} probe round(s) after its lag passed 1000 ms`)
      expect(rounds).toBeLessThanOrEqual(2)
      expect((router.stats().nodes.find((n) => n.name === 'replica1')?.lagMs ?? 0) > 1000).toBe(true)
      for (let i = 0; i < 20; i++) {
        const { rows } = await router.readOnly(() =>
          router.query<{ port: number }>('SELECT inet_server_port() AS port'),
        )
        expect(who(rows[0]?.port)).toBe('replica2')
      }
      await cluster.resumeReplay('replica1')
      await waitFor(() => events.some((x) => x.name === 'caught-up'), LIVENESS_MS, 'replica1 caught up')
      expect(router.stats().clusters[0]?.candidates).toEqual(['replica1', 'replica2'])
    } finally {
      writing = false
      await writer
      await cluster.resumeReplay('replica1').catch(() => {})
      await router.close()
    }
  })

  it('an idle primary is not lag: replicas stay in rotation with lag 0', async () => {
    const router = makeRouter({ maxReplicationLagMs: 500 })
    try {
      await router.ready()
      await sleep(1500) // several probe rounds with no write at all
      const replicas = router.stats().nodes.filter((n) => n.role === 'replica')
      expect(replicas.map((n) => [n.name, n.lagMs, n.usable])).toEqual([
        ['replica1', 0, true],
        ['replica2', 0, true],
      ])
    } finally {
      await router.close()
    }
  })

  // Last: the promotion changes the cluster for good.
  it('primary discovery: a real promotion after the primary is killed; writes reach the new primary within two probe rounds, with primary:changed', async () => {
    const log = logProbes(d.driver())
    const discovering = createRouter({
      driver: log.driver,
      nodes: [cluster.primary.url, ...cluster.replicas.map((r) => r.url)],
      healthCheck: HC,
    })
    const changes: Array<RouterEvents['primary:changed'] & { at: number }> = []
    discovering.on('primary:changed', (e) => changes.push({ ...e, at: Date.now() }))
    try {
      await discovering.ready()
      expect(changes).toMatchObject([{ from: undefined, to: 'node1' }])
      expect(discovering.stats().clusters[0]?.primary).toBe('node1')
      const { rows } = await discovering.query<{ port: number }>('SELECT inet_server_port() AS port')
      expect(who(rows[0]?.port)).toBe('primary')
      await cluster.kill('primary')
      await waitFor(() => stateOf(discovering, 'node1') === 'down', LIVENESS_MS, 'old primary down')
      await expect(discovering.query('INSERT INTO ryw (v) VALUES (1)')).rejects.toBeInstanceOf(
        PrimaryUnavailableError,
      )
      await cluster.promote('replica1') // resolves once it has left recovery
      const promotedAt = Date.now()
      await waitFor(() => changes.length === 2, LIVENESS_MS, 'primary:changed')
      expect(changes[1]).toMatchObject({ from: 'node1', to: 'node2' })
      const rounds = log.probesOf('node2', promotedAt, changes[1]?.at).length
      console.log(
        `[${d.name}] promotion: primary:changed ${rounds} probe round(s) of node2 after pg_promote()`,
      )
      expect(rounds).toBeLessThanOrEqual(2)
      // From primary:changed on, the very first write goes to the new primary.
      const { rows: r } = await discovering.query<{ port: number }>(
        'INSERT INTO ryw (v) VALUES (2) RETURNING inet_server_port() AS port',
      )
      expect(who(r[0]?.port)).toBe('replica1')
    } finally {
      await discovering.close()
    }
  })
})
