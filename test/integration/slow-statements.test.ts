/**
 * `queryTimeoutMs` on a real cluster: slow statements (sleeps, a write blocked by another client's
 * row lock) are cancelled on the server and fail with `QueryTimeoutError`, while the nodes stay up
 * and the innocent reads and writes around them all succeed. A write (or COMMIT) whose connection
 * dies after it was sent says its outcome is unknown. A node that is really frozen is still found
 * by its probe, which a timeout brings forward.
 */
import mysql from 'mysql2/promise'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  QueryTimeoutError,
  RoutemateError,
  type Router,
  type RouterEvents,
  WriteOutcomeUnknownError,
} from '../../src/index.js'
import type { RoutedMysql2Pool } from '../../src/mysql2/index.js'
import {
  type DialectCase,
  dialects,
  expectIdle,
  sleep,
  stateOf,
  type TestCluster,
  testRouter,
  waitFor,
} from './support/dialects.js'

const TIMEOUT_MS = 1000
const TABLE = 'slow_t'

/** The cluster as these tests use it: a node's URL (superuser too) and one-shot queries. */
interface Cluster extends TestCluster {
  url(name: string, opts?: { superuser?: boolean }): string
  query(name: string, sql: string, params?: unknown[], opts?: { superuser?: boolean }): Promise<unknown[]>
}

/** A plain client connection outside the router (a lock holder, a killer). */
interface Raw {
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>
  end(): Promise<void>
}

async function rawConnect(d: DialectCase, url: string): Promise<Raw> {
  if (d.name === 'postgres') {
    const c = new pg.Client({ connectionString: url })
    c.on('error', () => {})
    await c.connect()
    return {
      query: async (sql, params) => (await c.query(sql, params)).rows,
      end: () => c.end(),
    }
  }
  const c = await mysql.createConnection(url)
  c.on('error', () => {})
  return {
    query: async (sql, params) => (await c.query(sql, params))[0] as Record<string, unknown>[],
    end: () => c.end(),
  }
}

/** Statements whose text carries `marker` and that are still running on a node (the check itself excluded). */
async function running(d: DialectCase, cluster: Cluster, node: string, marker: string): Promise<number> {
  const sql =
    d.name === 'postgres'
      ? `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%${marker}%' AND pid <> pg_backend_pid()`
      : `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE '%${marker}%' AND ID <> CONNECTION_ID()`
  const rows = (await cluster.query(node, sql)) as Array<{ n: number | string }>
  return Number(rows[0]?.n ?? 0)
}

/** The server's id of the connection running a statement with `marker` (polled until it runs). */
async function connectionRunning(d: DialectCase, raw: Raw, marker: string, what = ''): Promise<number> {
  const sql =
    d.name === 'postgres'
      ? `SELECT pid AS id FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%${marker}%' ${what} AND pid <> pg_backend_pid()`
      : `SELECT ID AS id FROM information_schema.PROCESSLIST WHERE INFO LIKE '%${marker}%' ${what} AND ID <> CONNECTION_ID()`
  for (let i = 0; i < 500; i++) {
    const id = (await raw.query(sql))[0]?.id
    if (id !== undefined) return Number(id)
    await sleep(10)
  }
  throw new Error(`no statement with ${marker} running`)
}

/** Kills a server connection by id (PostgreSQL `pg_terminate_backend`, MariaDB `KILL`). */
async function killConnection(d: DialectCase, raw: Raw, id: number): Promise<void> {
  if (d.name === 'postgres') await raw.query('SELECT pg_terminate_backend($1)', [id])
  else await raw.query(`KILL ${id}`)
}

const sleepSql = (d: DialectCase, s: number, marker: string) =>
  d.name === 'postgres' ? `SELECT pg_sleep(${s}) AS ${marker}` : `SELECT SLEEP(${s}) AS ${marker}`

