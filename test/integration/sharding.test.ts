/**
 * Sharding on real clusters, over every driver (conformance suite `sharding`): two shards, each a
 * primary + 1 replica. Where a row lives and which server answered is read from the servers
 * themselves.
 */
import type pg from 'pg'
import { Kysely, MysqlDialect, PostgresDialect } from 'kysely'
import { PostgresJSDialect } from 'kysely-postgres-js'
import type { Sql } from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CrossShardError,
  createRouter,
  type Router,
  ShardKeyRequiredError,
  ShardQueryError,
  UnknownShardError,
} from '../../src/index.js'
import type { Mysql2RouterPool } from '../../src/mysql2/index.js'
import {
  type DialectCase,
  dialectsFor,
  expectIdle,
  stateOf,
  type TestCluster,
  waitFor,
} from './support/dialects.js'

const HC = { intervalMs: 500, timeoutMs: 450, failureThreshold: 2, successThreshold: 1, maxBackoffMs: 1000 }

type Mails = { mails: { id: number; user_id: string; subject: string | null } }

/** Kysely over `router.pool()`, for the drivers Kysely has a dialect for (the mariadb connector has none). */
function kyselyOver(d: DialectCase, router: Router): Kysely<Mails> | undefined {
  switch (d.name) {
    case 'postgres':
      return new Kysely<Mails>({ dialect: new PostgresDialect({ pool: router.pool<pg.Pool>() }) })
    case 'mariadb':
      return new Kysely<Mails>({ dialect: new MysqlDialect({ pool: router.pool<Mysql2RouterPool>() }) })
    case 'postgres.js':
      return new Kysely<Mails>({ dialect: new PostgresJSDialect({ postgres: router.pool<Sql>() }) })
    default:
      return undefined
  }
}

/** The rows of what a facade connection's `query` returned (pg `{ rows }`, mysql2 `[rows, fields]`, or rows). */
function rowsOf(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result))
    return (Array.isArray(result[0]) ? result[0] : result) as Record<string, unknown>[]
  return (result as { rows: Record<string, unknown>[] }).rows
}

