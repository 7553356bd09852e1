/**
 * Kysely, Drizzle and Prisma 7, unchanged, over `router.pool()` against a real PostgreSQL primary
 * + 2 streaming replicas. Where every statement ran is read from the server itself: through each
 * library's raw SQL (`inet_server_port()`, `pg_backend_pid()`), and for writes from column defaults
 * (`port`, `pid`, `txid` of every row are filled in by the server that inserted it).
 *
 * Prisma's client is generated in `beforeAll` (offline: `PRISMA_SCHEMA_ENGINE_BINARY=/bin/false`)
 * from `prisma/schema.prisma` into `prisma/generated/` (gitignored); its tables are made with SQL.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { PrismaPg } from '@prisma/adapter-pg'
import { DrizzleQueryError, sql as dsql, eq } from 'drizzle-orm'
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres'
import { integer, pgTable, serial, text } from 'drizzle-orm/pg-core'
import { type Generated, Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ReadOnlyViolationError, type Router } from '../../src/index.js'
import { type PgCluster, startPgCluster } from '../../src/testing/index.js'
import { expectIdle, nodeByPort, postgres, testRouter } from './support/dialects.js'

let cluster: PgCluster
let who: (port: unknown) => string

/** Every test table: the server fills in where (port), on which connection (pid) and in which transaction (txid) a row was inserted. */
const TABLE_DDL = (name: string) =>
  `CREATE TABLE ${name} (id serial PRIMARY KEY, v text NOT NULL,
     port int DEFAULT inet_server_port(), pid int DEFAULT pg_backend_pid(), txid bigint DEFAULT txid_current())`

/** Rows of a table as the primary sees them (a one-shot connection, not through the router). */
async function onPrimary(table: string, v: string): Promise<Array<{ v: string; port: number; pid: number }>> {
  return (await cluster.query('primary', `SELECT v, port, pid FROM ${table} WHERE v LIKE $1 ORDER BY id`, [
    `${v}%`,
  ])) as Array<{ v: string; port: number; pid: number }>
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (err) {
    return err
  }
  throw new Error('expected a rejection')
}

/**
 * A write refused in a readOnly scope: our error, raised before sending (`guard`) or mapped from the
 * server's 25006 (`server`, the original error kept as `cause`). Nothing was written either way.
 */
function expectReadOnlyViolation(err: unknown, how: 'guard' | 'server'): void {
  expect(err).toBeInstanceOf(ReadOnlyViolationError)
  if (how === 'server') expect((err as Error).cause).toMatchObject({ code: '25006' })
  else expect((err as Error).cause).toBeUndefined()
}

/** drizzle-orm wraps every failed query in a `DrizzleQueryError` whose `cause` is the driver's (here: our) error. */
function expectDrizzleReadOnlyViolation(err: unknown, how: 'guard' | 'server'): void {
  expect(err).toBeInstanceOf(DrizzleQueryError)
  expectReadOnlyViolation((err as Error).cause, how)
}

/**
 * Prisma turns an adapter error that is not a pg `DatabaseError` into a
 * `PrismaClientKnownRequestError` carrying its `code` and message (the instance and `cause` are lost).
 */
function expectPrismaReadOnlyViolation(err: unknown, how: 'guard' | 'server'): void {
  expect(err).toMatchObject({ name: 'PrismaClientKnownRequestError', code: 'ROUTEMATE_READ_ONLY_VIOLATION' })
  expect((err as Error).message).toMatch(
    how === 'server'
      ? /write statement rejected by (the server on )?"replica\d"/
      : /write statement rejected in a read-only/,
  )
}

/** Counts of serving nodes. */
function tally(ports: unknown[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const p of ports) counts[who(p)] = (counts[who(p)] ?? 0) + 1
  return counts
}

beforeAll(async () => {
  cluster = await startPgCluster({ replicas: 2 })
  who = nodeByPort(cluster)
  for (const t of ['k_items', 'd_items', 'p_items']) await cluster.query('primary', TABLE_DDL(t))
  await cluster.waitForReplication()
})

afterAll(async () => {
  await cluster?.stop()
})

function newRouter(): Router {
  return testRouter(postgres, cluster)
}

// ---- Kysely --------------------------------------------------------------------------------------

