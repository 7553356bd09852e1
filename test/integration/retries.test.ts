/**
 * The one retry after a connection error, on a real cluster: a transaction's BEGIN that failed on
 * a connection killed by the server (before anything ran) is retried once on a fresh connection,
 * and the `retry` event names the node the transaction really runs on; `retryReads: false` turns
 * the read-only transaction's hop off; a read connection whose checkout fails (a replica killed)
 * is retried elsewhere with a `retry` event.
 *
 * The faults are real: the connection a BEGIN is about to run on is killed by its own server
 * (`pg_terminate_backend` / `KILL CONNECTION`), so the BEGIN meets a real dead connection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Driver, DriverPool, Router, RouterEvents, RouterOptions } from '../../src/index.js'
import {
  type DialectCase,
  dialects,
  expectIdle,
  nodeByPort,
  sleep,
  stateOf,
  type TestCluster,
  testRouter,
  waitFor,
} from './support/dialects.js'

const BEGIN = /^\s*(BEGIN|START TRANSACTION)\b/i

/**
 * The dialect's real driver, with one fault on demand: `killNextBegin(filter)` makes the next
 * BEGIN on a connection of a node accepted by `filter` run on a connection its server has just
 * killed. `killed` lists those connections (node, server connection id).
 */
function faultyDriver(d: DialectCase) {
  const real = d.driver()
  const nodeOf = new WeakMap<object, string>()
  const killed: Array<{ node: string; conn: number }> = []
  let armed: ((node: string) => boolean) | undefined
  const killSql = (id: number) =>
    d.name === 'postgres' ? `SELECT pg_terminate_backend(${id})` : `KILL CONNECTION ${id}`
  const driver: Driver = {
    dialect: real.dialect,
    name: `faulty ${real.name}`,
    createPool: (node, onError): DriverPool => {
      const pool = real.createPool(node, onError)
      return {
        acquire: async () => {
          const conn = await pool.acquire()
          nodeOf.set(conn as object, node.name)
          return conn
        },
        release: (c, destroy) => pool.release(c, destroy),
        destroy: (c) => pool.destroy(c),
        counts: () => pool.counts(),
        end: () => pool.end(),
      }
    },
    execute: async (conn, stmt, params) => {
      const node = nodeOf.get(conn as object)
      if (
        armed !== undefined &&
        node !== undefined &&
        typeof stmt === 'string' &&
        BEGIN.test(stmt) &&
        armed(node)
      ) {
        armed = undefined
        const { rows } = await real.execute(conn, d.whoAmI, undefined)
        const id = Number((rows[0] as { conn: unknown }).conn)
        killed.push({ node, conn: id })
        // The server kills this very connection: the statement fails, the connection is gone.
        await real.execute(conn, killSql(id), undefined).catch(() => {})
      }
      return real.execute(conn, stmt, params)
    },
    probe: (n, s) => real.probe(n, s),
    ...(real.createProber ? { createProber: real.createProber.bind(real) } : {}),
    positionReached: (a, b) => real.positionReached(a, b),
    positionAfterWrite: (c) => real.positionAfterWrite(c),
    waitForPosition: (c, t, ms) => real.waitForPosition(c, t, ms),
    beginSql: (o) => real.beginSql(o),
    savepointSql: (n, op) => real.savepointSql(n, op),
    classify: (e) => real.classify(e),
  }
  return {
    driver,
    killed,
    killNextBegin(filter: (node: string) => boolean) {
      armed = filter
    },
  }
}