describe.each(dialectsFor('sharding'))(
  'sharding ($name, two shards of primary + 1 replica)',
  (d: DialectCase) => {
    let s0: TestCluster
    let s1: TestCluster
    let router: Router
    const portOwner = new Map<number, string>()
    const p = d.param
    const ddl =
      d.dialect === 'postgres'
        ? 'CREATE TABLE mails (id serial PRIMARY KEY, user_id bigint NOT NULL, subject text)'
        : 'CREATE TABLE mails (id INT AUTO_INCREMENT PRIMARY KEY, user_id BIGINT NOT NULL, subject TEXT)'

    beforeAll(async () => {
      // Both started together; if one fails, the other is stopped (not left running by the failed hook).
      const started = await Promise.allSettled([d.start(1), d.start(1)])
      const failed = started.find((r) => r.status === 'rejected')
      if (failed !== undefined) {
        await Promise.all(started.map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)))
        throw failed.reason
      }
      ;[s0, s1] = started.map((r) => (r as PromiseFulfilledResult<TestCluster>).value) as [
        TestCluster,
        TestCluster,
      ]
      for (const [shard, c] of [
        ['s0', s0],
        ['s1', s1],
      ] as const) {
        portOwner.set(c.primary.port, `${shard}.primary`)
        portOwner.set(c.replicas[0]!.port, `${shard}.replica1`)
        await c.query(c.primary.name, ddl)
        await c.waitForReplication()
      }
      router = createRouter({
        driver: d.driver(),
        shards: {
          s0: { primary: s0.primary.url, replicas: [s0.replicas[0]!.url] },
          s1: { primary: s1.primary.url, replicas: [s1.replicas[0]!.url] },
        },
        sharding: { strategy: 'java-hashcode' },
        healthCheck: HC,
      })
      await router.ready()
    })

    afterAll(async () => {
      await router?.close()
      await Promise.all([s0?.stop(), s1?.stop()])
    })

    const where = async () => {
      const { rows } = await router.query<{ port: number }>(d.whoAmI)
      return portOwner.get(Number(rows[0]?.port))
    }

    /** A statement through a connection checked out of `router.pool()` by the caller's scope. */
    const viaPool = async (sql: string) => {
      const conn = await d.checkout(router)
      try {
        return rowsOf(await conn.query(sql))
      } finally {
        conn.release()
      }
    }
    const poolWhere = async () => portOwner.get(Number((await viaPool(d.whoAmI))[0]?.port))

    it('maps keys with Java semantics: Math.floorMod(Long.hashCode(id), 2)', async () => {
      // Long.hashCode(n) = (int)(n ^ (n >>> 32)): for small non-negative ids, the id itself.
      expect(await router.shardFor(10)).toBe('s0')
      expect(await router.shardFor(11)).toBe('s1')
      expect(await router.shardFor('polygenelubricants')).toBe('s0') // hashCode = Integer.MIN_VALUE
    })

    it('writes under withShard(key) land only on that shard; reads in readOnly hit that shard’s replica', async () => {
      for (let userId = 1; userId <= 20; userId++) {
        await router.withShard(userId, async () => {
          await router.query(`INSERT INTO mails (user_id, subject) VALUES (${p(1)}, ${p(2)})`, [
            userId,
            `hello ${userId}`,
          ])
          expect(await where()).toBe(`${await router.shardFor(userId)}.primary`)
        })
      }
      await Promise.all([s0.waitForReplication(), s1.waitForReplication()])
      const ids = async (c: TestCluster) =>
        (await c.query(c.primary.name, 'SELECT user_id FROM mails ORDER BY user_id')).map((r) =>
          Number((r as { user_id: unknown }).user_id),
        )
      expect(await ids(s0)).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18, 20])
      expect(await ids(s1)).toEqual([1, 3, 5, 7, 9, 11, 13, 15, 17, 19])
      for (const userId of [4, 7]) {
        await router.withShard(userId, () =>
          router.readOnly(async () => {
            expect(await where()).toBe(`${await router.shardFor(userId)}.replica1`)
            const { rows } = await router.query(`SELECT subject FROM mails WHERE user_id = ${p(1)}`, [userId])
            expect(rows).toEqual([{ subject: `hello ${userId}` }])
          }),
        )
      }
    })

    it('nests with transaction and primary; a transaction cannot span shards', async () => {
      await router.withShard(2, () =>
        router.transaction(async (tx) => {
          await tx.query(`INSERT INTO mails (user_id, subject) VALUES (2, ${p(1)})`, ['in tx'])
          expect(await where()).toBe('s0.primary')
          await router.withShard(4, async () => expect(await where()).toBe('s0.primary')) // same shard: fine
          await expect(router.withShard(3, () => where())).rejects.toBeInstanceOf(CrossShardError)
        }),
      )
      await router.withShard(3, () =>
        router.readOnly(() => router.primary(async () => expect(await where()).toBe('s1.primary'))),
      )
    })

    it('refuses statements with no shard in scope, and unknown shards', async () => {
      await expect(router.query('SELECT 1')).rejects.toBeInstanceOf(ShardKeyRequiredError)
      await expect(router.transaction(async () => 1)).rejects.toBeInstanceOf(ShardKeyRequiredError)
      expect(() => router.shard('s9')).toThrow(UnknownShardError)
    })

    it('shard(name), forEachShard and queryAllShards', async () => {
      // The replicas are read below: let them replay the previous test's INSERT first.
      await Promise.all([s0.waitForReplication(), s1.waitForReplication()])
      expect(await router.shard('s1').readOnly(() => where())).toBe('s1.replica1')
      const counts = await router.forEachShard(async (shard) => {
        const { rows } = await shard.query<{ n: unknown }>('SELECT count(*) AS n FROM mails')
        return Number(rows[0]?.n)
      })
      expect(counts).toEqual({ s0: 11, s1: 10 })
      const all = await router.readOnly(() =>
        router.queryAllShards<{ user_id: unknown; port: number }>(
          `SELECT user_id, ${d.dialect === 'postgres' ? 'inet_server_port()' : '@@port'} AS port FROM mails`,
        ),
      )
      expect(all.errors).toEqual([])
      expect(all.rows).toHaveLength(21)
      for (const { shard, row } of all.rows) {
        expect(portOwner.get(Number(row.port))).toBe(`${shard}.replica1`)
      }
    })

    it('forEachShard runs fn inside each shard’s scope: router.query, router.pool() and Kysely reach that shard', async () => {
      // Not destroyed: destroying Kysely ends router.pool(), which closes the router.
      const db = kyselyOver(d, router)
      for (const concurrency of [1, 2]) {
        const seen = await router.forEachShard(
          async (shard) => {
            const viaRouter = await where()
            const viaFacade = await poolWhere()
            const viaReplica = await router.readOnly(() => where())
            const mails =
              db === undefined
                ? Number((await viaPool('SELECT count(*) AS n FROM mails'))[0]?.n)
                : Number(
                    (await db.selectFrom('mails').select(db.fn.countAll<string>().as('n')).executeTakeFirst())
                      ?.n,
                  )
            return { name: shard.name, viaRouter, viaFacade, viaReplica, mails }
          },
          { concurrency },
        )
        expect(seen).toEqual({
          s0: {
            name: 's0',
            viaRouter: 's0.primary',
            viaFacade: 's0.primary',
            viaReplica: 's0.replica1',
            mails: 11,
          },
          s1: {
            name: 's1',
            viaRouter: 's1.primary',
            viaFacade: 's1.primary',
            viaReplica: 's1.replica1',
            mails: 10,
          },
        })
      }
      // the scope ends with fn: outside it, a statement has no shard again
      await expect(router.query('SELECT 1')).rejects.toBeInstanceOf(ShardKeyRequiredError)
    })

    it('router.pool() routes by the caller’s shard scope', async () => {
      expect(await router.withShard(7, poolWhere)).toBe('s1.primary')
      expect(await router.withShard(8, () => router.readOnly(poolWhere))).toBe('s0.replica1')
      await expect(viaPool('SELECT 1')).rejects.toBeInstanceOf(ShardKeyRequiredError)
    })

    it('a shard’s replica killed: that shard falls back to its primary, the other shard is unaffected', async () => {
      const fallbacks: string[] = []
      const off = router.on('fallback', (e) => fallbacks.push(e.cluster))
      await s0.kill('replica1')
      try {
        await waitFor(() => stateOf(router, 's0.replica1') === 'down', 3000, 's0 replica down')
        expect(await router.shard('s0').readOnly(() => where())).toBe('s0.primary')
        expect(await router.shard('s1').readOnly(() => where())).toBe('s1.replica1')
        expect(fallbacks).toEqual(['s0'])
      } finally {
        off()
        await s0.restart('replica1')
      }
      await waitFor(() => stateOf(router, 's0.replica1') === 'up', 10_000, 's0 replica back')
    })

    it('queryAllShards with one shard down: fail names the shard; partial returns the others and the error', async () => {
      await Promise.all([s1.kill('replica1'), s1.kill('primary')])
      try {
        await waitFor(
          () => stateOf(router, 's1.primary') === 'down' && stateOf(router, 's1.replica1') === 'down',
          3000,
          's1 down',
        )
        const err = await router
          .readOnly(() => router.queryAllShards('SELECT user_id FROM mails'))
          .catch((e: unknown) => e)
        expect(err).toBeInstanceOf(ShardQueryError)
        expect((err as ShardQueryError).shard).toBe('s1')
        expect((err as Error).message).toContain('s1')
        const partial = await router.readOnly(() =>
          router.queryAllShards<{ user_id: unknown }>('SELECT user_id FROM mails', [], {
            onError: 'partial',
          }),
        )
        expect(partial.rows.map((r) => r.shard)).toEqual(Array(11).fill('s0'))
        expect(partial.errors.map((e) => e.shard)).toEqual(['s1'])
      } finally {
        await s1.restart('primary')
        await s1.restart('replica1')
      }
      await waitFor(() => stateOf(router, 's1.primary') === 'up', 10_000, 's1 back')
      await expectIdle(router)
    })
  },
)
