/**
 * Read/write splitting against a real primary + 2 streaming replicas: where each kind of statement
 * lands is read from the server itself (its port), never from the router's own bookkeeping.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { PrimaryUnavailableError, ReadOnlyViolationError, type Router } from '../../src/index.js'
import {
  type DialectCase,
  dialectsFor,
  expectIdle,
  nodeByPort,
  type TestCluster,
  testRouter,
} from './support/dialects.js'

describe.each(dialectsFor('routing'))('routing ($name)', (d: DialectCase) => {
  let cluster: TestCluster
  let router: Router
  let who: (port: unknown) => string
  const p = d.param

  beforeAll(async () => {
    cluster = await d.start(2)
    who = nodeByPort(cluster)
    router = testRouter(d, cluster)
    await router.ready()
    for (const sql of d.setup('items')) await router.query(sql)
    await cluster.waitForReplication()
  })

  afterEach(async () => {
    await expectIdle(router)
  })

  afterAll(async () => {
    await router?.close()
    await cluster?.stop()
  })

  const whoAmI = async (): Promise<{ node: string; conn: string }> => {
    const { rows } = await router.query<{ port: number; conn: number }>(d.whoAmI)
    return { node: who(rows[0]?.port), conn: String(rows[0]?.conn) }
  }

  it('sends unscoped statements, reads included, to the primary', async () => {
    for (let i = 0; i < 20; i++) expect((await whoAmI()).node).toBe('primary')
    const r = await router.query(`INSERT INTO items (v) VALUES (${p(1)})`, ['unscoped'])
    expect(r.rowCount).toBe(1)
  })

  it('sends readOnly reads to the replicas, both of them, with exact round-robin shares over 10,000 reads', async () => {
    const counts: Record<string, number> = {}
    await router.readOnly(async () => {
      for (let i = 0; i < 10_000; i++) {
        const { node } = await whoAmI()
        counts[node] = (counts[node] ?? 0) + 1
      }
    })
    expect(Object.keys(counts).sort()).toEqual(['replica1', 'replica2'])
    const share = (counts.replica1 ?? 0) / 10_000
    expect(Math.abs(share - 0.5)).toBeLessThanOrEqual(0.01)
  })

  it('a custom balancer picks every read, and its observe() hears of each one with its duration', async () => {
    const seen: Array<{ node: string; ms: number; ok: boolean }> = []
    const r = testRouter(d, cluster, {
      balancer: {
        name: 'last-replica',
        pick: (candidates) => candidates[candidates.length - 1]!,
        observe: (node, ms, ok) => seen.push({ node: node.name, ms, ok }),
      },
    })
    try {
      await r.ready()
      const served: string[] = []
      for (let i = 0; i < 50; i++) {
        const { rows } = await r.readOnly(() => r.query<{ port: number }>(d.whoAmI))
        served.push(who(rows[0]?.port))
      }
      await r.query('SELECT 1') // the primary: not the balancer's pick, not observed
      expect(new Set(served)).toEqual(new Set(['replica2']))
      expect(seen).toHaveLength(50)
      expect(seen.every((o) => o.node === 'replica2' && o.ok && o.ms >= 0 && o.ms < 5000)).toBe(true)
      expect(r.stats().nodes.find((n) => n.name === 'replica2')?.latencyMs).toBeGreaterThan(0)
    } finally {
      await r.close()
    }
  })

  it('sends writes to the primary and a primary scope to the primary', async () => {
    const before = router.stats().nodes.find((n) => n.name === 'primary')?.queries ?? 0
    await router.query(`INSERT INTO items (v) VALUES (${p(1)})`, ['w'])
    expect(router.stats().nodes.find((n) => n.name === 'primary')?.queries).toBe(before + 1)
    await router.readOnly(() =>
      router.primary(async () => {
        expect((await whoAmI()).node).toBe('primary')
      }),
    )
  })

  it('rejects an evident write in a readOnly scope before sending it, and writes nothing', async () => {
    const { rows: before } = await router.query<{ n: number | string }>('SELECT count(*) AS n FROM items')
    const queriesBefore = router.stats().nodes.reduce((s, n) => s + n.queries + n.errors, 0)
    await expect(
      router.readOnly(() => router.query(`INSERT INTO items (v) VALUES (${p(1)})`, ['nope'])),
    ).rejects.toBeInstanceOf(ReadOnlyViolationError)
    expect(router.stats().nodes.reduce((s, n) => s + n.queries + n.errors, 0)).toBe(queriesBefore)
    const { rows: after } = await router.query<{ n: number | string }>('SELECT count(*) AS n FROM items')
    expect(Number(after[0]?.n)).toBe(Number(before[0]?.n))
  })

  it('maps a hidden write refused by the replica to ReadOnlyViolationError with the server error as cause', async () => {
    const err = await router.readOnly(() => router.query(d.hiddenWrite('items'))).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ReadOnlyViolationError)
    expect(d.isReadOnlyServerError((err as Error).cause)).toBe(true)
  })

  it('runs every statement of a transaction on one primary connection and commits', async () => {
    const seen = new Set<string>()
    await router.transaction(async (tx) => {
      for (let i = 0; i < 5; i++) {
        const { rows } = await tx.query<{ port: number; conn: number }>(d.whoAmI)
        seen.add(`${who(rows[0]?.port)}/${rows[0]?.conn}`)
        const viaRouter = await whoAmI() // router.query inside the callback uses the same connection
        seen.add(`${viaRouter.node}/${viaRouter.conn}`)
      }
      await tx.query(`INSERT INTO items (v) VALUES (${p(1)})`, ['tx'])
    })
    expect([...seen]).toHaveLength(1)
    expect([...seen][0]).toMatch(/^primary\//)
    const { rows } = await router.query<{ n: number | string }>(
      `SELECT count(*) AS n FROM items WHERE v = ${p(1)}`,
      ['tx'],
    )
    expect(Number(rows[0]?.n)).toBe(1)
  })

  it('rolls back when the callback throws', async () => {
    await expect(
      router.transaction(async (tx) => {
        await tx.query(`INSERT INTO items (v) VALUES (${p(1)})`, ['rolled-back'])
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    const { rows } = await router.query<{ n: number | string }>(
      `SELECT count(*) AS n FROM items WHERE v = ${p(1)}`,
      ['rolled-back'],
    )
    expect(Number(rows[0]?.n)).toBe(0)
  })

  it('runs a readOnly transaction on one replica, read-only, and rejects writes in it', async () => {
    const seen = new Set<string>()
    await router.transaction(
      async (tx) => {
        expect(tx.readOnly).toBe(true)
        for (let i = 0; i < 4; i++) {
          const { node, conn } = await whoAmI()
          seen.add(`${node}/${conn}`)
        }
        await expect(tx.query(d.hiddenWrite('items'))).rejects.toBeInstanceOf(ReadOnlyViolationError)
      },
      { readOnly: true },
    )
    expect(seen.size).toBe(1)
    expect([...seen][0]).toMatch(/^replica[12]\//)
  })

  it('a transaction inside a readOnly scope is read-only by default', async () => {
    await router.readOnly(() =>
      router.transaction(async (tx) => {
        expect(tx.readOnly).toBe(true)
        expect((await whoAmI()).node).toMatch(/^replica/)
      }),
    )
  })

  it('the outermost transaction wins: readOnly scopes and readOnly transactions nested in a write transaction stay on its connection', async () => {
    await router.transaction(async (tx) => {
      const outer = await whoAmI()
      await router.readOnly(async () => {
        expect(await whoAmI()).toEqual(outer)
        await router.transaction(
          async () => {
            expect(await whoAmI()).toEqual(outer)
          },
          { readOnly: true },
        )
      })
      expect(outer.node).toBe('primary')
      await tx.query(`INSERT INTO items (v) VALUES (${p(1)})`, ['outer-wins'])
    })
  })

  it('turns a nested transaction into a savepoint: an inner failure rolls back only the inner work', async () => {
    await router.transaction(async (tx) => {
      await tx.query(`INSERT INTO items (v) VALUES (${p(1)})`, ['sp-outer'])
      await expect(
        router.transaction(async (inner) => {
          await inner.query(`INSERT INTO items (v) VALUES (${p(1)})`, ['sp-inner'])
          throw new Error('inner failure')
        }),
      ).rejects.toThrow('inner failure')
      await router.transaction(async (inner) => {
        await inner.query(`INSERT INTO items (v) VALUES (${p(1)})`, ['sp-inner-ok'])
      })
    })
    const { rows } = await router.query<{ v: string }>(
      `SELECT v FROM items WHERE v IN (${p(1)}, ${p(2)}, ${p(3)}) ORDER BY v`,
      ['sp-outer', 'sp-inner', 'sp-inner-ok'],
    )
    expect(rows.map((r) => r.v)).toEqual(['sp-inner-ok', 'sp-outer'])
  })

  it('passes statement errors through untouched, with the caller in the stack', async () => {
    const err = (await router.query('SELECT * FROM no_such_table').catch((e: unknown) => e)) as Error
    expect(err).not.toBeInstanceOf(PrimaryUnavailableError)
    expect(err.message).toMatch(/no_such_table/)
    expect(err.stack).toContain('routing.test.ts')
    expect(router.stats().nodes.find((n) => n.name === 'primary')?.state).toBe('up')
  })

  it('passes read errors through untouched too, with the caller in the stack', async () => {
    const err = (await router
      .readOnly(() => router.query('SELECT * FROM no_such_table_either'))
      .catch((e: unknown) => e)) as Error
    expect(err.message).toMatch(/no_such_table_either/)
    expect(err.stack).toContain('routing.test.ts')
    expect(router.stats().nodes.every((n) => n.state === 'up')).toBe(true)
  })

  it('classify: true sends proven reads outside scopes to replicas, everything else to the primary', async () => {
    const r = testRouter(d, cluster, { classify: { writeFunctions: ['audit_touch'] } })
    try {
      await r.ready()
      await r.query(`INSERT INTO items (v) VALUES (${p(1)})`, ['for-classify'])
      await cluster.waitForReplication()
      const at = async (sql: string) => who((await r.query<{ port: number }>(sql)).rows[0]?.port)
      // (MySQL @@variables are session state to the classifier: read the port another way.)
      const port =
        d.dialect === 'postgres'
          ? 'inet_server_port()'
          : "(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME = 'PORT')"
      expect(await at(`SELECT ${port} AS port`)).toMatch(/^replica/)
      expect(await at(`/* a comment */ SELECT ${port} AS port FROM items LIMIT 1`)).toMatch(/^replica/)
      expect(await at(`SELECT ${port} AS port FROM items LIMIT 1 FOR UPDATE`)).toBe('primary')
      expect(await at(`SELECT ${port} AS port, 'FOR UPDATE' AS s`)).toMatch(/^replica/)
      expect(await r.primary(() => at(`SELECT ${port} AS port`))).toBe('primary')
      const ins = await r.query(`INSERT INTO items (v) VALUES (${p(1)})`, ['classified'])
      expect(ins.rowCount).toBe(1)
      // A classified read that goes to the primary (all replicas unusable) still runs read-only there.
      await expectIdle(r)
    } finally {
      await r.close()
    }
  })

  it('reports every node up with its role and no password in stats()', async () => {
    const stats = router.stats()
    expect(stats.nodes.map((n) => [n.name, n.role, n.state])).toEqual([
      ['primary', 'primary', 'up'],
      ['replica1', 'replica', 'up'],
      ['replica2', 'replica', 'up'],
    ])
    expect(JSON.stringify(stats)).not.toContain('app-secret')
    expect(stats.clusters[0]?.candidates).toEqual(['replica1', 'replica2'])
  })
})
