/**
 * routemate's own pg pool against a real PostgreSQL: `max` bounds the connections a node opens
 * (seen from the server), `maxUses` and `idleTimeoutMillis` replace and close connections, client
 * options reach the server, and a connection the server terminates while idle is replaced.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRouter, type Router } from '../../src/index.js'
import { pgDriver } from '../../src/pg/index.js'
import { type PgCluster, startPgCluster } from '../../src/testing/index.js'
import { expectIdle, sleep } from './support/dialects.js'

const APP = 'rm-pool-test'

describe('pg pool (postgres)', () => {
  let cluster: PgCluster
  let admin: pg.Client

  beforeAll(async () => {
    cluster = await startPgCluster({ replicas: 0 })
    admin = new pg.Client({ connectionString: cluster.primary.url })
    await admin.connect()
  })

  afterAll(async () => {
    await admin?.end()
    await cluster?.stop()
  })

  /** Backends of the router's pool, as the server lists them. */
  async function poolBackends(): Promise<number[]> {
    const r = await admin.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid',
      [APP],
    )
    return r.rows.map((x) => x.pid)
  }

  function router(pool: Record<string, unknown>): Router {
    return createRouter({
      driver: pgDriver(),
      primary: cluster.primary.url,
      healthCheck: false,
      pool: { application_name: APP, ...pool },
    })
  }

  it('max bounds the connections: 40 concurrent statements on 3 server backends, all served', async () => {
    const r = router({ max: 3 })
    try {
      const rows = await Promise.all(
        Array.from({ length: 40 }, () =>
          r.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.02) IS NULL AS slept'),
        ),
      )
      expect(new Set(rows.map((x) => x.rows[0]?.pid)).size).toBe(3)
      expect(await poolBackends()).toHaveLength(3)
      await expectIdle(r)
      expect(r.stats().nodes[0]?.pool).toEqual({ total: 3, idle: 3, waiting: 0 })
    } finally {
      await r.close()
    }
    expect(await poolBackends()).toEqual([])
  })

  it('maxUses replaces a connection after that many checkouts', async () => {
    const r = router({ max: 1, maxUses: 3 })
    try {
      const pids: number[] = []
      for (let i = 0; i < 9; i++)
        pids.push((await r.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid)
      expect(new Set(pids).size).toBe(3)
      expect(pids.slice(0, 3).every((p) => p === pids[0])).toBe(true)
    } finally {
      await r.close()
    }
  })

  it('idleTimeoutMillis closes idle connections (down to min), and they reopen on demand', async () => {
    const r = router({ max: 4, min: 1, idleTimeoutMillis: 200 })
    try {
      await Promise.all(Array.from({ length: 8 }, () => r.query('SELECT pg_sleep(0.02)')))
      expect((await poolBackends()).length).toBe(4)
      await sleep(600)
      expect((await poolBackends()).length).toBe(1)
      expect(r.stats().nodes[0]?.pool.total).toBe(1)
      expect((await r.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one).toBe(1)
    } finally {
      await r.close()
    }
  })

  it('client options reach the server (statement_timeout), and a read-only pool keeps a user options string', async () => {
    const r = createRouter({
      driver: pgDriver(),
      primary: cluster.primary.url,
      healthCheck: false,
      pool: { application_name: APP, statement_timeout: 123, options: '-c search_path=pg_catalog' },
    })
    try {
      const t = await r.query<{ t: string }>("SELECT current_setting('statement_timeout') AS t")
      expect(t.rows[0]?.t).toBe('123ms')
      // no replica: readOnly reads fall back to the primary's read-only pool
      const ro = await r.readOnly(() =>
        r.query<{ sp: string; ro: string }>('SELECT current_setting($1) AS sp, current_setting($2) AS ro', [
          'search_path',
          'default_transaction_read_only',
        ]),
      )
      expect(ro.rows[0]).toEqual({ sp: 'pg_catalog', ro: 'on' })
    } finally {
      await r.close()
    }
  })

  it('a connection the server terminates while idle is replaced: the next statement succeeds', async () => {
    const seen: unknown[] = []
    const r = router({ max: 1 })
    r.on('error', (e) => seen.push(e))
    try {
      const before = (await r.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
      await admin.query('SELECT pg_terminate_backend($1)', [before])
      await sleep(100)
      const after = (await r.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
      expect(after).not.toBe(before)
      expect(seen).toHaveLength(1) // the idle connection's error, reported once as an event
      await expectIdle(r)
    } finally {
      await r.close()
    }
  })

  it('invalid pool options fail at createRouter, naming the option and the node', () => {
    expect(() => router({ max: 0 })).toThrow(/pool\.max \(node "primary"\).*expected an integer >= 1, got 0/)
    expect(() => router({ idleTimeoutMillis: 'soon' })).toThrow(/pool\.idleTimeoutMillis/)
  })
})
