/**
 * Type-level tests (`npx vitest run --project types`, and `npm run typecheck`, strict): a router is
 * typed by its driver. `router.pool()` is a `pg.Pool` with `pgDriver()` and a mysql2 pool with
 * `mysql2Driver()`, accepted as they are by Drizzle and Kysely; results carry the driver's fields.
 * Nothing here runs: every `expectTypeOf` and `@ts-expect-error` is checked by the compiler.
 */
import { PrismaPg } from '@prisma/adapter-pg'
import type { Prisma } from '@prisma/client/extension'
import { drizzle as drizzleMysql2 } from 'drizzle-orm/mysql2'
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres'
import { Kysely, MysqlDialect, PostgresDialect } from 'kysely'
import type { FieldPacket, Pool as Mysql2Pool, PoolConnection } from 'mysql2/promise'
import type pg from 'pg'
import { describe, expectTypeOf, it } from 'vitest'
import { useRouter } from '../../src/decorators/index.js'
import {
  createRouter,
  type Driver,
  type DriverExtrasOf,
  type DriverPoolOf,
  type QueryResult,
  Router,
  type RouterOptions,
  type ShardHandle,
  type TargetSessionAttrs,
  type Transaction,
} from '../../src/index.js'
import {
  type Mysql2Driver,
  type Mysql2ResultFields,
  type Mysql2RouterPool,
  mysql2Driver,
  type RoutedMysql2Pool,
  type RoutedMysql2PromiseConnection,
} from '../../src/mysql2/index.js'
import { RoutemateModule } from '../../src/nestjs/index.js'
import { type PgDriver, type PgResultFields, pgDriver } from '../../src/pg/index.js'
import { routemate } from '../../src/prisma/index.js'

interface DB {
  users: { id: number; name: string }
}

const pgRouter = createRouter({ driver: pgDriver(), primary: 'postgres://app@db1/app' })
const mysqlRouter = createRouter({ driver: mysql2Driver(), primary: 'mysql://app@db1/app' })

describe('the pg driver', () => {
  it('types createRouter by the driver', () => {
    expectTypeOf(pgDriver()).toEqualTypeOf<PgDriver>()
    expectTypeOf(pgRouter).toEqualTypeOf<Router<PgDriver>>()
  })

  it('types router.pool() as a pg.Pool, without annotations', () => {
    expectTypeOf(pgRouter.pool()).toEqualTypeOf<pg.Pool>()
    expectTypeOf<DriverPoolOf<PgDriver>>().toEqualTypeOf<pg.Pool>()
    // the explicit type argument of 0.1 still compiles
    expectTypeOf(pgRouter.pool<pg.Pool>()).toEqualTypeOf<pg.Pool>()
    // whatever the context expects: no type is inferred from it
    // @ts-expect-error a pg.Pool is no string
    const notString: string = pgRouter.pool()
    expectTypeOf(notString).toBeString()
  })

  it('passes router.pool() to Drizzle (node-postgres), Kysely (PostgresDialect) and Prisma as it is', () => {
    const db = drizzlePg({ client: pgRouter.pool() })
    expectTypeOf(db.$client).toEqualTypeOf<pg.Pool>()
    expectTypeOf(drizzlePg(pgRouter.pool()).$client).toEqualTypeOf<pg.Pool>()
    const kysely = new Kysely<DB>({ dialect: new PostgresDialect({ pool: pgRouter.pool() }) })
    expectTypeOf(kysely).toEqualTypeOf<Kysely<DB>>()
    expectTypeOf(new PrismaPg(pgRouter.pool(), { disposeExternalPool: true })).toEqualTypeOf<PrismaPg>()
  })

  it("routemate/prisma's extension is a Prisma client extension (what $extends takes)", () => {
    const query: Prisma.Extension['query'] = routemate(pgRouter).query
    expectTypeOf(query).not.toBeAny()
    // @ts-expect-error an extension's query hooks must be functions
    const bad: Prisma.Extension['query'] = { $allOperations: 1 }
    expectTypeOf(bad).not.toBeAny()
  })

  it("types results with pg's fields and command", async () => {
    const r = await pgRouter.query<{ id: number }>('SELECT 1 AS id')
    expectTypeOf(r.rows).toEqualTypeOf<{ id: number }[]>()
    expectTypeOf(r.rowCount).toEqualTypeOf<number | null>()
    expectTypeOf(r.fields).toEqualTypeOf<pg.FieldDef[]>()
    expectTypeOf(r.command).toEqualTypeOf<string>()
    expectTypeOf(r.oid).toEqualTypeOf<number>()
    expectTypeOf(r).toExtend<pg.QueryResult<{ id: number }>>()
    expectTypeOf<DriverExtrasOf<PgDriver>>().toEqualTypeOf<PgResultFields>()
  })

  it('types tx.query, shard handles and forEachShard the same way', async () => {
    await pgRouter.transaction(async (tx) => {
      expectTypeOf(tx).toEqualTypeOf<Transaction<PgResultFields>>()
      expectTypeOf((await tx.query('SELECT 1')).command).toEqualTypeOf<string>()
    })
    expectTypeOf(pgRouter.shard('s0')).toEqualTypeOf<ShardHandle<PgResultFields>>()
    expectTypeOf((await pgRouter.shard('s0').query('SELECT 1')).fields).toEqualTypeOf<pg.FieldDef[]>()
    const counts = await pgRouter.forEachShard(async (shard) => {
      expectTypeOf(shard).toEqualTypeOf<ShardHandle<PgResultFields>>()
      return (await shard.query<{ n: number }>('SELECT count(*)::int AS n FROM users')).rows[0]?.n
    })
    expectTypeOf(counts).toEqualTypeOf<Record<string, number | undefined>>()
  })

  it('resolves shardFor to a promise of the shard name', () => {
    expectTypeOf(pgRouter.shardFor('user-1')).toEqualTypeOf<Promise<string>>()
  })

  it('is not a mysql2 router', () => {
    // @ts-expect-error a pg.Pool is no mysql2 pool
    drizzleMysql2({ client: pgRouter.pool() })
    const r = {} as Awaited<ReturnType<typeof pgRouter.query>>
    // @ts-expect-error pg results have no typed insertId (only the untyped extras of QueryResult)
    const id: number = r.insertId
    expectTypeOf(r.insertId).toEqualTypeOf<unknown>()
    expectTypeOf(id).toEqualTypeOf<number>()
  })
})

