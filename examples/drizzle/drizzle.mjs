// Drizzle, unchanged, over routemate: `drizzle({ client: router.pool() })` (drizzle-orm/node-postgres).
// Starts a real PostgreSQL primary with two streaming replicas, runs a few queries and prints which
// server answered each one (the server's own `inet_server_port()`), then stops everything.
//
//   npx tsup && node examples/drizzle/drizzle.mjs

import { count, sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/node-postgres'
import { integer, pgTable, serial, text } from 'drizzle-orm/pg-core'
import { createRouter } from '../../dist/index.js'
import { pgDriver } from '../../dist/pg/index.js'
import { startPgCluster } from '../../dist/testing/index.js'

const users = pgTable('users', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
  // filled in by the server that inserted the row
  port: integer('port'),
})

const cluster = await startPgCluster({ replicas: 2 })
const nodeOf = new Map(cluster.nodes.map((n) => [n.port, n.name]))
const where = (port) => nodeOf.get(Number(port)) ?? `port ${port}`

const router = createRouter({
  driver: pgDriver(),
  primary: cluster.primary.url,
  replicas: cluster.replicas.map((r) => r.url),
})
// router.pool() is a real pg.Pool subclass: drizzle sees `instanceof Pool` and gives each of its
// transactions one client from pool.connect().
const db = drizzle({ client: router.pool() })
const whoAmI = async (q) =>
  (await q.execute(sql`select inet_server_port() as port, pg_backend_pid() as pid`)).rows[0]

try {
  await router.ready()
  await db.execute(
    sql`create table users (id serial primary key, name text not null, port int default inet_server_port())`,
  )
  await cluster.waitForReplication()

  const [ada] = await db.insert(users).values({ name: 'ada' }).returning()
  console.log(`insert users (id ${ada.id})             -> ${where(ada.port)}`)
  await cluster.waitForReplication()

  // Await inside the callback: drizzle's queries are lazy and run where they are awaited.
  await router.readOnly(async () => {
    for (let i = 0; i < 4; i++) {
      const [r] = await db.select({ n: count(), port: sql`inet_server_port()` }).from(users)
      console.log(`readOnly read #${i + 1} (${r.n} user)      -> ${where(r.port)}`)
    }
  })

  await db.transaction(async (tx) => {
    const [grace] = await tx.insert(users).values({ name: 'grace' }).returning()
    const me = await whoAmI(tx)
    console.log(
      `db.transaction(): insert + read -> ${where(me.port)} (row written on ${where(grace.port)}), pid ${me.pid}`,
    )
  })

  // Drizzle's transaction inside a router transaction becomes a savepoint: the outer one wins.
  await router
    .transaction(async () => {
      await db.transaction(async (tx) => {
        await tx.insert(users).values({ name: 'rolled back with the outer transaction' })
      })
      throw new Error('outer fails')
    })
    .catch(() => {})
  const [{ n }] = await db.select({ n: count() }).from(users)
  console.log(`after the outer rollback        -> ${n} users (the nested drizzle insert is gone)`)
} finally {
  await db.$client.end() // ends the pool: closes the router
  console.log(`router closed: ${router.closed}`)
  await cluster.stop()
}
