// routemate demo: a real PostgreSQL primary with two streaming replicas, a router in front of them,
// and 16 workers reading and writing for ~15 s while one replica is killed and brought back.
//
//   npm run demo                                  (builds quietly, then runs this file)
//   node examples/demo/demo.mjs --seconds 30      (after `npx tsup`)
//
// What to look for: reads go to the replicas, writes and transactions to the primary; when
// replica1 dies the router marks it down within milliseconds, retries the reads that hit it on
// replica2, and re-admits replica1 after it restarts, without a single failed write. The only
// failures expected are read-only transactions under way on replica1 at the kill: a transaction
// is never retried once it has begun.
// Exit status: 0 when all went as described, 1 otherwise (the demo doubles as a smoke test).
// Files: this one uses routemate; table.mjs draws the live table, report.mjs counts and sums up.

import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { createRouter, redactUrl } from '../../dist/index.js'
import { pgDriver } from '../../dist/pg/index.js'
import { PgClusterError, startPgCluster } from '../../dist/testing/index.js'
import { printSummary, Tally } from './report.mjs'
import { LiveOutput } from './table.mjs'

const WORKERS = 16
const CUSTOMERS = 100
const seconds = parseSeconds()
const out = new LiveOutput(process.stdout)

// Ctrl-C (or SIGTERM, SIGHUP): stop the run, close the router and stop the cluster, then exit 130 (143, 129).
// A second Ctrl-C exits at once; `routemate/testing` then still SIGKILLs its servers on exit.
const interrupt = new AbortController()
for (const [signal, code] of Object.entries({ SIGINT: 130, SIGTERM: 143, SIGHUP: 129 })) {
  process.on(signal, () => {
    if (interrupt.signal.aborted) process.exit(code)
    process.exitCode = code
    out.log(`\n${signal}: stopping the workers and the cluster...`)
    interrupt.abort()
  })
}

// The workload. Every operation below is plain router API: nothing in it names a node.
const READ_SQL = `
  SELECT count(*)::int AS orders, coalesce(sum(amount), 0)::float8 AS total,
         inet_server_port() AS port   -- which server answered (the demo counts reads per node)
    FROM orders
   WHERE customer = $1 AND created_at > now() - interval '1 hour'`
const INSERT_SQL = 'INSERT INTO orders (customer, amount) VALUES ($1, $2) RETURNING id'

const customer = () => 1 + Math.floor(Math.random() * CUSTOMERS)
const amount = () => (Math.random() * 200).toFixed(2)

const operations = {
  // A read in a readOnly scope goes to a replica picked by the balancer (round-robin by default).
  // Should that replica refuse the connection, the read is retried once on another usable node.
  read: async () => {
    const { rows } = await router.readOnly(() => router.query(READ_SQL, [customer()]))
    return rows[0].port
  },
  // Outside any scope, a statement goes to the primary. Writes are never retried.
  write: async () => {
    await router.query(INSERT_SQL, [customer(), amount()])
  },
  // A transaction pins one primary connection; tx.query sees the transaction's own writes.
  // (`where` records the node it runs on, for the summary: see worker().)
  transaction: async (where) => {
    await router.transaction(async (tx) => {
      where.node = tx.node
      const c = customer()
      await tx.query(INSERT_SQL, [c, amount()])
      await tx.query('SELECT count(*)::int AS n FROM orders WHERE customer = $1', [c])
    })
  },
  // A read-only transaction runs `BEGIN READ ONLY` on one replica: two reads, one snapshot.
  // (`router.readOnly(() => router.transaction(fn))` does the same.) A BEGIN that fails on a dead
  // replica is retried on another one; a transaction already under way on a replica that dies
  // fails: it is never retried mid-way (its reads ran in that server's snapshot).
  'read-only transaction': async (where) =>
    router.transaction(
      async (tx) => {
        where.node = tx.node
        const c = customer()
        const { rows } = await tx.query(READ_SQL, [c])
        await tx.query('SELECT id, amount FROM orders WHERE customer = $1 ORDER BY amount DESC LIMIT 3', [c])
        return rows[0].port
      },
      { readOnly: true, isolation: 'repeatable read' },
    ),
}
const MIX = [
  ['read', 0.7],
  ['write', 0.15],
  ['transaction', 0.1],
  ['read-only transaction', 0.05],
]

// What happened: per operation, per node (reads), failures; and when replica1 went down and up.
const tally = new Tally(MIX.map(([op]) => op))
const timeline = {} // killAt, downAt, downSource, restartAt, restartedAt, upAt (ms on out's clock)
let stopping = false

let cluster
let router
let portToNode

await main()

