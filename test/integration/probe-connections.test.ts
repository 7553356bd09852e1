/**
 * Probe connections against real servers: probes reuse one connection per node (a probe is one
 * round trip, not a new connection with its authentication and, on PostgreSQL, a new server
 * process), replace it after `probeConnectionMaxAgeMs`, replace a connection that died while idle
 * without a failed probe, and close it with the router.
 */
import mysql from 'mysql2/promise'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Router } from '../../src/index.js'
import {
  type DialectCase,
  dialects,
  LIVENESS_MS,
  sleep,
  stateOf,
  type TestCluster,
  testRouter,
} from './support/dialects.js'

/** Server-side views of one node, over one connection of the test's own (as the app user). */
interface Admin {
  /** Connections the server has accepted so far (PostgreSQL: sessions of the database). */
  connections(): Promise<number>
  /** Ids of the other connections open now (the router's: pools idle, so its probe connection). */
  others(): Promise<number[]>
  /** Terminates a connection from the server side. */
  kill(id: number): Promise<void>
  close(): Promise<void>
}

async function pgAdmin(url: string): Promise<Admin> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  return {
    async connections() {
      await c.query('SELECT pg_stat_clear_snapshot()')
      const r = await c.query<{ n: string }>(
        'SELECT sessions::text AS n FROM pg_stat_database WHERE datname = current_database()',
      )
      return Number(r.rows[0]?.n)
    },
    async others() {
      const r = await c.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE application_name = 'routemate-probe' AND pid <> pg_backend_pid()",
      )
      return r.rows.map((x) => x.pid)
    },
    async kill(pid) {
      await c.query('SELECT pg_terminate_backend($1)', [pid])
    },
    close: () => c.end(),
  }
}

async function mysqlAdmin(url: string): Promise<Admin> {
  const c = await mysql.createConnection(url)
  return {
    async connections() {
      const [rows] = await c.query("SHOW GLOBAL STATUS LIKE 'Connections'")
      return Number((rows as Array<{ Value: string }>)[0]?.Value)
    },
    async others() {
      const [rows] = await c.query(
        'SELECT ID AS id FROM information_schema.PROCESSLIST WHERE USER = CURRENT_USER() OR USER = SUBSTRING_INDEX(USER(), "@", 1)',
      )
      const self = Number(
        ((await c.query('SELECT CONNECTION_ID() AS id'))[0] as Array<{ id: number }>)[0]?.id,
      )
      return (rows as Array<{ id: number }>).map((r) => Number(r.id)).filter((id) => id !== self)
    },
    async kill(id) {
      await c.query(`KILL ${Number(id)}`)
    },
    close: () => c.end(),
  }
}

const admin = (d: DialectCase, url: string) => (d.name === 'postgres' ? pgAdmin(url) : mysqlAdmin(url))

/** A router over the cluster that only probes (no queries: its pools open no connection). */
function probingRouter(d: DialectCase, cluster: TestCluster, probeConnectionMaxAgeMs?: number): Router {
  return testRouter(d, cluster, {
    healthCheck: {
      intervalMs: 100,
      timeoutMs: 80,
      ...(probeConnectionMaxAgeMs !== undefined ? { probeConnectionMaxAgeMs } : {}),
    },
  })
}

for (const d of dialects) {
  describe(`probe connections (${d.name})`, () => {
    let cluster: TestCluster
    let replica: Admin

    beforeAll(async () => {
      cluster = await d.start(1)
      replica = await admin(d, cluster.replicas[0]!.url)
    })

    afterAll(async () => {
      await replica?.close()
      await cluster?.stop()
    })

    /** New connections the replica accepted while `router` probed for `ms`. */
    async function connectionsWhileProbing(router: Router, ms: number): Promise<number> {
      await router.ready()
      const before = await replica.connections()
      await sleep(ms)
      await router.close()
      await sleep(100) // PostgreSQL counts a session when it ends
      return (await replica.connections()) - before
    }

    it('probes reuse one connection per node; with probeConnectionMaxAgeMs 0, one per probe', async () => {
      const kept = await connectionsWhileProbing(probingRouter(d, cluster), 2000)
      const fresh = await connectionsWhileProbing(probingRouter(d, cluster, 0), 2000)
      // ~20 probes each: one kept connection (counted once at most) against one per probe
      expect(kept).toBeLessThanOrEqual(2)
      expect(fresh).toBeGreaterThanOrEqual(10)
    })

    it('replaces the connection once it is older than probeConnectionMaxAgeMs', async () => {
      const n = await connectionsWhileProbing(probingRouter(d, cluster, 400), 2000)
      expect(n).toBeGreaterThanOrEqual(3)
      expect(n).toBeLessThanOrEqual(8)
    })

    it('a probe connection killed by the server is replaced, with no failed probe and no state change', async () => {
      const router = probingRouter(d, cluster)
      const changes: string[] = []
      for (const e of ['node:suspect', 'node:down'] as const)
        router.on(e, (ev) => changes.push(`${e} ${ev.node}`))
      try {
        await router.ready()
        await sleep(300)
        const probeConns = await replica.others()
        expect(probeConns).toHaveLength(1)
        const before = await replica.connections()
        await replica.kill(probeConns[0]!)
        await sleep(1000) // ten probes
        expect(changes).toEqual([])
        expect(stateOf(router, 'replica1')).toBe('up')
        const now = await replica.others()
        expect(now).toHaveLength(1)
        expect(now[0]).not.toBe(probeConns[0])
        if (d.name === 'mariadb') expect((await replica.connections()) - before).toBe(1)
      } finally {
        await router.close()
      }
    })

    it('close() closes the probe connections', async () => {
      const router = probingRouter(d, cluster)
      await router.ready()
      await sleep(300)
      expect(await replica.others()).toHaveLength(1)
      await router.close()
      const deadline = Date.now() + LIVENESS_MS
      while ((await replica.others()).length > 0 && Date.now() < deadline) await sleep(50)
      expect(await replica.others()).toEqual([])
    })
  })
}