describe('Kysely over router.pool() (PostgresDialect)', () => {
  interface DB {
    k_items: {
      id: Generated<number>
      v: string
      port: Generated<number>
      pid: Generated<number>
      txid: Generated<string>
    }
  }
  let router: Router
  let db: Kysely<DB>
  const whoAmI = () =>
    sql<{ port: number; pid: number }>`select inet_server_port() as port, pg_backend_pid() as pid`

  beforeAll(async () => {
    router = newRouter()
    await router.ready()
    db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: router.pool<pg.Pool>() }) })
  })

  afterEach(async () => {
    await expectIdle(router)
  })

  afterAll(async () => {
    await db?.destroy()
  })

  it('readOnly reads go to both replicas; reads outside scopes to the primary', async () => {
    const ports: unknown[] = []
    await router.readOnly(async () => {
      for (let i = 0; i < 20; i++) ports.push((await whoAmI().execute(db)).rows[0]?.port)
    })
    expect(tally(ports)).toEqual({ replica1: 10, replica2: 10 })
    const outside: unknown[] = []
    for (let i = 0; i < 5; i++) outside.push((await whoAmI().execute(db)).rows[0]?.port)
    expect(tally(outside)).toEqual({ primary: 5 })
  })

  it('builder writes go to the primary; db.transaction() runs every statement on one primary connection', async () => {
    const row = await db
      .insertInto('k_items')
      .values({ v: 'k-write' })
      .returning(['port', 'pid'])
      .executeTakeFirstOrThrow()
    expect(who(row.port)).toBe('primary')
    const seen = await db.transaction().execute(async (trx) => {
      const a = await trx.insertInto('k_items').values({ v: 'k-tx-1' }).returning(['pid', 'txid']).execute()
      const read = (await whoAmI().execute(trx)).rows[0]
      const own = await trx.selectFrom('k_items').select('v').where('v', 'like', 'k-tx-%').execute()
      const b = await trx.insertInto('k_items').values({ v: 'k-tx-2' }).returning(['pid', 'txid']).execute()
      return { a: a[0], read, own: own.map((r) => r.v), b: b[0] }
    })
    expect(who(seen.read?.port)).toBe('primary')
    expect(new Set([seen.a?.pid, seen.read?.pid, seen.b?.pid]).size).toBe(1)
    expect(seen.a?.txid).toBe(seen.b?.txid)
    expect(seen.own).toEqual(['k-tx-1']) // the read inside saw the transaction's own write
    expect((await onPrimary('k_items', 'k-tx-')).map((r) => r.v)).toEqual(['k-tx-1', 'k-tx-2'])

    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('k_items').values({ v: 'k-rolled-back' }).execute()
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    expect(await onPrimary('k_items', 'k-rolled-back')).toEqual([])
  })

  it('a db.transaction() started inside router.readOnly runs on a replica: its reads work, its write is refused', async () => {
    const seen: Array<{ port: number; pid: number } | undefined> = []
    const err = await rejection(
      router.readOnly(() =>
        db.transaction().execute(async (trx) => {
          seen.push((await whoAmI().execute(trx)).rows[0])
          await trx.selectFrom('k_items').selectAll().execute()
          seen.push((await whoAmI().execute(trx)).rows[0])
          await trx.insertInto('k_items').values({ v: 'k-ro-tx' }).execute()
        }),
      ),
    )
    expectReadOnlyViolation(err, 'guard')
    expect(who(seen[0]?.port)).toMatch(/^replica/)
    expect(seen[1]).toEqual(seen[0]) // one replica connection for the whole library transaction
    expect(await onPrimary('k_items', 'k-ro-tx')).toEqual([])
  })

  it('router.transaction({ readOnly: true }) runs library queries on one replica, BEGIN READ ONLY', async () => {
    const rows = await router.transaction(
      async () => {
        const out = []
        for (let i = 0; i < 4; i++) {
          out.push(
            (
              await sql<{
                port: number
                pid: number
                ro: string
              }>`select inet_server_port() as port, pg_backend_pid() as pid, current_setting('transaction_read_only') as ro`.execute(
                db,
              )
            ).rows[0],
          )
        }
        await db.selectFrom('k_items').selectAll().execute()
        const err = await rejection(db.insertInto('k_items').values({ v: 'k-ro' }).execute())
        expectReadOnlyViolation(err, 'guard')
        return out
      },
      { readOnly: true },
    )
    expect(new Set(rows.map((r) => `${r?.port}/${r?.pid}`)).size).toBe(1)
    expect(who(rows[0]?.port)).toMatch(/^replica/)
    expect(rows[0]?.ro).toBe('on')
  })

  it('db.transaction() inside router.transaction is a savepoint: its rollback keeps the outer transaction', async () => {
    const pids = await router.transaction(async () => {
      const outer = await db.insertInto('k_items').values({ v: 'k-outer-1' }).returning('pid').execute()
      let inner: number | undefined
      await db
        .transaction()
        .execute(async (trx) => {
          inner = (await trx.insertInto('k_items').values({ v: 'k-inner' }).returning('pid').execute())[0]
            ?.pid
          throw new Error('inner fails')
        })
        .catch(() => {})
      // Still in the outer transaction (a rolled-back savepoint, not a ROLLBACK of everything).
      const ok = await db
        .transaction()
        .execute((trx) => trx.insertInto('k_items').values({ v: 'k-outer-2' }).returning('pid').execute())
      return [outer[0]?.pid, inner, ok[0]?.pid]
    })
    expect(new Set(pids).size).toBe(1)
    expect((await onPrimary('k_items', 'k-outer')).map((r) => r.v)).toEqual(['k-outer-1', 'k-outer-2'])
    expect(await onPrimary('k_items', 'k-inner')).toEqual([])
    // ...and a committed library transaction inside a rolled-back router transaction is rolled back too.
    await router
      .transaction(async () => {
        await db
          .transaction()
          .execute((trx) => trx.insertInto('k_items').values({ v: 'k-nested-ok' }).execute())
        throw new Error('outer rolls back')
      })
      .catch(() => {})
    expect(await onPrimary('k_items', 'k-nested-ok')).toEqual([])
  })

  it('a data-modifying CTE in router.readOnly is refused by the replica and writes nothing; outside scopes it runs on the primary', async () => {
    await db.insertInto('k_items').values({ v: 'k-victim' }).execute()
    await cluster.waitForReplication()
    const del = db
      .with('x', (qb) => qb.deleteFrom('k_items').where('v', '=', 'k-victim').returning('id'))
      .selectFrom('x')
      .select((eb) => [eb.fn.countAll<string>().as('n'), sql<number>`inet_server_port()`.as('port')])
    const ins = db
      .with('x', (qb) => qb.insertInto('k_items').values({ v: 'k-cte' }).returning('port'))
      .selectFrom('x')
      .select('port')
    expectReadOnlyViolation(await rejection(router.readOnly(() => del.execute())), 'server')
    expectReadOnlyViolation(await rejection(router.readOnly(() => ins.execute())), 'server')
    expect((await onPrimary('k_items', 'k-victim')).length).toBe(1)
    expect(await onPrimary('k_items', 'k-cte')).toEqual([])

    const deleted = await del.executeTakeFirstOrThrow()
    expect({ n: Number(deleted.n), node: who(deleted.port) }).toEqual({ n: 1, node: 'primary' })
    expect(who((await ins.executeTakeFirstOrThrow()).port)).toBe('primary')
    expect(await onPrimary('k_items', 'k-victim')).toEqual([])
    expect((await onPrimary('k_items', 'k-cte')).map((r) => who(r.port))).toEqual(['primary'])
  })

  it('db.destroy() ends the pool, which closes the router', async () => {
    await db.destroy()
    expect(router.closed).toBe(true)
  })
})