async function main() {
  const timers = []
  try {
    out.log('starting a local PostgreSQL cluster (1 primary + 2 streaming replicas)...')
    cluster = await startCluster()
    if (interrupt.signal.aborted) return
    portToNode = new Map(cluster.nodes.map((n) => [n.port, n.name]))

    // The router. `cluster.*.url` hold the app user's password: they go into the config, never
    // into a log. `router.stats()` and every event redact it.
    router = createRouter({
      driver: pgDriver(),
      primary: { name: 'primary', url: cluster.primary.url },
      replicas: [
        { name: 'replica1', url: cluster.url('replica1') },
        { name: 'replica2', url: cluster.url('replica2') },
      ],
      // Probe each node every 500 ms (300 ms deadline); 2 failures in a row (probes or connection
      // errors of real queries) mark a node down; a down node is re-probed at most 1 s apart.
      healthCheck: { intervalMs: 500, timeoutMs: 300, failureThreshold: 2, maxBackoffMs: 1000 },
    })
    for (const n of router.stats().nodes) out.log(`  ${n.name.padEnd(9)} ${n.role.padEnd(8)} ${n.url}`)
    listenToEvents()
    await router.ready() // the first health probe of every node is done

    // Setup: DDL and seed data on the primary (no scope = primary), then wait until both
    // replicas have replayed it, so the first reads find the table.
    await router.query(`CREATE TABLE orders (
      id serial PRIMARY KEY, customer int NOT NULL, amount numeric(10,2) NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now())`)
    await router.query('CREATE INDEX orders_customer_created ON orders (customer, created_at)')
    await router.query(`INSERT INTO orders (customer, amount, created_at)
      SELECT 1 + g % ${CUSTOMERS}, round((random() * 200)::numeric, 2), now() - g * interval '100 ms'
        FROM generate_series(1, 5000) g`)
    await cluster.waitForReplication()
    out.log('table "orders" created and seeded with 5000 rows on the primary, replicated')
    out.log(
      `running ${WORKERS} workers for ${seconds} s: 70% reads, 15% writes, 10% transactions, 5% read-only transactions`,
    )
    if (interrupt.signal.aborted) return

    await run(timers)
    if (interrupt.signal.aborted) return
    const nodes = router.stats().nodes.map((n) => n.name)
    const problems = printSummary(out, { seconds, workers: WORKERS, tally, nodes, timeline })
    if (problems.length > 0) process.exitCode = 1
  } catch (err) {
    // After Ctrl-C, failures are expected (e.g. the terminal's SIGINT also reached initdb).
    if (!interrupt.signal.aborted) {
      out.log(`demo failed: ${redactUrl(err instanceof Error ? (err.stack ?? err.message) : String(err))}`)
      process.exitCode = 1
    }
  } finally {
    stopping = true
    for (const t of timers) clearInterval(t)
    // close() drains in-flight queries (up to 2 s), ends every pool and stops the probes;
    // stop() shuts the servers down and deletes their data directory.
    await router?.close({ timeoutMs: 2000 }).catch((err) => out.log(`router.close() failed: ${err}`))
    await cluster?.stop()
  }
}

async function run(timers) {
  const ms = seconds * 1000
  const baseline = Object.fromEntries(router.stats().nodes.map((n) => [n.name, n.queries]))
  const status = () => {
    const t = Math.min(out.now(), ms) / 1000
    const bar = '#'.repeat(Math.round((20 * t * 1000) / ms)).padEnd(20, '.')
    const rate = Math.round(tally.total / Math.max(t, 0.1))
    return `${t.toFixed(1).padStart(5)} / ${seconds} s [${bar}]  ${tally.total} ops (${rate}/s)  ${tally.failures} failed`
  }
  const refresh = (force = false) => out.update(router.stats(), baseline, status(), { force })

  out.startClock()
  refresh()
  timers.push(setInterval(refresh, 500))
  const workers = Array.from({ length: WORKERS }, () => worker())

  // The scripted failure: SIGKILL replica1 at 40% of the run, start it again at 65%.
  if (await until(0.4 * ms)) {
    timeline.killAt = out.now()
    out.event('>>> killing replica1 (SIGKILL)', 'bold')
    await cluster.kill('replica1') // resolves once the processes are gone and the port refuses connections
    out.event(`    replica1 is dead (kill() resolved after ${Math.round(out.now() - timeline.killAt)} ms)`)
  }
  if (await until(0.65 * ms)) {
    timeline.restartAt = out.now()
    out.event('>>> restarting replica1', 'bold')
    await cluster.restart('replica1')
    timeline.restartedAt = out.now()
    out.event(
      `    replica1 accepts connections again (after ${Math.round(timeline.restartedAt - timeline.restartAt)} ms)`,
    )
  }
  await until(ms)

  stopping = true
  await Promise.race([Promise.all(workers), sleep(5000)])
  // Bounded extra time for replica1 to be re-admitted (needed only for very short runs).
  const deadline = out.now() + 5000
  while (timeline.restartAt !== undefined && timeline.upAt === undefined && out.now() < deadline) {
    await sleep(100)
  }
  for (const t of timers) clearInterval(t)
  refresh(true)
  out.freeze()
}

