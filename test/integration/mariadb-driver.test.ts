/**
 * The `mariadb` connector driver (`routemate/mariadb`) against a real MariaDB GTID cluster
 * (primary + 2 replicas): results, read-your-writes positions, the read-only fallback pool, the
 * `mariadb.Pool` facade, and Prisma 7 over `router.pool()` with `@prisma/adapter-mariadb` (reads in
 * `router.readOnly` on replicas, writes on the primary, a replica `kill -9` under 32 Prisma
 * readers with 0 failed reads). The behavioural suites also run over this driver: see the
 * `mariadb-connector` entry of support/dialects.ts.
 *
 * Prisma's client is generated in `beforeAll` (offline: `PRISMA_SCHEMA_ENGINE_BINARY=/bin/false`)
 * from `prisma-mysql/schema.prisma` into `prisma-mysql/generated/` (gitignored).
 */
import { execFile } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { PrismaMariaDb } from '@prisma/adapter-mariadb'
import * as mariadb from 'mariadb'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRouter, ReadOnlyViolationError, type Router } from '../../src/index.js'
import { type MariadbDriver, mariadbDriver } from '../../src/mariadb/index.js'
import { type MariaDbCluster, startMariaDbCluster } from '../../src/testing/mariadb-cluster.js'
import { expectIdle, LIVENESS_MS, sleep, stateOf, waitFor } from './support/dialects.js'
import { promisesPerCall } from './support/promise-census.js'

let cluster: MariaDbCluster
const HC = { intervalMs: 300, timeoutMs: 200, failureThreshold: 2, successThreshold: 1, maxBackoffMs: 600 }

function newRouter(options: { readYourWrites?: false } = {}): Router<MariadbDriver> {
  return createRouter({
    driver: mariadbDriver(),
    primary: { name: 'primary', url: cluster.primary.url },
    replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
    healthCheck: HC,
    connectTimeoutMs: 2000,
    ...options,
  })
}

beforeAll(async () => {
  cluster = await startMariaDbCluster({ replicas: 2 })
  const r = newRouter()
  await r.query(
    'CREATE TABLE IF NOT EXISTS pm_items (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(100) NOT NULL)',
  )
  await r.close()
  await cluster.waitForReplication()
})

afterAll(async () => {
  await cluster?.stop()
})

