/**
 * `routemate/postgres` against a real PostgreSQL primary + 2 streaming replicas: `router.sql()` as
 * a routed postgres.js `sql` (tagged queries and their modifiers, `unsafe`, `begin`, `reserve`,
 * cursors, cancel), the read-only guarantees of its connections, and drizzle-orm/postgres-js and
 * kysely-postgres-js unchanged over it. Where a statement ran is read from the server itself
 * (`inet_server_port()`; column defaults for writes).
 */
import { eq } from 'drizzle-orm'
import { integer, pgTable, serial, text } from 'drizzle-orm/pg-core'
import { drizzle } from 'drizzle-orm/postgres-js'
import { type Generated, Kysely, sql as ksql } from 'kysely'
import { PostgresJSDialect } from 'kysely-postgres-js'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ConfigError,
  createRouter,
  QueryTimeoutError,
  ReadOnlyViolationError,
  type Router,
} from '../../src/index.js'
import { type PostgresDriver, postgresDriver } from '../../src/postgres/index.js'
import { type PgCluster, startPgCluster } from '../../src/testing/index.js'
import { expectIdle, nodeByPort } from './support/dialects.js'
import { promisesPerCall } from './support/promise-census.js'

let cluster: PgCluster
let router: Router<PostgresDriver>
let who: (port: unknown) => string

const DDL = `CREATE TABLE pjs (id serial PRIMARY KEY, v text NOT NULL, port int DEFAULT inet_server_port())`

async function rejection(p: PromiseLike<unknown>): Promise<unknown> {
  try {
    await p
  } catch (err) {
    return err
  }
  throw new Error('expected a rejection')
}

beforeAll(async () => {
  cluster = await startPgCluster({ replicas: 2 })
  who = nodeByPort(cluster)
  await cluster.query('primary', DDL)
  await cluster.waitForReplication()
  router = createRouter({
    driver: postgresDriver(),
    primary: { name: 'primary', url: cluster.primary.url },
    replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
    healthCheck: { intervalMs: 1000, timeoutMs: 800 },
    readYourWrites: false,
  })
  await router.ready()
}, 120_000)

afterAll(async () => {
  await router?.close()
  await cluster?.stop()
})