// ---- Drizzle -------------------------------------------------------------------------------------

describe('Drizzle over router.pool() (drizzle-orm/node-postgres)', () => {
  const items = pgTable('d_items', {
    id: serial('id').primaryKey(),
    v: text('v').notNull(),
    port: integer('port'),
    pid: integer('pid'),
  })
  let router: Router
  let pool: pg.Pool
  let db: NodePgDatabase & { $client: pg.Pool }
  const whoAmI = async (q: { execute: typeof db.execute }) =>
    (
      await q.execute<{ port: number; pid: number }>(
        dsql`select inet_server_port() as port, pg_backend_pid() as pid`,
      )
    ).rows[0]

  beforeAll(async () => {
    router = newRouter()
    await router.ready()
    pool = router.pool<pg.Pool>()
    db = drizzle({ client: pool })
  })

  afterEach(async () => {
    await expectIdle(router)
  })

  afterAll(async () => {
    await router?.close()
  })

  it('the facade passes drizzle-orm’s `instanceof Pool` check (so its transactions take one client)', () => {
    expect(pool).toBeInstanceOf(pg.Pool)
    expect(db.$client).toBe(pool)
  })

  it('readOnly reads go to both replicas; reads outside scopes to the primary', async () => {
    const ports: unknown[] = []
    await router.readOnly(async () => {
      for (let i = 0; i < 20; i++) ports.push((await whoAmI(db))?.port)
      // the query builder too
      await db.select().from(items).where(eq(items.v, 'none'))
    })
    expect(tally(ports)).toEqual({ replica1: 10, replica2: 10 })
    const outside: unknown[] = []
    for (let i = 0; i < 5; i++) outside.push((await whoAmI(db))?.port)
    expect(tally(outside)).toEqual({ primary: 5 })
  })

  it('builder writes go to the primary; db.transaction() runs every statement on one primary connection', async () => {
    const [row] = await db.insert(items).values({ v: 'd-write' }).returning({ port: items.port })
    expect(who(row?.port)).toBe('primary')
    const seen = await db.transaction(async (tx) => {
      const [a] = await tx.insert(items).values({ v: 'd-tx-1' }).returning({ pid: items.pid })
      const read = await whoAmI(tx)
      const own = await tx.select({ v: items.v }).from(items).where(eq(items.v, 'd-tx-1'))
      const [b] = await tx.insert(items).values({ v: 'd-tx-2' }).returning({ pid: items.pid })
      return { a, read, own: own.map((r) => r.v), b }
    })
    expect(who(seen.read?.port)).toBe('primary')
    expect(new Set([seen.a?.pid, seen.read?.pid, seen.b?.pid]).size).toBe(1)
    expect(seen.own).toEqual(['d-tx-1'])
    expect((await onPrimary('d_items', 'd-tx-')).map((r) => r.v)).toEqual(['d-tx-1', 'd-tx-2'])

    // Drizzle's own nested transaction is a savepoint of its transaction.
    await db.transaction(async (tx) => {
      await tx.insert(items).values({ v: 'd-sp-kept' })
      await tx
        .transaction(async (inner) => {
          await inner.insert(items).values({ v: 'd-sp-dropped' })
          throw new Error('inner fails')
        })
        .catch(() => {})
    })
    expect((await onPrimary('d_items', 'd-sp-')).map((r) => r.v)).toEqual(['d-sp-kept'])
  })

  it('a db.transaction() started inside router.readOnly runs on a replica: its reads work, its write is refused', async () => {
    const seen: Array<{ port: number; pid: number } | undefined> = []
    const err = await rejection(
      router.readOnly(() =>
        db.transaction(async (tx) => {
          seen.push(await whoAmI(tx))
          await tx.select().from(items)
          seen.push(await whoAmI(tx))
          await tx.insert(items).values({ v: 'd-ro-tx' })
        }),
      ),
    )
    // drizzle-orm wraps a failed query in DrizzleQueryError; ours is its cause.
    expectDrizzleReadOnlyViolation(err, 'guard')
    expect(who(seen[0]?.port)).toMatch(/^replica/)
    expect(seen[1]).toEqual(seen[0])
    expect(await onPrimary('d_items', 'd-ro-tx')).toEqual([])
  })

  it('router.transaction({ readOnly: true }) runs library queries on one replica, BEGIN READ ONLY', async () => {
    const rows = await router.transaction(
      async () => {
        const out = []
        for (let i = 0; i < 4; i++) {
          const { rows } = await db.execute<{ port: number; pid: number; ro: string }>(
            dsql`select inet_server_port() as port, pg_backend_pid() as pid, current_setting('transaction_read_only') as ro`,
          )
          out.push(rows[0])
        }
        await db.select().from(items)
        return out
      },
      { readOnly: true },
    )
    expect(new Set(rows.map((r) => `${r?.port}/${r?.pid}`)).size).toBe(1)
    expect(who(rows[0]?.port)).toMatch(/^replica/)
    expect(rows[0]?.ro).toBe('on')
  })

  it('db.transaction() inside router.transaction is a savepoint: its rollback keeps the outer transaction', async () => {
    const pids = await router.transaction(async () => {
      const [outer] = await db.insert(items).values({ v: 'd-outer-1' }).returning({ pid: items.pid })
      let inner: number | null | undefined
      await db
        .transaction(async (tx) => {
          inner = (await tx.insert(items).values({ v: 'd-inner' }).returning({ pid: items.pid }))[0]?.pid
          throw new Error('inner fails')
        })
        .catch(() => {})
      const [ok] = await db.transaction((tx) =>
        tx.insert(items).values({ v: 'd-outer-2' }).returning({ pid: items.pid }),
      )
      return [outer?.pid, inner, ok?.pid]
    })
    expect(new Set(pids).size).toBe(1)
    expect((await onPrimary('d_items', 'd-outer')).map((r) => r.v)).toEqual(['d-outer-1', 'd-outer-2'])
    expect(await onPrimary('d_items', 'd-inner')).toEqual([])
  })

  it('a data-modifying CTE in router.readOnly is refused by the replica and writes nothing; outside scopes it runs on the primary', async () => {
    await db.insert(items).values({ v: 'd-victim' })
    await cluster.waitForReplication()
    const del = () => {
      const x = db.$with('x').as(db.delete(items).where(eq(items.v, 'd-victim')).returning({ id: items.id }))
      return db
        .with(x)
        .select({ n: dsql<number>`count(*)::int`, port: dsql<number>`inet_server_port()` })
        .from(x)
    }
    const ins = () => {
      const x = db.$with('x').as(db.insert(items).values({ v: 'd-cte' }).returning({ port: items.port }))
      return db.with(x).select({ port: x.port }).from(x)
    }
    for (const q of [del, ins]) {
      const err = await rejection(router.readOnly(async () => await q()))
      expectDrizzleReadOnlyViolation(err, 'server')
    }
    expect((await onPrimary('d_items', 'd-victim')).length).toBe(1)
    expect(await onPrimary('d_items', 'd-cte')).toEqual([])

    const [deleted] = await del()
    expect({ n: deleted?.n, node: who(deleted?.port) }).toEqual({ n: 1, node: 'primary' })
    expect(who((await ins())[0]?.port)).toBe('primary')
    expect(await onPrimary('d_items', 'd-victim')).toEqual([])
    expect((await onPrimary('d_items', 'd-cte')).map((r) => who(r.port))).toEqual(['primary'])
    // a raw one through db.execute, too
    const err = await rejection(
      router.readOnly(async () => {
        await db.execute(
          dsql`with x as (delete from d_items where v = ${'d-cte'} returning id) select id from x`,
        )
      }),
    )
    expectDrizzleReadOnlyViolation(err, 'server')
    expect((await onPrimary('d_items', 'd-cte')).length).toBe(1)
  })

  // KNOWN GAP (see the report for the src/ fix): drizzle's query builders are lazy thenables that
  // run only when `then` is called. Returned un-awaited from a router.readOnly / router.transaction
  // callback, `then` is called by the caller's `await`, outside the scope: the query runs on the
  // primary, outside the transaction. Awaiting inside the callback (as every test above does) is
  // correct today. These two pass once the router starts a returned thenable inside its scope.
  it('a lazy query returned from router.readOnly(() => q) runs on a replica', async () => {
    const { rows } = await router.readOnly(() =>
      db.execute<{ port: number }>(dsql`select inet_server_port() as port`),
    )
    expect(who(rows[0]?.port)).toMatch(/^replica/)
  })

  it('a lazy query returned from router.transaction(() => q) runs in the transaction', async () => {
    const { rows } = await router.transaction(
      () => db.execute<{ ro: string }>(dsql`select current_setting('transaction_read_only') as ro`),
      { readOnly: true },
    )
    expect(rows[0]?.ro).toBe('on')
  })

  it('$client.end() closes the router', async () => {
    await db.$client.end()
    expect(router.closed).toBe(true)
  })
})

