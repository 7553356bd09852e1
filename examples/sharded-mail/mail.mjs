// The classic sharded mail service, on routemate: two shards (each a PostgreSQL primary with one
// streaming replica), users and their mails placed by user id exactly as the Java original does
// (`userId.hashCode() % 2`), writes on the user's shard primary, inbox reads on that shard's replica.
//
//   npx tsup && node examples/sharded-mail/mail.mjs
//
// Exit status 0 when every user's rows landed where Java would put them and every inbox read was
// served by that shard's replica; 1 otherwise.

import { createRouter } from '../../dist/index.js'
import { pgDriver } from '../../dist/pg/index.js'
import { startPgCluster } from '../../dist/testing/index.js'

/** Java's `Long.hashCode()`: `(int) (v ^ (v >>> 32))`, written out here to check the router against it. */
function javaLongHashCode(v) {
  const bits = BigInt.asUintN(64, BigInt(v))
  return Number(BigInt.asIntN(32, bits ^ (bits >> 32n)))
}

// 4294967296 = 2^32: an even id whose Long.hashCode() is 1, so Java (and routemate) put it on
// shard 1 — plain `userId % 2` would say 0.
const USERS = [
  { id: 1, name: 'ada' },
  { id: 2, name: 'grace' },
  { id: 3, name: 'barbara' },
  { id: 4, name: 'edsger' },
  { id: 4294967296, name: 'big-id' },
]
const SCHEMA = [
  'CREATE TABLE users (id bigint PRIMARY KEY, name text NOT NULL)',
  `CREATE TABLE mails (id bigserial PRIMARY KEY, user_id bigint NOT NULL REFERENCES users (id),
     sender text NOT NULL, subject text NOT NULL, sent_at timestamptz NOT NULL DEFAULT now())`,
  'CREATE INDEX mails_inbox ON mails (user_id, sent_at DESC)',
]

const clusters = await Promise.all([startPgCluster({ replicas: 1 }), startPgCluster({ replicas: 1 })])
const [c0, c1] = clusters
// Which server is which, by port: the servers themselves tell us where each statement ran.
const nodeOf = new Map()
for (const [shard, c] of [
  ['mail0', c0],
  ['mail1', c1],
]) {
  for (const n of c.nodes) nodeOf.set(n.port, `${shard}.${n.name}`)
}
const where = (port) => nodeOf.get(Number(port)) ?? `port ${port}`

// Shard i is the i-th key of `shards`: mail0 is Java's shard 0, mail1 its shard 1.
const router = createRouter({
  driver: pgDriver(),
  shards: {
    mail0: { primary: c0.primary.url, replicas: [c0.replicas[0].url] },
    mail1: { primary: c1.primary.url, replicas: [c1.replicas[0].url] },
  },
  sharding: { strategy: 'java-hashcode' }, // numberAs: 'long' (default): ids are Java Longs
})

// The service: every call names its user; the router picks the shard, then the node.
const mail = {
  signUp: (user) =>
    router.withShard(user.id, () =>
      router.query('INSERT INTO users (id, name) VALUES ($1, $2) RETURNING inet_server_port() AS port', [
        user.id,
        user.name,
      ]),
    ),
  send: (to, sender, subject) =>
    router.withShard(to, () =>
      router.transaction(async (tx) => {
        const { rows } = await tx.query(
          `INSERT INTO mails (user_id, sender, subject) VALUES ($1, $2, $3)
           RETURNING inet_server_port() AS port`,
          [to, sender, subject],
        )
        return rows[0]
      }),
    ),
  inbox: (userId) =>
    router.withShard(userId, () =>
      router.readOnly(() =>
        router.query(
          `SELECT subject, sender, inet_server_port() AS port FROM mails
            WHERE user_id = $1 ORDER BY sent_at DESC, id DESC LIMIT 20`,
          [userId],
        ),
      ),
    ),
}

let ok = true
try {
  await router.ready()
  await router.forEachShard(async (shard) => {
    for (const ddl of SCHEMA) await shard.query(ddl)
  })

  const written = new Map()
  for (const u of USERS) {
    const signUp = await mail.signUp(u)
    const sent = []
    for (let i = 1; i <= 2; i++)
      sent.push(await mail.send(u.id, 'newsletter@example.com', `hello ${u.name} #${i}`))
    written.set(u.id, { signUp: where(signUp.rows[0].port), sends: sent.map((r) => where(r.port)) })
  }
  await Promise.all(clusters.map((c) => c.waitForReplication())) // replicas apply the WAL asynchronously

  const row = (...cells) =>
    console.log(cells.map((c, i) => String(c).padEnd([9, 12, 17, 4, 8, 26, 18, 0][i])).join(''))
  row('user', 'id', 'Long.hashCode()', '%2', 'shard', 'users + mails written on', 'inbox read on', 'mails')
  for (const u of USERS) {
    const javaShard = `mail${Math.abs(javaLongHashCode(u.id) % 2)}`
    const shard = await router.shardFor(u.id)
    const { rows } = await mail.inbox(u.id)
    const readOn = [...new Set(rows.map((r) => where(r.port)))].join(', ')
    const w = written.get(u.id)
    const writes = [...new Set([w.signUp, ...w.sends])].join(', ')
    row(u.name, u.id, javaLongHashCode(u.id), javaShard.slice(-1), shard, writes, readOn, rows.length)
    ok &&=
      shard === javaShard &&
      writes === `${shard}.primary` &&
      readOn === `${shard}.replica1` &&
      rows.length === 2
  }
  // Each shard holds only its own users.
  const perShard = await router.forEachShard((s) => s.query('SELECT count(*)::int AS n FROM users'))
  console.log(`users per shard: mail0 ${perShard.mail0.rows[0].n}, mail1 ${perShard.mail1.rows[0].n}`)
  console.log(ok ? 'OK: every user on the shard Java picks; inbox reads on that shard’s replica' : 'MISMATCH')
} finally {
  await router.close()
  await Promise.all(clusters.map((c) => c.stop()))
}
process.exitCode = ok ? 0 : 1
