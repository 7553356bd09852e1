/**
 * `routemate/prisma` against a real PostgreSQL primary + 2 streaming replicas, with Prisma 7 and
 * `@prisma/adapter-pg` over `router.pool()`. Prisma batches the `findUnique` calls of one tick into
 * one query run in the async context of the first caller; the extension keeps each call in its own
 * caller's scope and batches only calls whose scopes agree.
 *
 * Where a read ran is read from the server: the view `p_served` returns `inet_server_port()` of the
 * server that served it. How many statements ran is counted by `router.onQuery`.
 */
import { PrismaPg } from '@prisma/adapter-pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Router } from '../../src/index.js'
import { routemate } from '../../src/prisma/index.js'
import { type PgCluster, startPgCluster } from '../../src/testing/index.js'
import { expectIdle, nodeByPort, postgres, testRouter } from './support/dialects.js'
import { generatePrismaClient } from './support/prisma-client.js'

/** What the tests use of the generated client (generated at run time, so not imported statically). */
interface Served {
  id: number
  v: string
  port: number
}
interface Client {
  served: {
    findUnique(args: { where: { id: number } }): Promise<Served | null>
    findMany(): Promise<Served[]>
  }
  item: { create(args: { data: { v: string } }): Promise<{ id: number }> }
  $transaction<T extends unknown[]>(ops: [...T]): Promise<{ [K in keyof T]: Awaited<T[K]> }>
  $extends(ext: unknown): Client
  $disconnect(): Promise<void>
}
type ClientCtor = new (options: { adapter: PrismaPg }) => Client

/** Tries per scenario. */
const N = 25

let cluster: PgCluster
let who: (port: unknown) => string
let router: Router
let base: Client
let prisma: Client
/** Nodes that ran each statement, in order (`router.onQuery`). */
let statements: string[] = []

beforeAll(async () => {
  cluster = await startPgCluster({ replicas: 2 })
  who = nodeByPort(cluster)
  await cluster.query(
    'primary',
    `CREATE TABLE p_items (id serial PRIMARY KEY, v text NOT NULL,
       port int DEFAULT inet_server_port(), pid int DEFAULT pg_backend_pid())`,
  )
  await cluster.query(
    'primary',
    'CREATE VIEW p_served AS SELECT id, v, inet_server_port() AS port FROM p_items',
  )
  await cluster.query('primary', `INSERT INTO p_items (v) SELECT 'seed-' || g FROM generate_series(1, 20) g`)
  await cluster.waitForReplication()
  const { PrismaClient } = await generatePrismaClient<{ PrismaClient: ClientCtor }>('prisma')
  router = testRouter(postgres, cluster)
  await router.ready()
  router.onQuery((o) => statements.push(o.node))
  base = new PrismaClient({ adapter: new PrismaPg(router.pool()) })
  prisma = base.$extends(routemate(router))
  await base.served.findMany() // starts the engine
})

afterEach(async () => {
  statements = []
  await expectIdle(router)
})

afterAll(async () => {
  await base?.$disconnect()
  await router?.close()
  await cluster?.stop()
})

/** Issues a readOnly and a primary findUnique in the same tick (`readFirst`: which first); the nodes that served them. */
async function sameTick(client: Client, readFirst: boolean): Promise<{ read: string; primary: string }> {
  const read = () => router.readOnly(() => client.served.findUnique({ where: { id: 1 } }))
  const primary = () => router.primary(() => client.served.findUnique({ where: { id: 2 } }))
  const [r, p] = readFirst
    ? await Promise.all([read(), primary()])
    : await Promise.all([primary(), read()]).then(([p, r]) => [r, p])
  return { read: who(r?.port), primary: who(p?.port) }
}

describe('without the extension (the problem it solves)', () => {
  it('a primary() findUnique issued in the same tick as a readOnly() one is batched with it and served by a replica', async () => {
    let misrouted = 0
    for (let i = 0; i < N; i++) if ((await sameTick(base, true)).primary !== 'primary') misrouted++
    expect(misrouted).toBe(N)
  })
})