describe('the mysql2 driver', () => {
  it('types createRouter by the driver', () => {
    expectTypeOf(mysql2Driver()).toEqualTypeOf<Mysql2Driver>()
    expectTypeOf(mysqlRouter).toEqualTypeOf<Router<Mysql2Driver>>()
  })

  it('types router.pool() as the mysql2 pool look-alike, which is a mysql2 promise Pool', () => {
    const pool = mysqlRouter.pool()
    expectTypeOf(pool).toEqualTypeOf<Mysql2RouterPool>()
    expectTypeOf(pool).toExtend<Mysql2Pool>()
    expectTypeOf(pool).toExtend<RoutedMysql2Pool>()
    expectTypeOf(pool.getConnection()).toEqualTypeOf<Promise<RoutedMysql2PromiseConnection>>()
    expectTypeOf(pool.query<{ n: number }[]>('SELECT 1 AS n')).toEqualTypeOf<
      Promise<[{ n: number }[], FieldPacket[]]>
    >()
    // the callback style Kysely uses is typed too
    expectTypeOf(pool.getConnection((_err, _conn) => {})).toEqualTypeOf<void>()
    // an explicit type argument of 0.1 still compiles (the driver's pool type is kept)
    expectTypeOf(mysqlRouter.pool<RoutedMysql2Pool>()).toEqualTypeOf<Mysql2RouterPool>()
    expectTypeOf(mysqlRouter.pool<Mysql2Pool>()).toExtend<Mysql2Pool>()
  })

  it('passes router.pool() to Drizzle (mysql2) and Kysely (MysqlDialect) as it is', () => {
    const db = drizzleMysql2({ client: mysqlRouter.pool() })
    expectTypeOf(db.$client).toEqualTypeOf<Mysql2RouterPool>()
    drizzleMysql2(mysqlRouter.pool())
    const kysely = new Kysely<DB>({ dialect: new MysqlDialect({ pool: mysqlRouter.pool() }) })
    expectTypeOf(kysely).toEqualTypeOf<Kysely<DB>>()
  })

  it('types results with insertId, affectedRows and fields', async () => {
    const w = await mysqlRouter.query('INSERT INTO users (name) VALUES (?)', ['ada'])
    expectTypeOf(w.insertId).toEqualTypeOf<number | undefined>()
    expectTypeOf(w.affectedRows).toEqualTypeOf<number | undefined>()
    expectTypeOf(w.changedRows).toEqualTypeOf<number | undefined>()
    const r = await mysqlRouter.query<{ id: number }>('SELECT 1 AS id')
    expectTypeOf(r.rows).toEqualTypeOf<{ id: number }[]>()
    expectTypeOf(r.fields).toEqualTypeOf<FieldPacket[] | undefined>()
    expectTypeOf<DriverExtrasOf<Mysql2Driver>>().toEqualTypeOf<Mysql2ResultFields>()
    await mysqlRouter.transaction(async (tx) => {
      expectTypeOf((await tx.query('DELETE FROM users')).affectedRows).toEqualTypeOf<number | undefined>()
    })
  })

  it('is not a pg router', () => {
    expectTypeOf(mysqlRouter.pool()).not.toExtend<pg.Pool>()
    // @ts-expect-error a mysql2 pool is no pg.Pool
    drizzlePg({ client: mysqlRouter.pool() })
    // @ts-expect-error nor a pool for Kysely's PostgresDialect
    new PostgresDialect({ pool: mysqlRouter.pool() })
    // @ts-expect-error no beginStatements on the driver any more (beginSql returns the statements)
    mysql2Driver().beginStatements({ readOnly: false })
  })
})

