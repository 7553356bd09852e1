/**
 * Read-your-writes positions without a round trip per write, on real clusters (one replica delayed,
 * so a read that lands on it right after a write is stale):
 * - MariaDB: the position comes with the write's reply (`last_gtid` session tracking): the
 *   primary's general log shows no position query after writes; several GTID domains are merged;
 *   without tracking (`resetOnRelease`) the position is read lazily instead, still 0 stale;
 * - PostgreSQL: a write only takes a stamp; the position is read when a read of the session needs
 *   it, one read shared by the sessions waiting: fewer position reads than writes under concurrent
 *   write-then-read sessions, none at all for sessions that only write.
 * Where each read ran is read from the serving server (its port).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRouter, type Driver, type Router } from '../../src/index.js'
import { mysql2Driver } from '../../src/mysql2/index.js'
import { pgDriver } from '../../src/pg/index.js'
import {
  type MariaDbCluster,
  type PgCluster,
  startMariaDbCluster,
  startPgCluster,
} from '../../src/testing/index.js'
import { expectIdle } from './support/dialects.js'

const HC = { intervalMs: 300, timeoutMs: 250, failureThreshold: 2, successThreshold: 1, maxBackoffMs: 600 }

/** A driver whose primary-position reads (`positionAfterWrite`) are counted. */
function counting<D extends Driver>(driver: D): { driver: D; reads: () => number } {
  let reads = 0
  const read = driver.positionAfterWrite.bind(driver)
  Object.defineProperty(driver, 'positionAfterWrite', {
    value: (conn: unknown) => {
      reads++
      return read(conn)
    },
  })
  return { driver, reads: () => reads }
}

/**
 * `sessions` concurrent callers, each running `iterations` sessions of one write then one read of
 * it; counts stale reads and where the reads ran.
 */
async function writeThenRead(
  router: Router,
  sessions: number,
  iterations: number,
  write: (v: number) => Promise<number>,
  read: (id: number) => Promise<{ v: number | null; port: number }>,
  portOwner: Map<number, string>,
) {
  let stale = 0
  const served: Record<string, number> = {}
  const caller = async (c: number) => {
    for (let i = 0; i < iterations; i++) {
      const v = c * 100_000 + i
      await router.session(async () => {
        const id = await write(v)
        const row = await router.readOnly(() => read(id))
        if (row.v !== v) stale++
        const node = portOwner.get(Number(row.port)) ?? '?'
        served[node] = (served[node] ?? 0) + 1
      })
    }
  }
  await Promise.all(Array.from({ length: sessions }, (_, c) => caller(c)))
  return { stale, served }
}