describe('prisma.$extends(routemate(router))', () => {
  it('a primary() findUnique issued in the same tick as readOnly() ones is served by the primary, N of N, either order', async () => {
    const served: string[] = []
    for (let i = 0; i < N; i++) {
      for (const readFirst of [true, false]) {
        const s = await sameTick(prisma, readFirst)
        served.push(`${s.read.replace(/\d$/, '')}/${s.primary}`)
      }
    }
    expect(served).toEqual(Array(2 * N).fill('replica/primary'))
  })

  it('findUnique calls of one scope are still batched: 10 in one tick are one statement', async () => {
    const rows = await router.readOnly(() =>
      Promise.all(Array.from({ length: 10 }, (_, i) => prisma.served.findUnique({ where: { id: i + 1 } }))),
    )
    expect(rows.map((r) => r?.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    expect(new Set(rows.map((r) => r?.port)).size).toBe(1)
    expect(who(rows[0]?.port)).toMatch(/^replica/)
    expect(statements.length).toBe(1)
  })

  it('separate scope calls that route alike share a batch; two scopes in one tick make two statements', async () => {
    const reads: Array<Promise<Served | null>> = []
    const primaries: Array<Promise<Served | null>> = []
    for (let i = 1; i <= 5; i++) {
      reads.push(router.readOnly(() => prisma.served.findUnique({ where: { id: i } })))
      primaries.push(router.primary(() => prisma.served.findUnique({ where: { id: i + 5 } })))
    }
    const r = await Promise.all(reads)
    const p = await Promise.all(primaries)
    expect(r.map((x) => x?.id)).toEqual([1, 2, 3, 4, 5])
    expect(p.map((x) => x?.id)).toEqual([6, 7, 8, 9, 10])
    expect(new Set(r.map((x) => who(x?.port)))).toEqual(new Set([statements.find((n) => n !== 'primary')]))
    expect(new Set(p.map((x) => who(x?.port)))).toEqual(new Set(['primary']))
    expect(statements.length).toBe(2)
  })

  it('readOnly findUnique reads keep going to both replicas', async () => {
    const ports: string[] = []
    for (let i = 0; i < 20; i++) {
      ports.push(who((await router.readOnly(() => prisma.served.findUnique({ where: { id: 1 } })))?.port))
    }
    expect(new Set(ports)).toEqual(new Set(['replica1', 'replica2']))
  })

  it('$transaction([...]) of findUniques in primary() in the same tick as readOnly() reads runs on the primary', async () => {
    for (let i = 0; i < 5; i++) {
      const [read, tx] = await Promise.all([
        router.readOnly(() => prisma.served.findUnique({ where: { id: 1 } })),
        router.primary(() =>
          prisma.$transaction([
            prisma.served.findUnique({ where: { id: 2 } }),
            prisma.served.findUnique({ where: { id: 3 } }),
          ]),
        ),
      ])
      expect(who(read?.port)).toMatch(/^replica/)
      expect(tx.map((x) => who(x?.port))).toEqual(['primary', 'primary'])
    }
  })

  it('a read-your-writes session is honoured: its read in the same tick as another scope sees its write', async () => {
    for (const r of cluster.replicas) await cluster.pauseReplay(r.name)
    try {
      for (let i = 0; i < 5; i++) {
        const { id, token } = await router.session(async () => ({
          id: (await prisma.item.create({ data: { v: `ryw-${i}` } })).id,
          token: router.consistencyToken(),
        }))
        const [other, mine] = await Promise.all([
          router.readOnly(() => prisma.served.findUnique({ where: { id: 1 } })),
          router.withConsistencyToken(token, () =>
            router.readOnly(() => prisma.served.findUnique({ where: { id } })),
          ),
        ])
        expect(who(other?.port)).toMatch(/^replica/)
        expect(mine).toMatchObject({ id, v: `ryw-${i}` })
        expect(who(mine?.port)).toBe('primary')
      }
    } finally {
      for (const r of cluster.replicas) await cluster.resumeReplay(r.name)
    }
  })

  it('writes, findMany and raw queries are not deferred and keep routing by scope', async () => {
    const row = await prisma.item.create({ data: { v: 'plain-write' } })
    expect(row.id).toBeGreaterThan(0)
    const many = await router.readOnly(() => prisma.served.findMany())
    expect(who(many[0]?.port)).toMatch(/^replica/)
    const onPrimary = await router.primary(() => prisma.served.findMany())
    expect(who(onPrimary[0]?.port)).toBe('primary')
  })
})
