// Kysely, unchanged, over routemate: `new PostgresDialect({ pool: router.pool() })`.
// Starts a real PostgreSQL primary with two streaming replicas, runs a few queries and prints which
// server answered each one (the server's own `inet_server_port()`), then stops everything.
//
//   npx tsup && node examples/kysely/kysely.mjs

import { Kysely, PostgresDialect, sql } from 'kysely'
import { createRouter } from '../../dist/index.js'
import { pgDriver } from '../../dist/pg/index.js'
import { startPgCluster } from '../../dist/testing/index.js'

const cluster = await startPgCluster({ replicas: 2 })
const nodeOf = new Map(cluster.nodes.map((n) => [n.port, n.name]))
const where = (port) => nodeOf.get(Number(port)) ?? `port ${port}`

const router = createRouter({
  driver: pgDriver(),
  primary: cluster.primary.url,
  replicas: cluster.replicas.map((r) => r.url),
})
const db = new Kysely({ dialect: new PostgresDialect({ pool: router.pool() }) })
const whoAmI = sql`select inet_server_port() as port, pg_backend_pid() as pid`

try {
  await router.ready()
  await sql`create table users (id serial primary key, name text not null)`.execute(db)
  await cluster.waitForReplication() // replicas replay the primary's WAL asynchronously

  // A write through the query builder: no scope, so the primary.
  const ada = await db
    .insertInto('users')
    .values({ name: 'ada' })
    .returning(['id', sql`inet_server_port()`.as('port')])
    .executeTakeFirstOrThrow()
  console.log(`insert users (id ${ada.id})             -> ${where(ada.port)}`)
  await cluster.waitForReplication()

  // Reads in a readOnly scope: the replicas, round-robin.
  await router.readOnly(async () => {
    for (let i = 0; i < 4; i++) {
      const r = await db
        .selectFrom('users')
        .select((eb) => [eb.fn.countAll().as('n'), sql`inet_server_port()`.as('port')])
        .executeTakeFirstOrThrow()
      console.log(`readOnly read #${i + 1} (${r.n} user)      -> ${where(r.port)}`)
    }
    // An evident write there never reaches a replica.
    await db
      .insertInto('users')
      .values({ name: 'nope' })
      .execute()
      .catch((err) => console.log(`readOnly insert                 -> refused (${err.constructor.name})`))
  })

  // Kysely's own transaction: one primary connection for every statement.
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('users').values({ name: 'grace' }).execute()
    const { rows } = await whoAmI.execute(trx)
    const n = await trx
      .selectFrom('users')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow()
    console.log(
      `db.transaction(): insert + read -> ${where(rows[0].port)}, pid ${rows[0].pid} (sees ${n.n} users)`,
    )
  })

  // A read-only router transaction: one replica, BEGIN READ ONLY, one snapshot.
  await router.transaction(
    async () => {
      const a = (await whoAmI.execute(db)).rows[0]
      const b = (await whoAmI.execute(db)).rows[0]
      console.log(`router.transaction({ readOnly }) -> ${where(a.port)}, pids ${a.pid} = ${b.pid}`)
    },
    { readOnly: true },
  )
} finally {
  await db.destroy() // ends the pool: closes the router
  console.log(`router closed: ${router.closed}`)
  await cluster.stop()
}
