/**
 * TypeORM 0.3 and Sequelize 6, unchanged, over the driver-module look-alikes `routedPg(router)`
 * (`routemate/pg`) and `routedMysql2(router)` (`routemate/mysql2`), against real clusters: a
 * PostgreSQL primary + 2 streaming replicas, and a MariaDB primary + 2 GTID replicas. Where every
 * statement ran is read from the server: reads through the ORM's raw SQL (`whoAmI`: the server's
 * port and the connection's id), writes from column defaults (`port`, `conn` and, on PostgreSQL,
 * `txid` of every row are filled in by the server and connection that inserted it).
 */
import { QueryTypes, type Sequelize as SequelizeType } from 'sequelize'
import { DataSource, EntitySchema } from 'typeorm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ReadOnlyViolationError, type Router } from '../../src/index.js'
import type { MariaDbCluster } from '../../src/testing/index.js'
import { type Mysql2Driver, routedMysql2 } from '../../src/mysql2/index.js'
import { type PgDriver, routedPg } from '../../src/pg/index.js'
import {
  type DialectCase,
  dialects,
  expectIdle,
  LIVENESS_MS,
  mariadb,
  nodeByPort,
  postgres,
  sleep,
  type TestCluster,
  testRouter,
  waitFor,
} from './support/dialects.js'

const { Sequelize, DataTypes } = await import('sequelize')

interface Item {
  id: number
  v: string
  port: number
  conn: number
  txid: string | null
}

/** Per dialect: the table's DDL (server-filled `port`, `conn`, `txid`), and how each ORM is set up. */
interface OrmCase {
  readonly d: DialectCase
  ddl(table: string): string
  typeorm(router: Router): DataSource
  sequelize(router: Router): SequelizeType
}

const pgCase: OrmCase = {
  d: postgres,
  ddl: (t) =>
    `CREATE TABLE ${t} (id serial PRIMARY KEY, v text NOT NULL,
       port int DEFAULT inet_server_port(), conn int DEFAULT pg_backend_pid(), txid bigint DEFAULT txid_current())`,
  typeorm: (router) =>
    new DataSource({
      type: 'postgres',
      driver: routedPg(router as Router<PgDriver>),
      entities: [itemSchema('to_items')],
      synchronize: false,
    }),
  sequelize: (router) =>
    new Sequelize({
      dialect: 'postgres',
      dialectModule: routedPg(router as Router<PgDriver>),
      logging: false,
      pool: { max: 8 },
    }),
}

const mariaCase: OrmCase = {
  d: mariadb,
  // MariaDB: CONNECTION_ID() as a column default is not allowed; a trigger fills port and conn.
  ddl: (t) =>
    `CREATE TABLE ${t} (id INT AUTO_INCREMENT PRIMARY KEY, v TEXT NOT NULL, port INT, conn BIGINT, txid TEXT)`,
  typeorm: (router) =>
    new DataSource({
      type: 'mariadb',
      driver: routedMysql2(router as Router<Mysql2Driver>),
      connectorPackage: 'mysql2',
      entities: [itemSchema('to_items')],
      synchronize: false,
    }),
  sequelize: (router) =>
    new Sequelize({
      dialect: 'mysql',
      dialectModule: routedMysql2(router as Router<Mysql2Driver>),
      logging: false,
      pool: { max: 8 },
    }),
}

/** The MariaDB trigger that records where a row was inserted (made as root: triggers need SUPER with binary logging). */
function mariaTrigger(t: string): string {
  return `CREATE TRIGGER ${t}_where BEFORE INSERT ON ${t} FOR EACH ROW SET NEW.port = @@port, NEW.conn = CONNECTION_ID()`
}

function itemSchema(table: string) {
  return new EntitySchema<Item>({
    name: 'Item',
    tableName: table,
    columns: {
      id: { type: Number, primary: true, generated: true },
      v: { type: String },
      port: { type: Number, nullable: true, insert: false, update: false },
      conn: { type: Number, nullable: true, insert: false, update: false },
      txid: { type: String, nullable: true, insert: false, update: false },
    },
  })
}