describe.each(dialects)('retries ($name)', (d: DialectCase) => {
  let cluster: TestCluster
  let who: (port: unknown) => string
  const table = 'retry_t'

  beforeAll(async () => {
    cluster = await d.start(3)
    who = nodeByPort(cluster)
    const setup = testRouter(d, cluster, { healthCheck: false })
    try {
      for (const sql of d.setup(table)) await setup.query(sql)
    } finally {
      await setup.close()
    }
    await cluster.waitForReplication()
  })

  afterAll(async () => {
    await cluster?.stop()
  })

  /** A test router over the faulty driver, recording its `retry` events. */
  function faultyRouter(options: Partial<Omit<RouterOptions, 'driver'>> = {}) {
    const faulty = faultyDriver(d)
    const router = testRouter({ ...d, driver: () => faulty.driver }, cluster, options)
    const retries: Array<RouterEvents['retry']> = []
    router.on('retry', (e) => retries.push(e))
    return { router, retries, ...faulty }
  }

  /**
   * Every node up and usable (again): a killed connection makes its node suspect until the next
   * good probe, and a replica whose first probe failed (a loaded machine) gets no reads until one
   * succeeds.
   */
  async function allUp(router: Router) {
    await waitFor(
      () => router.stats().nodes.every((n) => n.state === 'up' && n.usable),
      5000,
      'every node up',
    )
  }

  /** A read-only transaction that reports where it ran: the node it says, and the server that answered. */
  async function readOnlyTx(router: Router) {
    return router.transaction(
      async (tx) => {
        const { rows } = await tx.query<{ port: number }>(d.whoAmI)
        return { node: tx.node, served: who(rows[0]?.port) }
      },
      { readOnly: true },
    )
  }

  it("a read-only transaction's failed BEGIN moves to another replica, and the retry event names that replica", async () => {
    const { router, retries, killed, killNextBegin } = faultyRouter()
    try {
      await router.ready()
      await allUp(router)
      // Round-robin over 3 replicas: each retry target is a fresh pick, so a second pick for the
      // event (the bug) would name another replica than the one the transaction runs on.
      for (let i = 0; i < 6; i++) {
        retries.length = 0
        killNextBegin((node) => node !== 'primary')
        const tx = await readOnlyTx(router)
        const failed = killed[killed.length - 1]!
        expect(killed).toHaveLength(i + 1)
        expect(tx.served).toBe(tx.node)
        expect(tx.node).not.toBe(failed.node)
        expect(tx.node).toMatch(/^replica/)
        expect(retries).toHaveLength(1)
        expect(retries[0]).toMatchObject({ cluster: 'default', from: failed.node, to: tx.node })
        expect(retries[0]?.error).not.toBe('')
        await allUp(router)
      }
      await expectIdle(router)
    } finally {
      await router.close()
    }
  })

  it("a write transaction's failed BEGIN is retried on a fresh connection of the primary (from = to = primary)", async () => {
    const { router, retries, killed, killNextBegin } = faultyRouter()
    try {
      await router.ready()
      killNextBegin((node) => node === 'primary')
      const result = await router.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${table} (v) VALUES (${d.param(1)})`, ['after-retry'])
        const { rows } = await tx.query<{ port: number; conn: number }>(d.whoAmI)
        return { node: tx.node, served: who(rows[0]?.port), conn: Number(rows[0]?.conn) }
      })
      expect(killed).toEqual([{ node: 'primary', conn: expect.any(Number) }])
      expect(result.node).toBe('primary')
      expect(result.served).toBe('primary')
      expect(result.conn).not.toBe(killed[0]?.conn) // a fresh connection, not the killed one
      expect(retries).toEqual([
        { cluster: 'default', from: 'primary', to: 'primary', error: expect.any(String) },
      ])
      const { rows } = await router.query<{ n: number }>(
        `SELECT COUNT(*) AS n FROM ${table} WHERE v = ${d.param(1)}`,
        ['after-retry'],
      )
      expect(Number(rows[0]?.n)).toBe(1) // committed once
      await expectIdle(router)
    } finally {
      await router.close()
    }
  })

  it('retryReads: false: no replica hop for a read-only transaction; a write transaction still gets its fresh connection', async () => {
    const { router, retries, killed, killNextBegin } = faultyRouter({ retryReads: false })
    try {
      await router.ready()
      killNextBegin((node) => node !== 'primary')
      const err = await readOnlyTx(router).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(killed).toHaveLength(1)
      expect(err).toBeDefined()
      expect(d.driver().classify(err)).toBe('connection')
      expect(retries).toEqual([])
      await allUp(router)
      killNextBegin((node) => node === 'primary')
      expect(await router.transaction(async (tx) => tx.node)).toBe('primary')
      expect(retries).toMatchObject([{ from: 'primary', to: 'primary' }])
      await expectIdle(router)
    } finally {
      await router.close()
    }
  })

  it('a read-only transaction sent to the primary by read-your-writes retries there, never on a replica', async () => {
    const { router, retries, killNextBegin } = faultyRouter({
      readYourWrites: { mode: 'window', windowMs: 60_000 },
    })
    try {
      await router.ready()
      await router.session(async () => {
        await router.query(`INSERT INTO ${table} (v) VALUES (${d.param(1)})`, ['ryw'])
        const before = router.stats().clusters[0]!.readYourWritesRedirects
        killNextBegin((node) => node === 'primary')
        const tx = await readOnlyTx(router)
        expect(tx).toEqual({ node: 'primary', served: 'primary' })
        expect(retries).toMatchObject([{ from: 'primary', to: 'primary' }])
        // One read-only transaction, one redirect, retry or not.
        expect(router.stats().clusters[0]!.readYourWritesRedirects).toBe(before + 1)
      })
      await expectIdle(router)
    } finally {
      await router.close()
    }
  })

  // Last: kills a replica (restarted at the end).
  it('a read connection whose checkout fails (replica killed) is retried on another node, with a retry event', async () => {
    // No probes of healthy nodes: nothing but the checkout itself finds out that replica3 is gone.
    const router = testRouter(d, cluster, { healthCheck: false })
    const retries: Array<RouterEvents['retry']> = []
    router.on('retry', (e) => retries.push(e))
    try {
      await cluster.kill('replica3')
      await sleep(100)
      const seen: string[] = []
      for (let i = 0; i < 3 && retries.length === 0; i++) seen.push((await readOnlyTx(router)).node)
      expect(retries).toHaveLength(1)
      expect(retries[0]).toMatchObject({ cluster: 'default', from: 'replica3' })
      expect(retries[0]?.to).toMatch(/^replica[12]$/)
      expect(seen[seen.length - 1]).toBe(retries[0]?.to) // the transaction ran where the event says
      expect(stateOf(router, 'replica3')).not.toBe('up') // the failed checkout counted against it
    } finally {
      await router.close()
      await cluster.restart('replica3')
    }
  })
})