describe('mariadbDriver() through a router', () => {
  let router: Router<MariadbDriver>
  const port = (rows: Array<{ port: unknown }>) => Number(rows[0]?.port)

  beforeAll(async () => {
    router = newRouter()
    await router.ready()
  })

  afterAll(async () => {
    await router?.close()
  })

  it('routes reads to replicas and writes to the primary, with the connector results', async () => {
    const replicaPorts = new Set(cluster.replicas.map((r) => r.port))
    const w = await router.query('INSERT INTO pm_items (v) VALUES (?)', ['d-1'])
    expect(w.rowCount).toBe(1)
    expect(w.affectedRows).toBe(1)
    expect(typeof w.insertId === 'bigint' || typeof w.insertId === 'number').toBe(true)
    const onPrimary = await router.query<{ port: unknown }>('SELECT @@port AS port')
    expect(port(onPrimary.rows)).toBe(cluster.primary.port)
    const seen = new Set<number>()
    for (let i = 0; i < 12; i++)
      seen.add(
        port((await router.readOnly(() => router.query<{ port: unknown }>('SELECT @@port AS port'))).rows),
      )
    expect([...seen].every((p) => replicaPorts.has(p))).toBe(true)
    expect(seen.size).toBe(2)
    await expectIdle(router)
  })

  it('read-your-writes by GTID position: a session reads its own write from a replica that has it', async () => {
    for (let i = 0; i < 20; i++) {
      const found = await router.session(async () => {
        const w = await router.query('INSERT INTO pm_items (v) VALUES (?)', [`ryw-${i}`])
        const token = router.consistencyToken()
        expect(token).toMatch(/^\S+$/)
        return router.readOnly(() => router.query('SELECT id FROM pm_items WHERE id = ?', [w.insertId]))
      })
      expect(found.rows).toHaveLength(1)
    }
  })

  it('the primary fallback pool is a read-only session: a hidden write (CALL) is refused by the server', async () => {
    await router.query("CREATE OR REPLACE PROCEDURE pm_add() INSERT INTO pm_items (v) VALUES ('hidden')")
    const ro = createRouter({
      driver: mariadbDriver(),
      primary: { name: 'primary', url: cluster.primary.url },
      healthCheck: HC,
    })
    try {
      const err = await ro
        .readOnly(() => ro.query('CALL pm_add()'))
        .then(
          () => undefined,
          (e: unknown) => e,
        )
      expect(err).toBeDefined()
      expect([1290, 1792, 1836]).toContain(
        Number((err as { errno?: number }).errno ?? (err as { cause?: { errno?: number } }).cause?.errno),
      )
      const row = await ro.readOnly(() => ro.query<{ ro: unknown }>('SELECT @@tx_read_only AS ro'))
      expect(Number(row.rows[0]?.ro)).toBe(1)
    } finally {
      await ro.close()
    }
  })

  it('router.pool() is a mariadb.Pool look-alike: query/execute/batch/getConnection routed by scope', async () => {
    const pool = router.pool()
    const rows = await router.readOnly(() => pool.query('SELECT @@port AS port'))
    expect(cluster.replicas.map((r) => r.port)).toContain(Number(rows[0].port))
    expect(Array.isArray(rows.meta)).toBe(true)
    const exec = await router.readOnly(() => pool.execute('SELECT ? + 1 AS n', [41]))
    expect(Number(exec[0].n)).toBe(42)
    const ok = await pool.batch('INSERT INTO pm_items (v) VALUES (?)', [['b1'], ['b2'], ['b3']])
    expect(ok.affectedRows).toBe(3)
    // A write through a read scope is refused by the guard, before it reaches a server.
    await expect(
      router.readOnly(() => pool.query("INSERT INTO pm_items (v) VALUES ('x')")),
    ).rejects.toBeInstanceOf(ReadOnlyViolationError)
    const conn = await router.readOnly(() => pool.getConnection())
    try {
      expect(cluster.replicas.map((r) => r.port)).toContain(
        Number((await conn.query('SELECT @@port AS port'))[0].port),
      )
      await expect(conn.query('SET SESSION TRANSACTION READ WRITE')).rejects.toBeInstanceOf(
        ReadOnlyViolationError,
      )
    } finally {
      await conn.release()
    }
    // Inside router.transaction, the connection is the transaction's: BEGIN/COMMIT become savepoints.
    await router.transaction(async (tx) => {
      await tx.query("INSERT INTO pm_items (v) VALUES ('tx-outer')")
      const c = await pool.getConnection()
      await c.beginTransaction()
      await c.query("INSERT INTO pm_items (v) VALUES ('tx-inner')")
      await c.rollback()
      await c.release()
    })
    const both = await router.query<{ v: string }>(
      "SELECT v FROM pm_items WHERE v IN ('tx-outer', 'tx-inner')",
    )
    expect(both.rows.map((r) => r.v)).toEqual(['tx-outer'])
    expect(pool.totalConnections()).toBeGreaterThan(0)
    await expectIdle(router)
  })

  it('a routed read makes at most two promises more than the raw pool (each pays the promise hooks of AsyncLocalStorage); router.pool() none more than router.query', async () => {
    // the connector takes a connection string (`mariadb://`), with pool options as parameters
    const raw = mariadb.createPool(
      `${(cluster.replicas[0]?.url ?? '').replace(/^mysql:/, 'mariadb:')}?connectionLimit=1`,
    )
    // no background probes: only the statements' promises are counted
    const quiet = createRouter({
      driver: mariadbDriver(),
      primary: { name: 'primary', url: cluster.primary.url },
      replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
      healthCheck: false,
    })
    const pool = quiet.pool()
    try {
      const rawCount = await promisesPerCall(() => raw.query('SELECT ? AS x', [1]))
      const routed = await promisesPerCall(() => quiet.readOnly(() => quiet.query('SELECT ? AS x', [1])))
      const facade = await promisesPerCall(() => quiet.readOnly(() => pool.query('SELECT ? AS x', [1])))
      // raw: the pool's promise (and the caller's await); routed: the router's, the connector's own
      // for the statement, the driver's then on it (and the caller's await). Was 3 and 4 more.
      expect(routed).toBeLessThanOrEqual(rawCount + 2)
      expect(facade).toBeLessThanOrEqual(routed)
      const write = await promisesPerCall(() => quiet.query("INSERT INTO pm_items (v) VALUES ('census')"))
      expect(write).toBeLessThanOrEqual(rawCount + 2)
      await expectIdle(quiet)
    } finally {
      await raw.end()
      await quiet.close()
    }
  })
})