describe('read-your-writes positions (mariadb): from the write reply', () => {
  let cluster: MariaDbCluster
  const portOwner = new Map<number, string>()
  const POSITION_QUERY = 'SELECT @@GLOBAL.gtid_binlog_pos AS pos'

  beforeAll(async () => {
    cluster = await startMariaDbCluster({ replicas: 2 })
    portOwner.set(cluster.primary.port, 'primary')
    for (const r of cluster.replicas) portOwner.set(r.port, r.name)
    await cluster.query('primary', 'CREATE TABLE ryw (id INT AUTO_INCREMENT PRIMARY KEY, v INT NOT NULL)')
    await cluster.waitForReplication()
    await cluster.setApplyDelay('replica1', 1000)
  })

  afterAll(async () => {
    await cluster?.stop()
  })

  /** Statements of the primary's general log matching `like`, from a fresh log on. */
  const generalLog = {
    start: async () => {
      await cluster.query('primary', "SET GLOBAL log_output = 'TABLE'", [], { superuser: true })
      await cluster.query('primary', 'TRUNCATE TABLE mysql.general_log', [], { superuser: true })
      await cluster.query('primary', 'SET GLOBAL general_log = 1', [], { superuser: true })
    },
    count: async (like: string): Promise<number> => {
      const rows = (await cluster.query(
        'primary',
        "SELECT COUNT(*) AS n FROM mysql.general_log WHERE command_type = 'Query' AND CONVERT(argument USING utf8mb4) LIKE ?",
        [like],
        { superuser: true },
      )) as Array<{ n: number }>
      return Number(rows[0]?.n)
    },
    stop: () => cluster.query('primary', 'SET GLOBAL general_log = 0', [], { superuser: true }),
  }

  const makeRouter = (
    driver: Driver,
    pool: Record<string, unknown> = {},
    url = cluster.primary.url,
  ): Router =>
    createRouter({
      driver,
      primary: { name: 'primary', url },
      replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
      healthCheck: HC,
      pool,
      readYourWrites: { mode: 'position', maxWaitMs: 100 },
      maxReplicationLagMs: 0,
    })

  const write = (router: Router) => async (v: number) =>
    Number((await router.query('INSERT INTO ryw (v) VALUES (?)', [v])).insertId)
  const read = (router: Router) => async (id: number) =>
    (
      await router.query<{ v: number | null; port: number }>(
        'SELECT (SELECT v FROM ryw WHERE id = ?) AS v, @@port AS port',
        [id],
      )
    ).rows[0] ?? { v: null, port: 0 }

  it('4 concurrent sessions x 100 write-then-read: zero stale, and no position query on the primary', async () => {
    const { driver, reads } = counting(mysql2Driver())
    const router = makeRouter(driver)
    try {
      await router.ready()
      await generalLog.start()
      const { stale, served } = await writeThenRead(router, 4, 100, write(router), read(router), portOwner)
      const inserts = await generalLog.count('INSERT INTO ryw%')
      const positionQueries = await generalLog.count(`${POSITION_QUERY}%`)
      await generalLog.stop()
      console.log(
        `[mariadb] reply positions: ${stale} stale of 400; served ${JSON.stringify(served)}; ` +
          `${inserts} writes, ${positionQueries} position queries in the general log`,
      )
      expect(stale).toBe(0)
      expect(inserts).toBe(400)
      expect(positionQueries).toBe(0)
      expect(reads()).toBe(0)
      expect(served.replica2 ?? 0).toBeGreaterThan(200) // replica1 is 1 s behind: reads still leave the primary
      await expectIdle(router)
    } finally {
      await generalLog.stop().catch(() => {})
      await router.close()
    }
  })

  it('two GTID domains in one session: the token holds both, merged from the replies', async () => {
    // gtid_domain_id needs SUPER: the superuser, one primary connection so the SET applies to the writes.
    const router = makeRouter(
      mysql2Driver(),
      { connectionLimit: 1 },
      cluster.url('primary', { superuser: true }),
    )
    try {
      await router.ready()
      const { token, stale } = await router.session(async () => {
        const a = await write(router)(-1)
        await router.query('SET SESSION gtid_domain_id = 5')
        const b = await write(router)(-2)
        await router.query('SET SESSION gtid_domain_id = 0')
        const c = await write(router)(-3)
        let stale = 0
        for (const [id, v] of [
          [a, -1],
          [b, -2],
          [c, -3],
        ] as const) {
          if ((await router.readOnly(() => read(router)(id))).v !== v) stale++
        }
        return { token: router.consistencyToken() as string, stale }
      })
      const p = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()).p.default
      console.log(`[mariadb] two domains: session position ${p}`)
      expect(stale).toBe(0)
      expect(
        p
          .split(',')
          .map((g: string) => g.split('-')[0])
          .sort(),
      ).toEqual(['0', '5'])
    } finally {
      await router.close()
    }
  })

  it('without session tracking (resetOnRelease turns it off): the position is read lazily, still zero stale', async () => {
    const { driver, reads } = counting(mysql2Driver())
    const router = makeRouter(driver, { resetOnRelease: true })
    try {
      await router.ready()
      const { stale } = await writeThenRead(router, 4, 50, write(router), read(router), portOwner)
      console.log(
        `[mariadb] no tracking: ${stale} stale of 200; ${reads()} lazy position reads for 200 writes`,
      )
      expect(stale).toBe(0)
      expect(reads()).toBeGreaterThan(0)
      expect(reads()).toBeLessThanOrEqual(200)
    } finally {
      await router.close()
    }
  })
})