function defineItem(sequelize: SequelizeType) {
  return sequelize.define(
    'Item',
    {
      v: DataTypes.TEXT,
      port: DataTypes.INTEGER,
      conn: DataTypes.BIGINT,
      txid: DataTypes.TEXT,
    },
    { tableName: 'sq_items', timestamps: false },
  )
}

describe.each([pgCase, mariaCase].filter((o) => dialects.includes(o.d)))(
  'TypeORM and Sequelize over the driver look-alike ($d.name)',
  (o) => {
    const d = o.d
    let cluster: TestCluster
    let router: Router
    let who: (port: unknown) => string
    let ds: DataSource
    let sq: SequelizeType
    let SqItem: ReturnType<typeof defineItem>

    /** Waits until both replicas are read candidates (probed up, not lagging): the claims are about routing, not catch-up. */
    async function replicasUsable(): Promise<void> {
      await waitFor(
        () => router.stats().nodes.filter((n) => n.role === 'replica' && n.usable).length === 2,
        LIVENESS_MS,
        'both replicas usable',
      )
    }

    /** How many rows with value `v` a connection outside the caller's transaction sees on the primary. */
    async function committed(table: string, v: string): Promise<number> {
      const r = await router.primary(() =>
        router.query(`SELECT count(*) AS n FROM ${table} WHERE v = ${d.param(1)}`, [v]),
      )
      return Number((r.rows[0] as { n: unknown }).n)
    }

    /** Rows as the primary sees them. */
    async function rows(table: string, prefix: string): Promise<Item[]> {
      const r = await router.primary(() =>
        router.query(`SELECT id, v, port, conn, txid FROM ${table} WHERE v LIKE ${d.param(1)} ORDER BY id`, [
          `${prefix}%`,
        ]),
      )
      return r.rows as unknown as Item[]
    }

    beforeAll(async () => {
      cluster = await d.start(2)
      who = nodeByPort(cluster)
      // Probes get room on a loaded machine: a replica marked down by a slow probe is not what these tests are about.
      router = testRouter(d, cluster, {
        healthCheck: {
          intervalMs: 1000,
          timeoutMs: 900,
          failureThreshold: 2,
          successThreshold: 1,
          maxBackoffMs: 2000,
        },
      })
      await router.ready()
      for (const t of ['to_items', 'sq_items']) {
        await router.query(o.ddl(t))
        if (d.name === 'mariadb')
          await (cluster as MariaDbCluster).query('primary', mariaTrigger(t), [], { superuser: true })
      }
      await cluster.waitForReplication()
      ds = o.typeorm(router)
      await ds.initialize()
      sq = o.sequelize(router)
      SqItem = defineItem(sq)
    })

    afterAll(async () => {
      if (ds?.isInitialized) await ds.destroy()
      await sq?.close()
      await router?.close()
      await cluster?.stop()
    })

    describe('TypeORM', () => {
      it('reads in router.readOnly land on replicas; outside any scope on the primary', async () => {
        await replicasUsable()
        const inRead = await Promise.all(
          Array.from({ length: 12 }, () => router.readOnly(() => ds.query(d.whoAmI))),
        )
        const readNodes = new Set(inRead.map((r) => who((r as Array<{ port: unknown }>)[0]?.port)))
        expect([...readNodes].sort()).toEqual(['replica1', 'replica2'])
        const outside = (await ds.query(d.whoAmI)) as Array<{ port: unknown }>
        expect(who(outside[0]?.port)).toBe('primary')
        // A repository read in readOnly: served by a replica (it sees the replicated rows).
        await ds.getRepository<Item>('Item').save({ v: 'to-read' })
        await cluster.waitForReplication()
        const found = await router.readOnly(() => ds.getRepository<Item>('Item').findBy({ v: 'to-read' }))
        expect(found.map((i) => i.v)).toEqual(['to-read'])
      })

      it('writes go to the primary', async () => {
        const repo = ds.getRepository<Item>('Item')
        await repo.save({ v: 'to-w1' })
        await repo.insert({ v: 'to-w2' })
        const r = await rows('to_items', 'to-w')
        expect(r.map((i) => [i.v, who(i.port)])).toEqual([
          ['to-w1', 'primary'],
          ['to-w2', 'primary'],
        ])
      })

      it('dataSource.transaction runs on one primary connection, in one transaction; a rollback undoes it', async () => {
        const seen = await ds.transaction(async (m) => {
          await m.getRepository<Item>('Item').save({ v: 'to-tx-a' })
          const hidden = await committed('to_items', 'to-tx-a') // not committed yet: one open transaction
          const mid = (await m.query(d.whoAmI)) as Array<{ port: unknown; conn: unknown }>
          await m.getRepository<Item>('Item').save({ v: 'to-tx-b' })
          return { conn: mid[0]?.conn, hidden }
        })
        expect(seen.hidden).toBe(0)
        const r = await rows('to_items', 'to-tx-')
        expect(r.map((i) => i.v)).toEqual(['to-tx-a', 'to-tx-b'])
        expect(new Set(r.map((i) => who(i.port)))).toEqual(new Set(['primary']))
        expect(new Set(r.map((i) => Number(i.conn)))).toEqual(new Set([Number(seen.conn)]))
        expect(new Set(r.map((i) => i.txid)).size).toBe(1)
        if (d.name === 'postgres') expect(r[0]?.txid).not.toBeNull()

        await expect(
          ds.transaction(async (m) => {
            await m.getRepository<Item>('Item').save({ v: 'to-rb' })
            throw new Error('undo')
          }),
        ).rejects.toThrow('undo')
        expect(await rows('to_items', 'to-rb')).toEqual([])
      })

      it('a QueryRunner transaction (with an isolation level) stays on one primary connection', async () => {
        const qr = ds.createQueryRunner()
        await qr.connect()
        await qr.startTransaction('SERIALIZABLE')
        await qr.manager.getRepository<Item>('Item').insert({ v: 'to-qr-1' })
        expect(await committed('to_items', 'to-qr-1')).toBe(0)
        await qr.manager.getRepository<Item>('Item').insert({ v: 'to-qr-2' })
        await qr.commitTransaction()
        await qr.release()
        const r = await rows('to_items', 'to-qr-')
        expect(r.map((i) => who(i.port))).toEqual(['primary', 'primary'])
        expect(new Set(r.map((i) => `${i.conn}/${i.txid}`)).size).toBe(1)
        await expectIdle(router)
      })

      it('a write in router.readOnly is refused (ReadOnlyViolationError), nothing written', async () => {
        const err = await router
          .readOnly(() => ds.getRepository<Item>('Item').insert({ v: 'to-ro' }))
          .then(
            () => undefined,
            (e: unknown) => e,
          )
        expect((err as { driverError?: unknown }).driverError).toBeInstanceOf(ReadOnlyViolationError)
        expect(await rows('to_items', 'to-ro')).toEqual([])
      })

      it("inside router.transaction, TypeORM's statements and its own transaction run on the router's transaction", async () => {
        const conn = await router.transaction(async (tx) => {
          await ds.getRepository<Item>('Item').save({ v: 'to-rt-1' })
          await ds.transaction((m) => m.getRepository<Item>('Item').save({ v: 'to-rt-2' })) // a savepoint
          const r = await tx.query(d.whoAmI)
          return (r.rows[0] as { conn: unknown }).conn
        })
        const r = await rows('to_items', 'to-rt-')
        expect(r.map((i) => i.v)).toEqual(['to-rt-1', 'to-rt-2'])
        expect(new Set(r.map((i) => `${who(i.port)}/${i.conn}/${i.txid}`))).toEqual(
          new Set([`primary/${conn}/${r[0]?.txid}`]),
        )
        await expectIdle(router)
      })
    })

    describe('Sequelize', () => {
      it('reads in router.readOnly land on replicas; outside any scope on the primary', async () => {
        await replicasUsable()
        const inRead = await Promise.all(
          Array.from({ length: 12 }, () =>
            router.readOnly(() => sq.query(d.whoAmI, { type: QueryTypes.SELECT, plain: true })),
          ),
        )
        const readNodes = new Set(inRead.map((r) => who((r as { port: unknown }).port)))
        expect([...readNodes].sort()).toEqual(['replica1', 'replica2'])
        const outside = (await sq.query(d.whoAmI, { type: QueryTypes.SELECT, plain: true })) as {
          port: unknown
        }
        expect(who(outside.port)).toBe('primary')
        await SqItem.create({ v: 'sq-read' })
        await cluster.waitForReplication()
        const found = await router.readOnly(() => SqItem.findAll({ where: { v: 'sq-read' } }))
        expect(found.map((i) => i.get('v'))).toEqual(['sq-read'])
      })

      it('writes go to the primary', async () => {
        await SqItem.create({ v: 'sq-w1' })
        await SqItem.bulkCreate([{ v: 'sq-w2' }, { v: 'sq-w3' }])
        const r = await rows('sq_items', 'sq-w')
        expect(r.map((i) => who(i.port))).toEqual(['primary', 'primary', 'primary'])
      })

      it('sequelize.transaction runs on one primary connection, in one transaction; a rollback undoes it', async () => {
        const hidden = await sq.transaction({ isolationLevel: 'REPEATABLE READ' as never }, async (t) => {
          await SqItem.create({ v: 'sq-tx-a' }, { transaction: t })
          const n = await committed('sq_items', 'sq-tx-a') // not committed yet: one open transaction
          await SqItem.create({ v: 'sq-tx-b' }, { transaction: t })
          return n
        })
        expect(hidden).toBe(0)
        const r = await rows('sq_items', 'sq-tx-')
        expect(r.map((i) => i.v)).toEqual(['sq-tx-a', 'sq-tx-b'])
        expect(r.map((i) => who(i.port))).toEqual(['primary', 'primary'])
        expect(new Set(r.map((i) => `${i.conn}/${i.txid}`)).size).toBe(1)
        if (d.name === 'postgres') expect(r[0]?.txid).not.toBeNull()

        await expect(
          sq.transaction(async (t) => {
            await SqItem.create({ v: 'sq-rb' }, { transaction: t })
            throw new Error('undo')
          }),
        ).rejects.toThrow('undo')
        expect(await rows('sq_items', 'sq-rb')).toEqual([])
        await expectIdle(router)
      })
    })

    it('kill -9 of a replica under 32 concurrent readers (16 TypeORM, 16 Sequelize): 0 failed reads', async () => {
      let running = true
      const failures: unknown[] = []
      const served: Record<string, number> = {}
      let afterKill = 0
      let killed = false
      const reader = async (orm: 'typeorm' | 'sequelize') => {
        while (running) {
          try {
            const row =
              orm === 'typeorm'
                ? ((await router.readOnly(() => ds.query(d.whoAmI))) as Array<{ port: unknown }>)[0]
                : ((await router.readOnly(() =>
                    sq.query(d.whoAmI, { type: QueryTypes.SELECT, plain: true }),
                  )) as {
                    port: unknown
                  })
            const node = who(row?.port)
            served[node] = (served[node] ?? 0) + 1
            if (killed) afterKill++
          } catch (err) {
            failures.push(err)
          }
        }
      }
      await replicasUsable()
      const readers = [
        ...Array.from({ length: 16 }, () => reader('typeorm')),
        ...Array.from({ length: 16 }, () => reader('sequelize')),
      ]
      try {
        await sleep(300)
        await cluster.kill('replica1')
        killed = true
        await waitFor(
          () => router.stats().nodes.find((n) => n.name === 'replica1')?.state === 'down',
          LIVENESS_MS,
          'replica1 down',
        )
        const mark = afterKill
        await waitFor(() => afterKill >= mark + 200, LIVENESS_MS, '200 more reads after replica1 went down')
      } finally {
        running = false
        await Promise.all(readers)
      }
      console.log(
        `[${d.name}] TypeORM+Sequelize readers, kill -9 replica1: ${failures.length} failed reads; served ${JSON.stringify(served)}`,
      )
      expect(failures).toEqual([])
      expect(served.replica2).toBeGreaterThan(0)
      expect(served.primary ?? 0).toBe(0)
    })

    it('closing the ORMs gives every connection back (the router stays open)', async () => {
      await ds.destroy()
      await sq.close()
      await expectIdle(router)
      const r = await router.query(d.whoAmI)
      expect(who((r.rows[0] as { port: unknown }).port)).toBe('primary')
    })
  },
)