describe('router.query over postgres.js', () => {
  it('routes reads to replicas and writes to the primary, with rows, rowCount and command', async () => {
    const ports = new Set<string>()
    for (let i = 0; i < 12; i++) {
      const r = await router.readOnly(() => router.query('SELECT inet_server_port() AS port'))
      ports.add(who(r.rows[0]?.port))
    }
    expect([...ports].sort()).toEqual(['replica1', 'replica2'])
    const w = await router.query('INSERT INTO pjs (v) VALUES ($1), ($2) RETURNING port', ['q1', 'q2'])
    expect(w.rowCount).toBe(2)
    expect(w.command).toBe('INSERT')
    expect(who(w.rows[0]?.port)).toBe('primary')
    await expectIdle(router)
  })

  it('refuses a write in a readOnly scope before sending it, and the server refuses a hidden one', async () => {
    const err = await rejection(router.readOnly(() => router.query("INSERT INTO pjs (v) VALUES ('no')")))
    expect(err).toBeInstanceOf(ReadOnlyViolationError)
    const hidden = await rejection(
      router.readOnly(() =>
        router.query("WITH x AS (INSERT INTO pjs (v) VALUES ('hidden') RETURNING id) SELECT id FROM x"),
      ),
    )
    expect(hidden).toBeInstanceOf(ReadOnlyViolationError)
    expect(
      (await cluster.query('primary', "SELECT count(*)::int AS n FROM pjs WHERE v IN ('no', 'hidden')"))[0],
    ).toEqual({
      n: 0,
    })
  })

  it('bounds a statement by queryTimeoutMs with a cancel request, keeping the connection', async () => {
    const r = createRouter({
      driver: postgresDriver(),
      primary: { name: 'primary', url: cluster.primary.url, pool: { max: 1 } },
      queryTimeoutMs: 300,
      healthCheck: false,
    })
    try {
      const sql = r.sql()
      const before = await sql`select pg_backend_pid() as pid`
      const err = await rejection(sql`select pg_sleep(5)`)
      expect(err).toBeInstanceOf(QueryTimeoutError)
      const after = await r.query('SELECT pg_backend_pid() AS pid')
      expect(after.rows[0]?.pid).toBe(before[0]?.pid)
      // the same through router.query (its statements are not postgres.js Query objects)
      expect(await rejection(r.query('select pg_sleep($1)', [5]))).toBeInstanceOf(QueryTimeoutError)
      const again = await r.query('SELECT pg_backend_pid() AS pid')
      expect(again.rows[0]?.pid).toBe(before[0]?.pid)
    } finally {
      await r.close()
    }
  })

  it('reports server errors with their code, with and without postgres.js debug (which records where a query was made)', async () => {
    const err = await rejection(router.readOnly(() => router.query('SELECT 1/$1::int AS x', [0])))
    expect(err).toMatchObject({ code: '22012' })
    // no parameters: postgres.js's simple protocol, as sql.unsafe(text) sends it
    const simple = await router.readOnly(() => router.query("SELECT 'a'::text AS a"))
    expect([simple.rows, simple.rowCount, simple.command]).toEqual([[{ a: 'a' }], 1, 'SELECT'])
    const seen: string[] = []
    const r = createRouter({
      driver: postgresDriver(),
      primary: {
        name: 'primary',
        url: cluster.primary.url,
        pool: { max: 1, debug: (_id: number, text: string) => seen.push(text) },
      },
      healthCheck: false,
    })
    try {
      const ok = await r.query('SELECT $1::int + 1 AS n', [1])
      expect(ok.rows).toEqual([{ n: 2 }])
      const bad = await rejection(r.query('SELECT 1/$1::int AS x', [0]))
      expect(bad).toMatchObject({ code: '22012' })
      expect(seen).toContain('SELECT $1::int + 1 AS n')
      expect(seen).toContain('SELECT 1/$1::int AS x')
    } finally {
      await r.close()
    }
  })

  it('rejects unknown and URL-owned pool options with a ConfigError', () => {
    expect(() =>
      createRouter({ driver: postgresDriver(), primary: { url: cluster.primary.url, pool: { maxx: 2 } } }),
    ).toThrow(/did you mean "max"/)
    expect(() =>
      createRouter({ driver: postgresDriver(), primary: { url: cluster.primary.url, pool: { host: 'x' } } }),
    ).toThrow(ConfigError)
  })
})