describe('router.pool() connection identity (mariadb facade)', () => {
  let router: Router<MariadbDriver>

  beforeAll(async () => {
    // One connection per node: every checkout of the primary is the same physical connection.
    router = createRouter({
      driver: mariadbDriver(),
      primary: { name: 'primary', url: cluster.primary.url },
      replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
      healthCheck: HC,
      connectTimeoutMs: 2000,
      pool: { connectionLimit: 1 },
    })
    await router.ready()
  })

  afterAll(async () => {
    await router?.close()
  })

  it('hands out the same wrapper at every checkout of one physical connection, a new one after destroy()', async () => {
    const pool = router.pool()
    const created: unknown[] = []
    const onConnection = (c: unknown) => created.push(c)
    pool.on('connection', onConnection)
    try {
      const first = await pool.getConnection()
      const id = first.threadId
      await first.release()
      for (let i = 0; i < 5; i++) {
        const again = await pool.getConnection()
        expect(again).toBe(first)
        expect(again.isValid()).toBe(true)
        expect(Number((await again.query('SELECT CONNECTION_ID() AS id'))[0].id)).toBe(id)
        await again.release()
      }
      expect(created).toEqual([first])
      // A released wrapper refuses statements until it is checked out again.
      await expect(first.query('SELECT 1')).rejects.toThrow(/released/)

      const doomed = await pool.getConnection()
      expect(doomed).toBe(first)
      doomed.destroy()
      const fresh = await pool.getConnection()
      try {
        expect(fresh).not.toBe(first)
        expect(fresh.threadId).not.toBe(id)
        expect(created).toEqual([first, fresh])
        // The destroyed connection's wrapper stays released.
        expect(first.isValid()).toBe(false)
        await expect(first.query('SELECT 1')).rejects.toThrow(/released/)
      } finally {
        await fresh.release()
      }
      const last = await pool.getConnection()
      await last.release()
      expect(last).toBe(fresh)
    } finally {
      pool.off('connection', onConnection)
    }
    await expectIdle(router)
  })
})

// ---- Prisma 7 ------------------------------------------------------------------------------------

interface PrismaItem {
  id: number
  v: string
}
interface PrismaItems {
  create(args: { data: { v: string } }): Promise<PrismaItem>
  findMany(args?: { where?: { v?: string | { startsWith: string } } }): Promise<PrismaItem[]>
  count(args?: { where?: { v?: string | { startsWith: string } } }): Promise<number>
}
interface PrismaTx {
  item: PrismaItems
  $queryRaw<T = unknown>(query: TemplateStringsArray, ...values: unknown[]): Promise<T>
}
interface PrismaDb extends PrismaTx {
  $transaction<T>(fn: (tx: PrismaTx) => Promise<T>): Promise<T>
  $disconnect(): Promise<void>
}
type PrismaClientCtor = new (options: { adapter: PrismaMariaDb }) => PrismaDb

const prismaDir = fileURLToPath(new URL('./prisma-mysql/', import.meta.url))

/** `prisma generate`, offline: generating a client never runs the schema engine, so it may be /bin/false. */
async function generatePrismaClient(): Promise<PrismaClientCtor> {
  await promisify(execFile)('npx', ['--no-install', 'prisma', 'generate', '--schema', 'schema.prisma'], {
    cwd: prismaDir,
    env: {
      ...process.env,
      PRISMA_SCHEMA_ENGINE_BINARY: '/bin/false',
      CHECKPOINT_DISABLE: '1',
      PRISMA_HIDE_UPDATE_MESSAGE: '1',
    },
    timeout: 60_000,
  })
  const url = pathToFileURL(`${prismaDir}generated/client.ts`).href
  const mod = (await import(/* @vite-ignore */ url)) as { PrismaClient: PrismaClientCtor }
  return mod.PrismaClient
}