// ---- Prisma 7 ------------------------------------------------------------------------------------

/** What the tests use of the generated client (generated at run time, so not imported statically). */
interface PrismaItem {
  id: number
  v: string
  port: number | null
  pid: number | null
}
interface PrismaItems {
  create(args: { data: { v: string }; select?: { port: true; pid: true } }): Promise<PrismaItem>
  findMany(args?: { where?: { v?: string | { startsWith: string } } }): Promise<PrismaItem[]>
}
interface PrismaTx {
  item: PrismaItems
  $queryRaw<T = unknown>(query: TemplateStringsArray, ...values: unknown[]): Promise<T>
}
interface PrismaDb extends PrismaTx {
  $transaction<T>(fn: (tx: PrismaTx) => Promise<T>): Promise<T>
  $disconnect(): Promise<void>
}
type PrismaClientCtor = new (options: { adapter: PrismaPg }) => PrismaDb

const prismaDir = fileURLToPath(new URL('./prisma/', import.meta.url))

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

describe('Prisma 7 over router.pool() (@prisma/adapter-pg)', () => {
  let router: Router
  let prisma: PrismaDb
  type Who = Array<{ port: number; pid: number }>
  const whoAmI = async (q: PrismaTx) =>
    (await q.$queryRaw<Who>`select inet_server_port() as port, pg_backend_pid() as pid`)[0]

  beforeAll(async () => {
    const PrismaClient = await generatePrismaClient()
    router = newRouter()
    await router.ready()
    // The adapter keeps a pg.Pool instance as its external pool; disposeExternalPool: $disconnect() ends it.
    const adapter = new PrismaPg(router.pool<pg.Pool>(), { disposeExternalPool: true })
    prisma = new PrismaClient({ adapter })
  })

  afterEach(async () => {
    await expectIdle(router)
  })

  afterAll(async () => {
    await prisma?.$disconnect()
    await router?.close()
  })

  it('readOnly reads go to both replicas; reads outside scopes to the primary', async () => {
    const ports: unknown[] = []
    await router.readOnly(async () => {
      for (let i = 0; i < 20; i++) ports.push((await whoAmI(prisma))?.port)
      await prisma.item.findMany({ where: { v: 'none' } })
    })
    expect(tally(ports)).toEqual({ replica1: 10, replica2: 10 })
    const outside: unknown[] = []
    for (let i = 0; i < 5; i++) outside.push((await whoAmI(prisma))?.port)
    expect(tally(outside)).toEqual({ primary: 5 })
  })

  it('create() goes to the primary; $transaction(fn) runs every statement on one primary connection', async () => {
    const row = await prisma.item.create({ data: { v: 'p-write' } })
    expect(who(row.port)).toBe('primary')
    const seen = await prisma.$transaction(async (tx) => {
      const a = await tx.item.create({ data: { v: 'p-tx-1' } })
      const read = await whoAmI(tx)
      const own = await tx.item.findMany({ where: { v: { startsWith: 'p-tx-' } } })
      const b = await tx.item.create({ data: { v: 'p-tx-2' } })
      return { a, read, own: own.map((r) => r.v), b }
    })
    expect(who(seen.read?.port)).toBe('primary')
    expect(new Set([seen.a.pid, seen.read?.pid, seen.b.pid]).size).toBe(1)
    expect(seen.own).toEqual(['p-tx-1'])
    expect((await onPrimary('p_items', 'p-tx-')).map((r) => r.v)).toEqual(['p-tx-1', 'p-tx-2'])

    await expect(
      prisma.$transaction(async (tx) => {
        await tx.item.create({ data: { v: 'p-rolled-back' } })
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    expect(await onPrimary('p_items', 'p-rolled-back')).toEqual([])
  })

  it('a $transaction(fn) started inside router.readOnly runs on a replica: its reads work, its write is refused', async () => {
    const seen: Array<{ port: number; pid: number } | undefined> = []
    const err = await rejection(
      router.readOnly(() =>
        prisma.$transaction(async (tx) => {
          seen.push(await whoAmI(tx))
          await tx.item.findMany()
          seen.push(await whoAmI(tx))
          await tx.item.create({ data: { v: 'p-ro-tx' } })
        }),
      ),
    )
    expectPrismaReadOnlyViolation(err, 'guard')
    expect(who(seen[0]?.port)).toMatch(/^replica/)
    expect(seen[1]).toEqual(seen[0])
    expect(await onPrimary('p_items', 'p-ro-tx')).toEqual([])
  })

  it('router.transaction({ readOnly: true }) runs Prisma queries on one replica, BEGIN READ ONLY', async () => {
    const rows = await router.transaction(
      async () => {
        const out = []
        for (let i = 0; i < 4; i++) {
          const [r] = await prisma.$queryRaw<
            Array<{ port: number; pid: number; ro: string }>
          >`select inet_server_port() as port, pg_backend_pid() as pid, current_setting('transaction_read_only') as ro`
          out.push(r)
        }
        await prisma.item.findMany()
        expectPrismaReadOnlyViolation(await rejection(prisma.item.create({ data: { v: 'p-ro' } })), 'guard')
        return out
      },
      { readOnly: true },
    )
    expect(new Set(rows.map((r) => `${r?.port}/${r?.pid}`)).size).toBe(1)
    expect(who(rows[0]?.port)).toMatch(/^replica/)
    expect(rows[0]?.ro).toBe('on')
  })

  it('$transaction(fn) inside router.transaction is a savepoint: its rollback keeps the outer transaction', async () => {
    const pids = await router.transaction(async () => {
      const outer = await prisma.item.create({ data: { v: 'p-outer-1' } })
      let inner: number | null | undefined
      await prisma
        .$transaction(async (tx) => {
          inner = (await tx.item.create({ data: { v: 'p-inner' } })).pid
          throw new Error('inner fails')
        })
        .catch(() => {})
      const ok = await prisma.$transaction((tx) => tx.item.create({ data: { v: 'p-outer-2' } }))
      return [outer.pid, inner, ok.pid]
    })
    expect(new Set(pids).size).toBe(1)
    expect((await onPrimary('p_items', 'p-outer')).map((r) => r.v)).toEqual(['p-outer-1', 'p-outer-2'])
    expect(await onPrimary('p_items', 'p-inner')).toEqual([])
  })

  it('a data-modifying CTE ($queryRaw) in router.readOnly is refused by the replica and writes nothing; outside scopes it runs on the primary', async () => {
    await prisma.item.create({ data: { v: 'p-victim' } })
    await cluster.waitForReplication()
    const del = () =>
      prisma.$queryRaw<Array<{ n: number; port: number }>>`
        with x as (delete from p_items where v = ${'p-victim'} returning id)
        select count(*)::int as n, inet_server_port() as port from x`
    const ins = () =>
      prisma.$queryRaw<Array<{ port: number }>>`
        with x as (insert into p_items (v) values (${'p-cte'}) returning port) select port from x`
    expectPrismaReadOnlyViolation(await rejection(router.readOnly(async () => await del())), 'server')
    expectPrismaReadOnlyViolation(await rejection(router.readOnly(async () => await ins())), 'server')
    expect((await onPrimary('p_items', 'p-victim')).length).toBe(1)
    expect(await onPrimary('p_items', 'p-cte')).toEqual([])

    const [deleted] = await del()
    expect({ n: deleted?.n, node: who(deleted?.port) }).toEqual({ n: 1, node: 'primary' })
    expect(who((await ins())[0]?.port)).toBe('primary')
    expect(await onPrimary('p_items', 'p-victim')).toEqual([])
    expect((await onPrimary('p_items', 'p-cte')).map((r) => who(r.port))).toEqual(['primary'])
  })

  // KNOWN GAP, as for drizzle: a PrismaPromise is lazy (it runs when `then` is called), so one
  // returned un-awaited from a router.readOnly / router.transaction callback runs outside the scope.
  it('a lazy query returned from router.readOnly(() => q) runs on a replica', async () => {
    const rows = await router.readOnly(() => prisma.$queryRaw<Who>`select inet_server_port() as port`)
    expect(who(rows[0]?.port)).toMatch(/^replica/)
  })

  it('a lazy query returned from router.transaction(() => q) runs in the transaction', async () => {
    const rows = await router.transaction(
      () => prisma.$queryRaw<Array<{ ro: string }>>`select current_setting('transaction_read_only') as ro`,
      { readOnly: true },
    )
    expect(rows[0]?.ro).toBe('on')
  })

  it('$disconnect() with disposeExternalPool ends the pool, which closes the router', async () => {
    await prisma.$disconnect()
    expect(router.closed).toBe(true)
  })
})