describe('custom drivers and untyped routers', () => {
  it('keeps Driver<Conn> drivers compiling: an untyped pool, no typed extras', async () => {
    const custom = {} as Driver<PoolConnection>
    const router = createRouter({ driver: custom, primary: 'mysql://app@db1/app' })
    expectTypeOf(router).toEqualTypeOf<Router<Driver<PoolConnection>>>()
    expectTypeOf(router.pool()).toEqualTypeOf<unknown>()
    expectTypeOf(await router.query<{ id: number }>('SELECT 1')).toEqualTypeOf<QueryResult<{ id: number }>>()
  })

  it('types a custom driver by its facade and result extras', async () => {
    interface MyPool {
      run(sql: string): Promise<unknown>
    }
    const custom = {} as Driver<{ id: number }, MyPool, { command: 'x' }>
    const router = createRouter({ driver: custom, primary: 'postgres://app@db1/app' })
    expectTypeOf(router.pool()).toEqualTypeOf<MyPool>()
    expectTypeOf((await router.query('SELECT 1')).command).toEqualTypeOf<'x'>()
  })

  it('lets an untyped Router, RouterOptions and the integrations take any router', () => {
    const routers: Router[] = [pgRouter, mysqlRouter]
    const untyped = routers[0] as Router
    expectTypeOf(untyped.pool()).toEqualTypeOf<unknown>()
    // as in 0.1: a plain Router's pool is typed by a type argument or by the context
    expectTypeOf(untyped.pool<pg.Pool>()).toEqualTypeOf<pg.Pool>()
    const fromContext: pg.Pool = untyped.pool()
    new Kysely<DB>({ dialect: new PostgresDialect({ pool: untyped.pool() }) })
    expectTypeOf(fromContext).toEqualTypeOf<pg.Pool>()
    expectTypeOf(useRouter).toBeCallableWith(pgRouter)
    expectTypeOf(useRouter).toBeCallableWith(mysqlRouter)
    const options: RouterOptions = { driver: pgDriver(), primary: 'postgres://app@db1/app' }
    expectTypeOf(createRouter(options)).toEqualTypeOf<Router>()
    expectTypeOf(RoutemateModule.forRoot).toBeCallableWith({
      driver: mysql2Driver(),
      primary: 'mysql://h/db',
    })
    const typed: RouterOptions<PgDriver> = { driver: pgDriver(), primary: 'postgres://app@db1/app' }
    expectTypeOf(new Router(typed).pool()).toEqualTypeOf<pg.Pool>()
    // @ts-expect-error the driver option is typed: a mysql2 driver is no PgDriver
    const wrong: RouterOptions<PgDriver> = { driver: mysql2Driver(), primary: 'mysql://h/db' }
    expectTypeOf(wrong).not.toBeNever()
  })
})

describe('a multi-host url', () => {
  it('types the router by its driver, as with primary and replicas', () => {
    const fromUrl = createRouter({
      driver: pgDriver(),
      url: 'postgres://app@db1,db2/app?target_session_attrs=read-only',
    })
    expectTypeOf(fromUrl).toEqualTypeOf<Router<PgDriver>>()
    expectTypeOf(fromUrl.pool()).toEqualTypeOf<pg.Pool>()
    expectTypeOf(
      createRouter({ driver: mysql2Driver(), url: 'mariadb://app@m1,m2/shop' }).pool(),
    ).toEqualTypeOf<Mysql2RouterPool>()
    expectTypeOf<RouterOptions['url']>().toEqualTypeOf<string | undefined>()
    expectTypeOf<TargetSessionAttrs>().toEqualTypeOf<
      'any' | 'read-write' | 'primary' | 'read-only' | 'standby' | 'prefer-standby'
    >()
  })
})