describe('router.sql()', () => {
  it('runs tagged queries by scope, with helpers, fragments and modifiers', async () => {
    const sql = router.sql()
    const [w] = await sql`insert into pjs ${sql({ v: 't1' })} returning port`
    expect(who(w?.port)).toBe('primary')
    const r = await router.readOnly(() => sql`select inet_server_port() as port ${sql`, ${1}::int as one`}`)
    expect(who(r[0]?.port)).toMatch(/^replica/)
    expect(r[0]?.one).toBe(1)
    const values = await router.readOnly(() => sql`select 1::int as a, 2::int as b`.values())
    expect(values).toEqual([[1, 2]])
    const unsafe = await router.readOnly(() => router.sql().unsafe('select $1::int + 1 as n', [41]))
    expect(unsafe[0]?.n).toBe(42)
    const col = 'v'
    const ident = await sql`select ${sql(col)} from pjs where v = ${'t1'}`
    expect(ident[0]).toEqual({ v: 't1' })
    await expectIdle(router)
  })

  it('refuses writes through sql in a readOnly scope (guard and server), without writing', async () => {
    const sql = router.sql()
    const guard = await rejection(router.readOnly(() => sql`insert into pjs (v) values (${'ro'})`))
    expect(guard).toBeInstanceOf(ReadOnlyViolationError)
    const viaFragment = await rejection(
      router.readOnly(() => sql`${sql.unsafe('set default_transaction_read_only = off')}`),
    )
    expect(viaFragment).toBeInstanceOf(ReadOnlyViolationError)
    const multi = await rejection(
      router.readOnly(() => sql.unsafe("select 1; insert into pjs (v) values ('ro')")),
    )
    expect(multi).toBeInstanceOf(ReadOnlyViolationError)
    expect((await cluster.query('primary', "SELECT count(*)::int AS n FROM pjs WHERE v = 'ro'"))[0]).toEqual({
      n: 0,
    })
    await expectIdle(router)
  })

  it('sql.begin: a write transaction on the primary, rolled back on error; read-only on a replica in readOnly', async () => {
    const sql = router.sql()
    const pids = await sql.begin(async (tx) => {
      const [a] =
        await tx`insert into pjs (v) values ('b1') returning port, pg_backend_pid() as pid, txid_current() as x`
      const [b] = await tx`select pg_backend_pid() as pid, txid_current() as x`
      return [a, b]
    })
    expect(who(pids[0]?.port)).toBe('primary')
    expect(pids[0]?.pid).toBe(pids[1]?.pid)
    expect(pids[0]?.x).toBe(pids[1]?.x)
    const err = await rejection(
      sql.begin(async (tx) => {
        await tx`insert into pjs (v) values ('b2')`
        throw new Error('boom')
      }),
    )
    expect((err as Error).message).toBe('boom')
    expect((await cluster.query('primary', "SELECT count(*)::int AS n FROM pjs WHERE v = 'b2'"))[0]).toEqual({
      n: 0,
    })
    const ro = await router.readOnly(() =>
      sql.begin(async (tx) => {
        const [r] =
          await tx`select inet_server_port() as port, current_setting('transaction_read_only') as ro`
        return r
      }),
    )
    expect(who(ro?.port)).toMatch(/^replica/)
    expect(ro?.ro).toBe('on')
    const nested = await sql.begin(async (tx) => {
      await tx`insert into pjs (v) values ('n1')`
      await rejection(
        tx.savepoint(async (sp) => {
          await sp`insert into pjs (v) values ('n2')`
          throw new Error('inner')
        }),
      )
      return tx`select v from pjs where v in ('n1', 'n2') order by v`
    })
    expect(nested.map((r) => r.v)).toEqual(['n1'])
    await expectIdle(router)
  })

  it('sql.begin inside router.transaction is a savepoint on its connection', async () => {
    const sql = router.sql()
    const [outer, inner] = await router.transaction(async (tx) => {
      const o = await tx.query('SELECT pg_backend_pid() AS pid, txid_current() AS x')
      const i = await sql.begin(async (t) => t`select pg_backend_pid() as pid, txid_current() as x`)
      return [o.rows[0], i[0]]
    })
    expect(inner?.pid).toBe(outer?.pid)
    expect(String(inner?.x)).toBe(String(outer?.x))
  })

  it('sql.reserve checks out one connection by scope; release gives it back', async () => {
    const sql = router.sql()
    const r = await router.readOnly(() => sql.reserve())
    const [a] = await r`select inet_server_port() as port, pg_backend_pid() as pid`
    const [b] = await r`select pg_backend_pid() as pid`
    expect(who(a?.port)).toMatch(/^replica/)
    expect(b?.pid).toBe(a?.pid)
    expect(await rejection(r`delete from pjs`)).toBeInstanceOf(ReadOnlyViolationError)
    r.release()
    await expectIdle(router)
  })

  it('a query is sent when awaited (then), and catch, finally, execute() and forEach() run it as postgres.js does', async () => {
    const sql = router.sql()
    const q = router.readOnly(() => sql`select inet_server_port() as port`)
    expect((q as unknown as { executed: boolean }).executed).toBe(false) // built, not sent
    const p = q.then((rows) => who(rows[0]?.port))
    expect((q as unknown as { executed: boolean }).executed).toBe(true) // handed to the router by then
    expect(await p).toMatch(/^replica/)
    // catch and finally keep postgres.js's own (deferred) path
    const caught = await router.readOnly(() => sql`select 1/0 as x`).catch((e: { code?: string }) => e.code)
    expect(caught).toBe('22012')
    let finallyRan = false
    const f = await router
      .readOnly(() => sql`select 7::int as n`)
      .finally(() => {
        finallyRan = true
      })
    expect([f[0]?.n, finallyRan]).toEqual([7, true])
    // execute() sends before anything awaits; a modifier chained after it still applies to the rows
    const e = router.readOnly(() => sql`select 1::int as a, 2::int as b`).execute()
    expect(await e.values()).toEqual([[1, 2]])
    const each: number[] = []
    await router.readOnly(() =>
      sql`select generate_series(1, 3)::int as n`.forEach((row) => {
        each.push(row.n)
      }),
    )
    expect(each).toEqual([1, 2, 3])
    // a write awaited in a readOnly scope is refused by the guard, as before
    expect(await rejection(router.readOnly(() => sql`delete from pjs`))).toBeInstanceOf(
      ReadOnlyViolationError,
    )
    await expectIdle(router)
  })

  it('a routed read (router.sql() or router.query) makes fewer promises than the same read through raw postgres.js (each pays the promise hooks of AsyncLocalStorage)', async () => {
    const raw = postgres(cluster.replicas[0]?.url ?? '', { max: 1, onnotice: () => {} })
    const sql = router.sql()
    try {
      const rawCount = await promisesPerCall(() => raw`select ${1}::int as x`)
      const routedCount = await promisesPerCall(() => router.readOnly(() => sql`select ${1}::int as x`))
      // postgres.js's then runs an async handle() that awaits 1 before sending: 3 promises the router skips
      expect(routedCount).toBeLessThanOrEqual(rawCount - 2)
      // router.query sends its text as sql.unsafe would, without a postgres.js Query (itself a promise)
      const rawText = await promisesPerCall(() => raw.unsafe('select $1::int as x', [1]))
      const routedText = await promisesPerCall(() =>
        router.readOnly(() => router.query('select $1::int as x', [1])),
      )
      expect(routedText).toBeLessThanOrEqual(rawText - 3)
      expect(routedText).toBeLessThan(routedCount)
    } finally {
      await raw.end({ timeout: 1 })
    }
  })

  it('streams with a cursor and cancels with query.cancel()', async () => {
    const sql = router.sql()
    const seen: number[] = []
    for await (const rows of router.readOnly(() => sql`select generate_series(1, 10)::int as n`.cursor(4))) {
      seen.push(rows.length)
    }
    expect(seen).toEqual([4, 4, 2])
    const q = sql`select pg_sleep(10)`
    const p = rejection(q)
    await new Promise((r) => setTimeout(r, 300))
    await q.cancel()
    expect(await p).toMatchObject({ code: '57014' })
    await expectIdle(router)
  })
})