/**
 * `startPgCluster` with up to 3 attempts: on a loaded machine, cloning the two replicas at once
 * sometimes fails (pg_basebackup: "requested WAL segment ... has already been removed").
 */
async function startCluster() {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startPgCluster({ replicas: 2 })
    } catch (err) {
      if (attempt === 3 || interrupt.signal.aborted || !(err instanceof PgClusterError)) throw err
      out.log(`  cluster start failed (${err.message.split('\n')[0].slice(0, 240)}); trying again...`)
    }
  }
}

/** Sleeps until `ms` on the run's clock; false if Ctrl-C came first. */
async function until(ms) {
  try {
    await sleep(Math.max(0, ms - out.now()), undefined, { signal: interrupt.signal })
    return true
  } catch {
    return false
  }
}

async function worker() {
  while (!stopping) {
    const op = pickOperation()
    const where = {} // a transaction's node, once it has begun
    try {
      const port = await operations[op](where)
      tally.ok(op, port === undefined ? undefined : (portToNode.get(port) ?? `port ${port}`))
    } catch (err) {
      if (interrupt.signal.aborted) return
      // Expected: a transaction that had begun on replica1 before the kill, failing with it.
      const inFlight =
        where.node === 'replica1' && timeline.killAt !== undefined && timeline.restartAt === undefined
      tally.fail(op, err, { node: where.node, inFlight })
    }
    await sleep(Math.random() * 4) // a little think time, as a real service would have
  }
}

function pickOperation() {
  let r = Math.random()
  for (const [op, share] of MIX) {
    r -= share
    if (r < 0) return op
  }
  return MIX[0][0]
}

function listenToEvents() {
  // `router.on(name, fn)` subscribes (and returns an unsubscribe function). Events are emitted once
  // per change, never per query; their messages hold no password.
  router.on('node:suspect', (e) => out.event(`node:suspect   ${e.node}: ${e.reason}`, 'yellow'))
  router.on('node:down', (e) => {
    out.event(`node:down      ${e.node} (detected by a ${e.source}): ${e.reason}`, 'red')
    if (e.node === 'replica1' && timeline.killAt !== undefined && timeline.downAt === undefined) {
      timeline.downAt = out.now()
      timeline.downSource = e.source
    }
  })
  router.on('node:up', (e) => {
    out.event(`node:up        ${e.node} (was ${e.previous})`, 'green')
    if (e.node === 'replica1' && timeline.restartAt !== undefined && timeline.upAt === undefined) {
      timeline.upAt = out.now()
    }
  })
  router.on('fallback', (e) => {
    const why = Object.entries(e.replicas).map(([n, reason]) => `${n}: ${reason}`)
    out.event(`fallback       no usable replica (${why.join(', ')}): reads go to the primary`, 'yellow')
  })
  router.on('fallback:end', () => out.event('fallback:end   a replica is usable again', 'green'))
  router.on('node:lagging', (e) => out.event(`node:lagging   ${e.node}: ${e.lagMs} ms behind`, 'yellow'))
  router.on('node:caught-up', (e) => out.event(`node:caught-up ${e.node}`, 'green'))
  // A dead replica fails many reads and idle connections at once: `out.count` sums such bursts
  // up in one line per second. `retry`: a read moved to another node. `error`: a background
  // failure (here: idle pooled connections killed with their server), reported, never thrown.
  router.on('retry', (e) => {
    tally.retries++
    out.count(`retry          ${e.from} -> ${e.to}`, e.error, 'cyan')
  })
  router.on('error', (e) => {
    const message = redactUrl(e.error instanceof Error ? e.error.message : String(e.error))
    out.count(`error          ${e.context}${e.node ? ` (${e.node})` : ''}`, message, 'yellow')
  })
}

function parseSeconds() {
  try {
    const { values } = parseArgs({ options: { seconds: { type: 'string', default: '15' } } })
    if (Number(values.seconds) >= 2) return Number(values.seconds)
  } catch {}
  console.error('usage: node examples/demo/demo.mjs [--seconds N]   (N >= 2, default 15)')
  process.exit(2)
}
