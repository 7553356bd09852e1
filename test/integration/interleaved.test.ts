/**
 * 10,000 concurrent scopes of every kind, interleaved on one router: no statement ever leaves its
 * scope's rule. A write that reached a standby would fail with the server's read-only error, so
 * there must be none; every committed write must be on the primary; every read in a readOnly scope
 * must be served by a replica; every transaction must stay on one connection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Router } from '../../src/index.js'
import {
  type DialectCase,
  dialects,
  expectIdle,
  nodeByPort,
  type TestCluster,
  testRouter,
} from './support/dialects.js'

describe.each(dialects)('10,000 interleaved scopes ($name)', (d: DialectCase) => {
  let cluster: TestCluster
  let router: Router
  let who: (port: unknown) => string
  const p = d.param

  beforeAll(async () => {
    cluster = await d.start(2)
    who = nodeByPort(cluster)
    router = testRouter(d, cluster, { pool: d.poolMax(8) })
    await router.ready()
    for (const sql of d.setup('interleaved')) await router.query(sql)
    await cluster.waitForReplication()
  })

  afterAll(async () => {
    await router?.close()
    await cluster?.stop()
  })

  it('routes every statement by its own scope', async () => {
    const violations: string[] = []
    const serverReadOnlyErrors: unknown[] = []
    const otherErrors: unknown[] = []
    let writes = 0
    const whoAmI = async () => {
      const { rows } = await router.query<{ port: number; conn: number }>(d.whoAmI)
      return `${who(rows[0]?.port)}/${rows[0]?.conn}`
    }
    const kinds = [
      async () => {
        // read in a readOnly scope -> a replica
        const at = await router.readOnly(whoAmI)
        if (!at.startsWith('replica')) violations.push(`readOnly read on ${at}`)
      },
      async () => {
        // unscoped write -> the primary
        await router.query(`INSERT INTO interleaved (v) VALUES (${p(1)})`, ['plain'])
        writes++
      },
      async () => {
        // write transaction: one primary connection throughout
        const seen = new Set<string>()
        await router.transaction(async (tx) => {
          seen.add(await whoAmI())
          await tx.query(`INSERT INTO interleaved (v) VALUES (${p(1)})`, ['tx'])
          seen.add(await router.readOnly(whoAmI)) // nested readOnly: still the transaction's connection
        })
        writes++
        if (seen.size !== 1 || ![...seen][0]?.startsWith('primary/')) violations.push(`tx on ${[...seen]}`)
      },
      async () => {
        // readOnly transaction: one replica connection throughout
        const seen = new Set<string>()
        await router.transaction(
          async () => {
            seen.add(await whoAmI())
            seen.add(await whoAmI())
          },
          { readOnly: true },
        )
        if (seen.size !== 1 || !([...seen][0] ?? '').startsWith('replica'))
          violations.push(`ro tx on ${[...seen]}`)
      },
      async () => {
        // primary scope inside readOnly -> primary
        const at = await router.readOnly(() => router.primary(whoAmI))
        if (!at.startsWith('primary/')) violations.push(`primary scope on ${at}`)
      },
      async () => {
        // readOnly scope inside an async chain started in a write scope: the inner scope wins
        await router.primary(async () => {
          const at = await router.readOnly(whoAmI)
          if (!at.startsWith('replica')) violations.push(`nested readOnly on ${at}`)
          await router.query(`INSERT INTO interleaved (v) VALUES (${p(1)})`, ['after-nested'])
          writes++
        })
      },
    ]
    let next = 0
    const total = 10_000
    const worker = async () => {
      while (next < total) {
        const i = next++
        const kind = kinds[(i * 7919) % kinds.length] as () => Promise<void>
        try {
          await kind()
        } catch (err) {
          if (d.isReadOnlyServerError(err) || d.isReadOnlyServerError((err as Error).cause))
            serverReadOnlyErrors.push(err)
          else otherErrors.push(err)
        }
      }
    }
    await Promise.all(Array.from({ length: 64 }, worker))
    console.log(
      `[${d.name}] 10,000 interleaved scopes: ${writes} writes, ${violations.length} violations, ` +
        `${serverReadOnlyErrors.length} read-only errors, ${otherErrors.length} other errors`,
    )
    expect(violations).toEqual([])
    expect(serverReadOnlyErrors).toEqual([])
    expect(otherErrors).toEqual([])
    const { rows } = await router.query<{ n: number | string }>('SELECT count(*) AS n FROM interleaved')
    expect(Number(rows[0]?.n)).toBe(writes)
    await expectIdle(router)
  })
})