/** Innocent reads (readOnly) and writes in `loops` concurrent loops until `stop()`; counts failures. */
function innocentLoad(router: Router, d: DialectCase, loops: number) {
  let running = true
  let total = 0
  const failures: unknown[] = []
  const hardStop = Date.now() + 30_000 // a failed assertion must never leave a load running
  const all = Array.from({ length: loops }, async (_, i) => {
    while (running && Date.now() < hardStop && total < 200_000) {
      try {
        if (i % 2 === 0) await router.readOnly(() => router.query(d.whoAmI))
        else await router.query(`INSERT INTO ${TABLE} (v) VALUES ('innocent')`)
      } catch (err) {
        failures.push(err)
        await new Promise(setImmediate)
      }
      total++
    }
  })
  return {
    failures,
    get total() {
      return total
    },
    async stop() {
      running = false
      await Promise.all(all)
    },
  }
}

describe.each(dialects)('slow statements and queryTimeoutMs ($name)', (d: DialectCase) => {
  let cluster: Cluster
  let router: Router
  const events: Array<{ name: keyof RouterEvents; e: { node: string; source?: string } }> = []
  const loads: Array<{ stop(): Promise<void> }> = []

  beforeAll(async () => {
    cluster = (await d.start(2)) as Cluster
    for (const sql of d.setup(TABLE)) await cluster.query('primary', sql)
    // Probes as usual, with a deadline that a busy 2-core machine meets (the load below saturates it).
    router = testRouter(d, cluster, {
      queryTimeoutMs: TIMEOUT_MS,
      healthCheck: {
        intervalMs: 600,
        timeoutMs: 500,
        failureThreshold: 2,
        successThreshold: 1,
        maxBackoffMs: 1200,
      },
    })
    for (const name of ['node:down', 'node:suspect'] as const) {
      router.on(name, (e) => events.push({ name, e }))
    }
    await router.ready()
    await cluster.waitForReplication()
  })

  afterEach(async () => {
    await Promise.all(loads.splice(0).map((l) => l.stop()))
  })

  afterAll(async () => {
    await router?.close()
    await cluster?.stop()
  })

  it('4 slow reads and a write blocked by a row lock time out and are cancelled: 0 node:down, 0 failed innocent queries, nothing left running', async () => {
    const marker = 'slowmarker'
    const [locked] = (await router
      .query<{ id: number }>(
        d.name === 'postgres'
          ? `INSERT INTO ${TABLE} (v) VALUES ('locked') RETURNING id`
          : `INSERT INTO ${TABLE} (v) VALUES ('locked')`,
      )
      .then((r) => (d.name === 'postgres' ? r.rows : [{ id: Number(r.insertId) }]))) as Array<{ id: number }>
    const lockedId = locked?.id as number
    // Another client holds the row lock in an open transaction.
    const holder = await rawConnect(d, cluster.primary.url)
    await holder.query(d.name === 'postgres' ? 'BEGIN' : 'START TRANSACTION')
    await holder.query(`SELECT v FROM ${TABLE} WHERE id = ${lockedId} FOR UPDATE`)
    const load = innocentLoad(router, d, 8)
    loads.push(load)
    try {
      await sleep(300)
      events.length = 0
      const slowReads = Array.from({ length: 4 }, () =>
        router
          .readOnly(() => router.query(sleepSql(d, 3, marker)))
          .then(
            () => new Error('the slow read succeeded'),
            (e: unknown) => e,
          ),
      )
      const blocked = router.query(`UPDATE ${TABLE} SET v = '${marker}' WHERE id = ${lockedId}`).then(
        () => new Error('the blocked write succeeded'),
        (e: unknown) => e,
      )
      const errors = (await Promise.all([...slowReads, blocked])) as QueryTimeoutError[]
      await sleep(500)
      const leftover: Record<string, number> = {}
      for (const n of [cluster.primary, ...cluster.replicas])
        leftover[n.name] = await running(d, cluster, n.name, marker)
      await holder.query('COMMIT') // the lock goes: a statement still waiting for it would write now
      await sleep(300)
      await load.stop()
      const [row] = (await cluster.query(
        'primary',
        `SELECT v FROM ${TABLE} WHERE id = ${lockedId}`,
      )) as Array<{
        v: string
      }>
      const downs = events.filter((e) => e.name === 'node:down')
      console.log(
        `[${d.name}] slow statements: node:down ${downs.length}, node:suspect ${events.length - downs.length}; ` +
          `innocent failures ${load.failures.length} of ${load.total}; ` +
          `still running 500 ms later: ${JSON.stringify(leftover)}; ` +
          `elapsed ${errors.map((e) => Math.round(e.elapsedMs)).join(', ')} ms on ${errors.map((e) => e.node).join(', ')}`,
      )
      for (const [i, err] of errors.entries()) {
        expect(err, `slow statement ${i}`).toBeInstanceOf(QueryTimeoutError)
        expect(err).toBeInstanceOf(RoutemateError)
        expect(err.code).toBe('ROUTEMATE_QUERY_TIMEOUT')
        expect(err.timeoutMs).toBe(TIMEOUT_MS)
        expect(err.elapsedMs).toBeGreaterThanOrEqual(TIMEOUT_MS)
        expect(err.cancelled).toBe(true)
        expect(err.outcome).toBeUndefined()
        expect(err.cluster).toBe('default')
      }
      for (const err of errors.slice(0, 4)) expect(err.node).toMatch(/^replica[12]$/)
      expect(errors[4]?.node).toBe('primary')
      // The server's own cancellation error is the cause.
      for (const err of errors) {
        const cause = err.cause as { code?: string; errno?: number }
        if (d.name === 'postgres') expect(cause.code).toBe('57014')
        else expect(cause.errno).toBe(1317)
      }
      expect(downs).toEqual([])
      expect(load.failures).toEqual([])
      expect(load.total).toBeGreaterThan(100)
      expect(leftover).toEqual({ primary: 0, replica1: 0, replica2: 0 })
      expect(row?.v).toBe('locked') // the timed-out write was never applied
      for (const n of router.stats().nodes) expect(n.state).toBe('up')
      await expectIdle(router)
    } finally {
      await holder.end().catch(() => {})
    }
  })

  it('driver.cancel stops the statement running on a connection, which stays usable; a cancel that finds it idle never hits its next statement', async () => {
    const driver = d.driver()
    const options = {
      name: 'primary',
      url: cluster.primary.url,
      pool: {},
      connectTimeoutMs: 2000,
      queryTimeoutMs: 0,
      readOnly: false,
    }
    const pool = driver.createPool(options, () => {})
    const conn = await pool.acquire()
    try {
      const running = driver.execute(conn, sleepSql(d, 3, 'cancelmarker'), undefined).then(
        () => new Error('not cancelled'),
        (e: unknown) => e,
      )
      await sleep(200)
      expect(await driver.cancel?.(conn, options, AbortSignal.timeout(2000))).toBe(true)
      const err = (await running) as { code?: string; errno?: number }
      if (d.name === 'postgres') expect(err.code).toBe('57014')
      else expect(err.errno).toBe(1317)
      expect(driver.classify(err)).toBe('statement')
      // Idle now: a cancel is dropped, the next statement runs to its end.
      expect(await driver.cancel?.(conn, options, AbortSignal.timeout(2000))).toBe(true)
      const { rows } = await driver.execute(conn, d.slowWhoAmI(300), undefined)
      expect(Number(rows[0]?.port)).toBe(cluster.primary.port)
      // An aborted cancel gives up without throwing.
      expect(await driver.cancel?.(conn, options, AbortSignal.abort())).toBe(false)
    } finally {
      pool.release(conn, false)
      await pool.end()
    }
  })

  it('router.pool() connections: a slow statement is cancelled on the server too (QueryTimeoutError), the connection reused', async () => {
    const marker = 'facademarker'
    let err: unknown
    let after: unknown
    if (d.name === 'postgres') {
      const client = await router.pool<pg.Pool>().connect()
      try {
        err = await client.query(sleepSql(d, 3, marker)).then(
          () => new Error('not cancelled'),
          (e: unknown) => e,
        )
        after = Number((await client.query(d.whoAmI)).rows[0]?.port)
      } finally {
        client.release()
      }
    } else {
      const conn = await router.pool<RoutedMysql2Pool>().getConnection()
      try {
        err = await conn.query(sleepSql(d, 3, marker)).then(
          () => new Error('not cancelled'),
          (e: unknown) => e,
        )
        after = Number((await conn.query<Array<{ port: number }>>(d.whoAmI))[0][0]?.port)
      } finally {
        conn.release()
      }
    }
    expect(err).toBeInstanceOf(QueryTimeoutError)
    expect(err).toMatchObject({ node: 'primary', cancelled: true })
    expect(after).toBe(cluster.primary.port) // the same connection, usable
    expect(await running(d, cluster, 'primary', marker)).toBe(0)
    await expectIdle(router)
    expect(events.filter((e) => e.name === 'node:down')).toEqual([])
  })

  it('a timed-out statement inside a transaction rolls it back, even if the callback catches it', async () => {
    const marker = 'txslowmarker'
    const err = await router
      .transaction(async (tx) => {
        await tx.query(`INSERT INTO ${TABLE} (v) VALUES ('${marker}-row')`)
        await tx.query(sleepSql(d, 3, marker)).catch(() => {}) // swallowed by the callback
        return 'committed?'
      })
      .then(
        (v) => new Error(`resolved ${v}`),
        (e: unknown) => e,
      )
    expect(err).toBeInstanceOf(QueryTimeoutError)
    expect((err as QueryTimeoutError).cancelled).toBe(true)
    const rows = (await cluster.query(
      'primary',
      `SELECT COUNT(*) AS n FROM ${TABLE} WHERE v = '${marker}-row'`,
    )) as Array<{ n: unknown }>
    expect(Number(rows[0]?.n)).toBe(0) // rolled back, never committed
    expect(await running(d, cluster, 'primary', marker)).toBe(0)
    await expectIdle(router)
    expect(events.filter((e) => e.name === 'node:down')).toEqual([])
  })

  it('a write whose connection is killed after it was sent rejects with outcome unknown (never retried)', async () => {
    const r = testRouter(d, cluster, { queryTimeoutMs: 10_000 })
    const killer = await rawConnect(d, cluster.primary.url)
    try {
      await r.ready()
      const marker = 'killedmarker'
      const write = r
        .query(
          d.name === 'postgres'
            ? `INSERT INTO ${TABLE} (v) SELECT '${marker}' FROM pg_sleep(3)`
            : `INSERT INTO ${TABLE} (v) SELECT '${marker}' FROM (SELECT SLEEP(3) AS s) AS t`,
        )
        .then(
          () => new Error('the killed write succeeded'),
          (e: unknown) => e,
        )
      await killConnection(d, killer, await connectionRunning(d, killer, marker))
      const err = (await write) as WriteOutcomeUnknownError
      console.log(`[${d.name}] killed write: ${err.name}: ${err.message}`)
      expect(err).toBeInstanceOf(WriteOutcomeUnknownError)
      expect(err).toBeInstanceOf(RoutemateError)
      expect(err.outcome).toBe('unknown')
      expect(err.node).toBe('primary')
      expect(err.code).toBe('ROUTEMATE_WRITE_OUTCOME_UNKNOWN')
      expect(err.cause).toBeInstanceOf(Error)
      expect(r.stats().nodes.find((n) => n.name === 'primary')?.errors).toBe(1) // sent once, not retried
      // A write that never reached the server (here: the router is closed) is not "unknown".
      await r.close()
      await expect(r.query(`INSERT INTO ${TABLE} (v) VALUES ('never')`)).rejects.not.toHaveProperty('outcome')
    } finally {
      await killer.end().catch(() => {})
      await r.close()
    }
  })

  it('a COMMIT whose connection is killed while it runs rejects with outcome unknown', async () => {
    const r = testRouter(d, cluster, { queryTimeoutMs: 10_000 })
    const killer = await rawConnect(d, cluster.primary.url)
    // PostgreSQL: a deferred constraint trigger makes COMMIT run 3 s; MariaDB: BACKUP STAGE
    // BLOCK_COMMIT (a superuser's) makes it wait.
    const blocker =
      d.name === 'postgres' ? undefined : await rawConnect(d, cluster.url('primary', { superuser: true }))
    try {
      if (d.name === 'postgres') {
        for (const sql of [
          'CREATE TABLE IF NOT EXISTS slow_commit (id serial PRIMARY KEY, v text)',
          `CREATE OR REPLACE FUNCTION slow_commit_sleep() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(3); RETURN NULL; END $$`,
          'DROP TRIGGER IF EXISTS slow_commit_at_commit ON slow_commit',
          'CREATE CONSTRAINT TRIGGER slow_commit_at_commit AFTER INSERT ON slow_commit DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit_sleep()',
        ])
          await cluster.query('primary', sql)
      }
      await r.ready()
      const table = d.name === 'postgres' ? 'slow_commit' : TABLE
      let id = 0
      const commit = r
        .transaction(async (tx) => {
          const { rows } = await tx.query<{ id: number }>(
            d.name === 'postgres' ? 'SELECT pg_backend_pid() AS id' : 'SELECT CONNECTION_ID() AS id',
          )
          id = Number(rows[0]?.id)
          await tx.query(`INSERT INTO ${table} (v) VALUES ('commitmarker')`)
          if (blocker !== undefined) {
            await blocker.query('BACKUP STAGE START')
            await blocker.query('BACKUP STAGE BLOCK_COMMIT')
          }
        })
        .then(
          () => new Error('the killed COMMIT succeeded'),
          (e: unknown) => e,
        )
      await connectionRunning(
        d,
        killer,
        'COMMIT',
        d.name === 'postgres' ? `AND query = 'COMMIT'` : `AND INFO = 'COMMIT'`,
      )
      await sleep(100)
      await killConnection(d, killer, id)
      const err = (await commit) as WriteOutcomeUnknownError
      await blocker?.query('BACKUP STAGE END')
      console.log(`[${d.name}] killed COMMIT: ${err.name}: ${err.message}`)
      expect(err).toBeInstanceOf(WriteOutcomeUnknownError)
      expect(err.outcome).toBe('unknown')
      expect(err.node).toBe('primary')
    } finally {
      await blocker?.query('BACKUP STAGE END').catch(() => {})
      await blocker?.end().catch(() => {})
      await killer.end().catch(() => {})
      await r.close()
    }
  })

  it('a frozen replica (SIGSTOP): its statements time out and the timeout brings its probe forward, which marks it down', async () => {
    // Probes every 30 s: only the early probe a timeout triggers can find the node frozen in time.
    const r = testRouter(d, cluster, {
      queryTimeoutMs: TIMEOUT_MS,
      retryReads: false,
      healthCheck: { intervalMs: 30_000, timeoutMs: 300, failureThreshold: 1, maxBackoffMs: 30_000 },
    })
    const seen: Array<{ name: string; node: string; source?: string }> = []
    for (const name of ['node:down', 'node:suspect'] as const) r.on(name, (e) => seen.push({ name, ...e }))
    try {
      await r.ready()
      // Warm connections on both replicas, so the reads below are sent (not stuck connecting).
      await Promise.all(Array.from({ length: 8 }, () => r.readOnly(() => r.query(d.slowWhoAmI(50)))))
      await cluster.pause('replica2')
      const results = await Promise.allSettled(
        Array.from({ length: 4 }, () => r.readOnly(() => r.query(d.whoAmI))),
      )
      await waitFor(() => stateOf(r, 'replica2') === 'down', 20_000, 'replica2 down by its probe')
      const rejected = results.flatMap((x) => (x.status === 'rejected' ? [x.reason as unknown] : []))
      console.log(
        `[${d.name}] frozen replica: ${rejected.length} of 4 reads rejected (${rejected
          .map((e) => (e as Error).name)
          .join(', ')}); events ${JSON.stringify(seen.map((e) => `${e.name} ${e.node} ${e.source ?? ''}`))}`,
      )
      expect(rejected.length).toBeGreaterThan(0)
      for (const e of rejected) {
        expect(e).toBeInstanceOf(QueryTimeoutError)
        expect((e as QueryTimeoutError).node).toBe('replica2')
      }
      const downs = seen.filter((e) => e.name === 'node:down')
      expect(downs).toEqual([
        {
          name: 'node:down',
          node: 'replica2',
          source: 'probe',
          cluster: 'default',
          role: 'replica',
          reason: expect.any(String),
        },
      ])
    } finally {
      await cluster.resume('replica2')
      await r.close()
    }
    await waitFor(() => stateOf(router, 'replica2') === 'up', 10_000, 'replica2 back for the main router')
  })
})
