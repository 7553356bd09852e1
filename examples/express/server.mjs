// routemate + Express: automatic read/write routing per request, and read-your-writes across
// requests with a consistency token. One command starts a real PostgreSQL primary with two
// streaming replicas (replica1 delayed 500 ms), serves an Express app, calls it, and shuts down.
//
//   npm run build && node examples/express/server.mjs
//
// Exit status: 0 when every read that carried the token saw its write, 1 otherwise.

import express from 'express'
import { createRouter } from '../../dist/index.js'
import { routemate } from '../../dist/express/index.js'
import { pgDriver } from '../../dist/pg/index.js'
import { startPgCluster } from '../../dist/testing/index.js'

const TOKEN = 'x-routemate-token'

console.log('starting a PostgreSQL primary and 2 replicas...')
const cluster = await startPgCluster({ replicas: 2 })
const nodeOf = (port) => cluster.nodes.find((n) => n.port === Number(port))?.name ?? `port ${port}`
let router
let server
try {
  await cluster.query('primary', 'CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)')
  await cluster.waitForReplication()
  await cluster.setApplyDelay('replica1', 500) // replica1 replays the primary's changes 500 ms late

  router = createRouter({
    driver: pgDriver(),
    primary: { name: 'primary', url: cluster.primary.url },
    replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
    // After a session writes, its reads go to a replica that has replayed the write, else the primary.
    readYourWrites: { mode: 'position', maxWaitMs: 100 },
    maxReplicationLagMs: 0, // keep the delayed replica in rotation, to show what the token is for
  })
  await router.ready()

  // The app. Nothing below names a node: the middleware picks the scope from the method.
  const app = express()
  app.use(routemate(router, { auto: true })) // GET -> readOnly (replicas), POST -> primary
  app.use(express.json())
  app.post('/notes', async (req, res) => {
    const { rows } = await router.query(
      'INSERT INTO notes (body) VALUES ($1) RETURNING id, inet_server_port() AS port',
      [String(req.body?.body ?? '')],
    )
    res.status(201).json({ id: rows[0].id, servedBy: nodeOf(rows[0].port) }) // + the token header
  })
  app.get('/notes/:id', async (req, res) => {
    const { rows } = await router.query(
      'SELECT (SELECT body FROM notes WHERE id = $1) AS body, inet_server_port() AS port',
      [Number(req.params.id)],
    )
    const { body, port } = rows[0]
    res.status(body === null ? 404 : 200).json({ body, servedBy: nodeOf(port) })
  })
  app.use((err, _req, res, _next) => res.status(500).json({ error: err.message }))

  server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  const base = `http://127.0.0.1:${server.address().port}`
  console.log(`express app on ${base}\n`)

  // The client side: a POST, then GETs without and with the token it returned.
  const post = await fetch(`${base}/notes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ body: 'hello, replicas' }),
  })
  const created = await post.json()
  const token = post.headers.get(TOKEN)
  console.log(`POST /notes                -> ${post.status} served by ${created.servedBy}`)
  console.log(`  ${TOKEN}: ${token}\n`)

  let missed = 0
  for (const withToken of [false, true]) {
    console.log(withToken ? 'GETs carrying the token (read-your-writes):' : 'GETs without the token:')
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${base}/notes/${created.id}`, { headers: withToken ? { [TOKEN]: token } : {} })
      const got = await res.json()
      const what = res.status === 200 ? 'found' : 'NOT FOUND (stale replica)'
      console.log(`  GET /notes/${created.id}  -> ${res.status} served by ${got.servedBy.padEnd(8)} ${what}`)
      if (withToken && res.status !== 200) missed++
    }
    console.log()
  }
  console.log(
    missed === 0
      ? 'every read that carried the token saw the write'
      : `${missed} read(s) carrying the token missed the write`,
  )
  process.exitCode = missed === 0 ? 0 : 1
} catch (err) {
  console.error(err)
  process.exitCode = 1
} finally {
  if (server !== undefined) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  await router?.close()
  await cluster.stop()
  console.log('router closed, cluster stopped')
}