describe('Prisma 7 over router.pool() (@prisma/adapter-mariadb)', () => {
  let router: Router<MariadbDriver>
  let prisma: PrismaDb
  const replicaPorts = () => cluster.replicas.map((r) => r.port)
  const whoAmI = async (q: PrismaTx) =>
    Number((await q.$queryRaw<Array<{ port: unknown }>>`SELECT @@port AS port`)[0]?.port)

  beforeAll(async () => {
    const PrismaClient = await generatePrismaClient()
    router = newRouter()
    await router.ready()
    prisma = new PrismaClient({ adapter: new PrismaMariaDb(router.pool()) })
  })

  afterAll(async () => {
    await prisma?.$disconnect()
    await router?.close()
  })

  it('reads in router.readOnly go to replicas, writes and transactions to the primary', async () => {
    const created = await prisma.item.create({ data: { v: 'prisma-1' } })
    expect(created.id).toBeGreaterThan(0)
    expect(await whoAmI(prisma)).toBe(cluster.primary.port)
    const ports = new Set<number>()
    await router.readOnly(async () => {
      for (let i = 0; i < 12; i++) ports.add(await whoAmI(prisma))
      await prisma.item.findMany({ where: { v: 'none' } })
    })
    expect([...ports].every((p) => replicaPorts().includes(p))).toBe(true)
    const inTx = await prisma.$transaction(async (tx) => {
      await tx.item.create({ data: { v: 'prisma-tx' } })
      return whoAmI(tx)
    })
    expect(inTx).toBe(cluster.primary.port)
    // A session reads its own Prisma write (read-your-writes by GTID position).
    const mine = await router.session(async () => {
      await prisma.item.create({ data: { v: 'prisma-ryw' } })
      return router.readOnly(() => prisma.item.count({ where: { v: 'prisma-ryw' } }))
    })
    expect(mine).toBe(1)
    // A write in a read scope is refused before it reaches a server.
    await expect(router.readOnly(() => prisma.item.create({ data: { v: 'ro' } }))).rejects.toThrow(
      /read-only|read only/i,
    )
    await expectIdle(router)
  })

  it('kill -9 of a replica under 32 concurrent Prisma readers: 0 failed reads', async () => {
    let running = true
    let reads = 0
    const failures: unknown[] = []
    const served: Record<number, number> = {}
    const hardStop = Date.now() + 60_000
    const loops = Array.from({ length: 32 }, async () => {
      while (running && Date.now() < hardStop) {
        try {
          const p = await router.readOnly(() => whoAmI(prisma))
          served[p] = (served[p] ?? 0) + 1
          reads++
        } catch (err) {
          failures.push(err)
          await new Promise(setImmediate)
        }
      }
    })
    try {
      await sleep(500)
      const victim = cluster.replicas[0] as { name: string; port: number }
      const other = cluster.replicas[1] as { name: string; port: number }
      await cluster.kill(victim.name)
      await waitFor(() => stateOf(router, victim.name) === 'down', LIVENESS_MS, `${victim.name} down`)
      const before = served[other.port] ?? 0
      await sleep(1000)
      expect(served[other.port] ?? 0).toBeGreaterThan(before)
      await cluster.restart(victim.name)
      await waitFor(() => stateOf(router, victim.name) === 'up', LIVENESS_MS, `${victim.name} re-admitted`)
    } finally {
      running = false
      await Promise.all(loops)
    }
    console.log(
      `[mariadb-connector] Prisma kill -9 replica: failed reads ${failures.length} of ${reads + failures.length}`,
    )
    expect(failures.map((e) => String(e))).toEqual([])
    expect(reads).toBeGreaterThan(100)
    await cluster.waitForReplication()
    await expectIdle(router)
  })
})