describe('read-your-writes positions (postgres): lazy, shared primary position reads', () => {
  let cluster: PgCluster
  const portOwner = new Map<number, string>()

  beforeAll(async () => {
    cluster = await startPgCluster({ replicas: 2 })
    portOwner.set(cluster.primary.port, 'primary')
    for (const r of cluster.replicas) portOwner.set(r.port, r.name)
    await cluster.query('primary', 'CREATE TABLE ryw (id serial PRIMARY KEY, v int NOT NULL)')
    await cluster.waitForReplication()
    await cluster.setApplyDelay('replica1', 300)
  })

  afterAll(async () => {
    await cluster?.setApplyDelay('replica1', 0).catch(() => {})
    await cluster?.stop()
  })

  const makeRouter = (driver: Driver): Router =>
    createRouter({
      driver,
      primary: { name: 'primary', url: cluster.primary.url },
      replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
      healthCheck: HC,
      readYourWrites: { mode: 'position', maxWaitMs: 100 },
      maxReplicationLagMs: 0,
    })

  const write = (router: Router) => async (v: number) =>
    Number(
      (await router.query<{ id: number }>('INSERT INTO ryw (v) VALUES ($1) RETURNING id', [v])).rows[0]?.id,
    )
  const read = (router: Router) => async (id: number) =>
    (
      await router.query<{ v: number | null; port: number }>(
        'SELECT (SELECT v FROM ryw WHERE id = $1) AS v, inet_server_port() AS port',
        [id],
      )
    ).rows[0] ?? { v: null, port: 0 }

  it('16 concurrent sessions x 40 write-then-read: zero stale, fewer position reads than writes', async () => {
    const { driver, reads } = counting(pgDriver())
    const router = makeRouter(driver)
    try {
      await router.ready()
      const { stale, served } = await writeThenRead(router, 16, 40, write(router), read(router), portOwner)
      console.log(
        `[postgres] lazy positions: ${stale} stale of 640; served ${JSON.stringify(served)}; ${reads()} position reads for 640 writes`,
      )
      expect(stale).toBe(0)
      expect(reads()).toBeGreaterThan(0)
      expect(reads()).toBeLessThan(640)
      expect(served.replica2 ?? 0).toBeGreaterThan(320)
      await expectIdle(router)
    } finally {
      await router.close()
    }
  })

  it('sessions that only write read no position at all; their tokens start shared reads, and route right here and at another instance', async () => {
    const { driver, reads } = counting(pgDriver())
    const router = makeRouter(driver)
    const other = makeRouter(pgDriver()) // another app instance
    try {
      await Promise.all([router.ready(), other.ready()])
      for (let i = 0; i < 50; i++) await router.session(() => write(router)(-i))
      expect(reads()).toBe(0) // 50 writes, no read and no token in their sessions: no position read
      const started = performance.now()
      const tokens = await Promise.all(
        Array.from({ length: 8 }, async (_, c) => {
          let token = ''
          let id = 0
          for (let i = 0; i < 25; i++) {
            await router.session(async () => {
              id = await write(router)(c * 1000 + i)
              token = router.consistencyToken() as string
            })
          }
          return { token, id, v: c * 1000 + 24 }
        }),
      )
      // A token is a demand for the position: one shared read at a time, at most one per 5 ms.
      const elapsed = performance.now() - started
      const byTokens = reads()
      expect(byTokens).toBeGreaterThan(0)
      expect(byTokens).toBeLessThanOrEqual(Math.ceil(elapsed / 5) + 1)
      await new Promise((r) => setTimeout(r, 50)) // (the read the last token started)
      const afterTokens = reads()
      let stale = 0
      const served: Record<string, number> = {}
      for (const t of tokens) {
        const p = JSON.parse(Buffer.from(t.token.split('.')[1] as string, 'base64url').toString()).p.default
        expect(p).toMatch(/^(unknown|[0-9A-F]+\/[0-9A-F]+)$/) // unknown unless a read already covered it
        for (const r of [router, other]) {
          const row = await r.withConsistencyToken(t.token, () => r.readOnly(() => read(r)(t.id)))
          if (row.v !== t.v) stale++
          const node = `${r === router ? 'here' : 'other'}:${portOwner.get(Number(row.port)) ?? '?'}`
          served[node] = (served[node] ?? 0) + 1
        }
      }
      console.log(
        `[postgres] write-only tokens: ${byTokens} position reads for 200 tokens in ${Math.round(elapsed)} ms; read back: ${stale} stale of 16, served ${JSON.stringify(served)}`,
      )
      expect(stale).toBe(0)
      // Back at the router that made them, the stamps are answered by the reads already made.
      expect(reads()).toBe(afterTokens)
    } finally {
      await router.close()
      await other.close()
    }
  })
})
