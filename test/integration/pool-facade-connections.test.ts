/**
 * `router.pool()` of both drivers against real servers: one wrapper per physical connection for its
 * lifetime (Kysely's `onCreateConnection` runs once per connection, not per checkout), the pool
 * events of the driver's own pool (`pg.Pool`: connect, acquire, release, remove, error; mysql2:
 * connection, acquire, release, enqueue), and an idle connection killed on the server never
 * crashing the process (an `'error'` listener, if any, gets the error).
 */
import { once } from 'node:events'
import { Kysely, MysqlDialect, PostgresDialect, sql } from 'kysely'
import type pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Router } from '../../src/index.js'
import type { Mysql2RouterPool } from '../../src/mysql2/index.js'
import { type DialectCase, dialects, expectIdle, type TestCluster, testRouter } from './support/dialects.js'

type QueryableCluster = TestCluster & {
  query(name: string, sql: string, params?: unknown[]): Promise<unknown>
}

/** Kills one connection on the primary, by its server-side id. */
function killSql(d: DialectCase, id: number): string {
  return d.name === 'postgres' ? `SELECT pg_terminate_backend(${id})` : `KILL ${id}`
}

/** Resolves when `cond()` holds (checked every 20 ms), rejects after `ms`. */
async function until(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe.each(dialects)('$name', (d) => {
  let cluster: QueryableCluster
  let router: Router

  beforeAll(async () => {
    cluster = (await d.start(0)) as QueryableCluster
    // One connection per node: every checkout of the primary is the same physical connection.
    router = testRouter(d, cluster, { pool: d.poolMax(1) })
    await router.ready()
  })

  afterEach(async () => {
    await expectIdle(router)
  })

  afterAll(async () => {
    await router?.close()
    await cluster?.stop()
  })

  it("Kysely's onCreateConnection runs once for 5 sequential queries on one connection", async () => {
    const created: unknown[] = []
    const onCreateConnection = async (conn: unknown) => {
      created.push(conn)
    }
    const dialect =
      d.name === 'postgres'
        ? new PostgresDialect({ pool: router.pool<pg.Pool>(), onCreateConnection })
        : new MysqlDialect({ pool: router.pool<Mysql2RouterPool>(), onCreateConnection })
    // Not destroyed: destroying Kysely ends router.pool(), which closes the router.
    const db = new Kysely<Record<string, never>>({ dialect })
    const ids: unknown[] = []
    for (let i = 0; i < 5; i++) {
      const { rows } = await sql<{ conn: number }>`${sql.raw(d.whoAmI)}`.execute(db)
      ids.push(Number(rows[0]?.conn))
    }
    expect(new Set(ids).size).toBe(1)
    expect(created.length).toBe(1)
  })

  it('hands out the same object at every checkout of one physical connection', async () => {
    if (d.name === 'postgres') {
      const pool = router.pool<pg.Pool>()
      const a = await pool.connect()
      a.release()
      const b = await pool.connect()
      b.release()
      expect(b).toBe(a)
      await new Promise<void>((resolve, reject) =>
        pool.connect((err, c, done) => {
          if (err) return reject(err)
          expect(c).toBe(a)
          done()
          resolve()
        }),
      )
    } else {
      const pool = router.pool<Mysql2RouterPool>()
      const a = await pool.getConnection()
      a.release()
      const b = await pool.getConnection()
      b.release()
      expect(b).toBe(a)
      await new Promise<void>((resolve, reject) =>
        pool.getConnection((err, c) => {
          if (err) return reject(err)
          expect(c).toBe(a.connection)
          c.release()
          resolve()
        }),
      )
    }
  })

  it("emits the driver pool's events with their meaning", async () => {
    if (d.name === 'postgres') {
      const pool = router.pool<pg.Pool>()
      const seen: string[] = []
      const clients = new Set<unknown>()
      const on =
        (name: string) =>
        (...args: unknown[]) => {
          const client = name === 'release' ? args[1] : args[0]
          clients.add(client)
          seen.push(name === 'release' ? `release:${args[0] === undefined ? 'ok' : 'err'}` : name)
        }
      const names = ['connect', 'acquire', 'release', 'remove'] as const
      const listeners = names.map((n) => [n, on(n)] as const)
      for (const [n, l] of listeners) pool.on(n, l)
      try {
        // Two checkouts of the idle connection, then one released with an error: destroyed.
        for (let i = 0; i < 2; i++) {
          const c = await pool.connect()
          await c.query('SELECT 1')
          c.release()
        }
        const c = await pool.connect()
        const removed = once(pool, 'remove')
        c.release(new Error('broken'))
        await removed
        // A new physical connection: 'connect' again, before its first 'acquire'.
        const fresh = await pool.connect()
        expect(fresh).not.toBe(c)
        fresh.release()
        expect(seen).toEqual([
          'acquire',
          'release:ok',
          'acquire',
          'release:ok',
          'acquire',
          'release:err',
          'remove',
          'connect',
          'acquire',
          'release:ok',
        ])
        expect(clients.size).toBe(2)
      } finally {
        for (const [n, l] of listeners) pool.off(n, l)
      }
    } else {
      const pool = router.pool<Mysql2RouterPool>()
      const seen: string[] = []
      const names = ['connection', 'acquire', 'release', 'enqueue'] as const
      const listeners = names.map((n) => [n, () => seen.push(n)] as const)
      for (const [n, l] of listeners) pool.on(n, l)
      try {
        const a = await pool.getConnection()
        // The only connection is in use: the next checkout queues until it is released.
        const waiting = pool.getConnection()
        expect(seen).toEqual(['acquire', 'enqueue'])
        a.release()
        const b = await waiting
        expect(b).toBe(a)
        b.release()
        expect(seen).toEqual(['acquire', 'enqueue', 'release', 'acquire', 'release'])
        // A destroyed connection: the next checkout opens a new one ('connection' first).
        const c = await pool.getConnection()
        c.destroy()
        const fresh = await pool.getConnection()
        expect(fresh).not.toBe(c)
        fresh.release()
        expect(seen.slice(5)).toEqual(['acquire', 'release', 'connection', 'acquire', 'release'])
      } finally {
        for (const [n, l] of listeners) pool.off(n, l)
      }
    }
  })

  /** Checks a connection out and back in; its server-side id. */
  async function idleConnectionId(): Promise<{ id: number; client: unknown }> {
    if (d.name === 'postgres') {
      const c = await router.pool<pg.Pool>().connect()
      const { rows } = await c.query<{ conn: number }>(d.whoAmI)
      c.release()
      return { id: Number(rows[0]?.conn), client: c }
    }
    const c = await router.pool<Mysql2RouterPool>().getConnection()
    const [rows] = await c.query<Array<{ conn: number }>>(d.whoAmI)
    c.release()
    return { id: Number(rows[0]?.conn), client: c.connection }
  }

  it("an idle connection killed on the server: an 'error' listener gets the error, and the pool serves on", async () => {
    const pool = router.pool() as unknown as NodeJS.EventEmitter
    const errors: unknown[][] = []
    const listener = (...args: unknown[]) => errors.push(args)
    pool.on('error', listener)
    try {
      const { id, client } = await idleConnectionId()
      await cluster.query('primary', killSql(d, id))
      await until(() => errors.length > 0, "the pool's 'error' event")
      expect(errors[0]?.[0]).toBeInstanceOf(Error)
      if (d.name === 'postgres') {
        expect(errors[0]?.[0]).toMatchObject({ code: '57P01' })
        expect(errors[0]?.[1]).toBe(client)
      }
      const again = await idleConnectionId()
      expect(again.id).not.toBe(id)
    } finally {
      pool.off('error', listener)
    }
  })

  it("an idle connection killed on the server without an 'error' listener does not crash the process", async () => {
    const pool = router.pool() as unknown as NodeJS.EventEmitter
    expect(pool.listenerCount('error')).toBe(0)
    const uncaught: unknown[] = []
    const onUncaught = (err: unknown) => uncaught.push(err)
    process.on('uncaughtException', onUncaught)
    try {
      const { id } = await idleConnectionId()
      const lost = router.stats().nodes.find((n) => n.name === 'primary')?.pool.total
      await cluster.query('primary', killSql(d, id))
      // The pool drops the dead connection (its total falls), then a checkout opens a new one.
      await until(
        () => (router.stats().nodes.find((n) => n.name === 'primary')?.pool.total ?? 0) < (lost ?? 0),
        'the dead connection to leave the pool',
      )
      const again = await idleConnectionId()
      expect(again.id).not.toBe(id)
      expect(uncaught).toEqual([])
    } finally {
      process.off('uncaughtException', onUncaught)
    }
  })
})
