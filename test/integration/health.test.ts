/**
 * Health checks against a real cluster: a promoted replica is noticed and not trusted, a node that
 * rejects the credentials is down, and no password ever shows in an error, an event or stats().
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRouter, type Router, type RouterEvents } from '../../src/index.js'
import { pgDriver } from '../../src/pg/index.js'
import { type PgCluster, startPgCluster } from '../../src/testing/index.js'
import { expectIdle, nodeByPort, stateOf, waitFor } from './support/dialects.js'

const SECRET = 'app-secret'

describe('health (postgres)', () => {
  let cluster: PgCluster

  beforeAll(async () => {
    cluster = await startPgCluster({ replicas: 2 })
  })

  afterAll(async () => {
    await cluster?.stop()
  })

  it('a node with wrong credentials is marked down; no password in errors, events or stats', async () => {
    const wrong = 'wr0ng-Pa55word'
    const badUrl = cluster.replicas[1]!.url.replace(`:${SECRET}@`, `:${wrong}@`)
    expect(badUrl).toContain(wrong)
    const seen: unknown[] = []
    const router = createRouter({
      driver: pgDriver(),
      primary: cluster.primary.url,
      replicas: [cluster.replicas[0]!.url, badUrl],
      healthCheck: { intervalMs: 500, timeoutMs: 450 },
    })
    for (const name of ['node:down', 'node:suspect', 'error', 'fallback', 'retry'] as const) {
      router.on(name, (e) => seen.push(e))
    }
    try {
      await router.ready()
      await waitFor(() => stateOf(router, 'replica2') === 'down', 3000, 'replica2 down')
      const stats = router.stats()
      const r2 = stats.nodes.find((n) => n.name === 'replica2')
      expect(r2?.lastError).toMatch(/password authentication failed/)
      // Reads still succeed: the good replica serves them.
      for (let i = 0; i < 10; i++) await router.readOnly(() => router.query('SELECT 1'))
      const text = JSON.stringify({
        stats,
        seen: seen.map((e) => JSON.stringify(e, Object.getOwnPropertyNames(e))),
      })
      expect(text).not.toContain(wrong)
      expect(text).not.toContain(SECRET)
      expect(r2?.url).toContain('***')
      // A query error on the bad node does not leak it either.
      const direct = createRouter({ driver: pgDriver(), primary: badUrl, healthCheck: false })
      const err = (await direct.query('SELECT 1').catch((e: unknown) => e)) as Error
      await direct.close()
      expect(`${err.message}\n${err.stack}`).not.toContain(wrong)
    } finally {
      await router.close()
    }
  })

  it('a replica that reports itself primary (promoted) is flagged and gets no reads', async () => {
    const who = nodeByPort(cluster)
    const events: Array<RouterEvents['node:role-mismatch']> = []
    const router: Router = createRouter({
      driver: pgDriver(),
      primary: { name: 'primary', url: cluster.primary.url },
      replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
      healthCheck: { intervalMs: 500, timeoutMs: 450 },
    })
    router.on('node:role-mismatch', (e) => events.push(e))
    try {
      await router.ready()
      expect(router.stats().clusters[0]?.candidates).toEqual(['replica1', 'replica2'])
      await cluster.promote('replica2')
      await waitFor(() => events.length > 0, 3000, 'role mismatch event')
      expect(events).toEqual([{ cluster: 'default', node: 'replica2', role: 'replica', actual: 'primary' }])
      expect(stateOf(router, 'replica2')).toBe('up') // reachable, but not trusted
      expect(router.stats().nodes.find((n) => n.name === 'replica2')?.unusableReason).toBe('role-mismatch')
      for (let i = 0; i < 50; i++) {
        const { rows } = await router.readOnly(() =>
          router.query<{ port: number }>('SELECT inet_server_port() AS port'),
        )
        expect(who(rows[0]?.port)).toBe('replica1')
      }
      await expectIdle(router)
    } finally {
      await router.close()
    }
  })
})