describe('ORMs over router.sql()', () => {
  const items = pgTable('pjs', {
    id: serial('id').primaryKey(),
    v: text('v').notNull(),
    port: integer('port'),
  })

  it('drizzle-orm/postgres-js: reads on replicas, writes and transactions on the primary', async () => {
    const db = drizzle(router.sql())
    const [ins] = await db.insert(items).values({ v: 'd1' }).returning()
    expect(who(ins?.port)).toBe('primary')
    await cluster.waitForReplication()
    const got = await router.readOnly(() => db.select().from(items).where(eq(items.v, 'd1')))
    expect(got.map((r) => r.v)).toEqual(['d1'])
    const err = await rejection(router.readOnly(() => db.insert(items).values({ v: 'd2' })))
    expect(String((err as Error).cause ?? err)).toMatch(/read-only|ReadOnly/)
    await db.transaction(async (tx) => {
      await tx.insert(items).values({ v: 'd3' })
      await tx.transaction(async (inner) => {
        await inner.insert(items).values({ v: 'd4' })
      })
    })
    const rows = await cluster.query('primary', "SELECT v, port FROM pjs WHERE v IN ('d3','d4') ORDER BY v")
    expect(rows.map((r) => [r.v, who(r.port)])).toEqual([
      ['d3', 'primary'],
      ['d4', 'primary'],
    ])
    await expectIdle(router)
  })

  it('kysely-postgres-js: reads on replicas, writes and transactions on the primary', async () => {
    interface DB {
      pjs: { id: Generated<number>; v: string; port: Generated<number | null> }
    }
    const db = new Kysely<DB>({ dialect: new PostgresJSDialect({ postgres: router.sql() }) })
    const ins = await db.insertInto('pjs').values({ v: 'k1' }).returning('port').executeTakeFirstOrThrow()
    expect(who(ins.port)).toBe('primary')
    const r = await router.readOnly(() =>
      ksql<{ port: number }>`select inet_server_port() as port`.execute(db),
    )
    expect(who(r.rows[0]?.port)).toMatch(/^replica/)
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('pjs').values({ v: 'k2' }).execute()
    })
    const rows = await cluster.query('primary', "SELECT port FROM pjs WHERE v = 'k2'")
    expect(who(rows[0]?.port)).toBe('primary')
    const err = await rejection(router.readOnly(() => db.insertInto('pjs').values({ v: 'k3' }).execute()))
    expect(err).toBeInstanceOf(ReadOnlyViolationError)
    await expectIdle(router)
  })
})
