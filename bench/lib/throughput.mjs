/**
 * The read-throughput variants compared by `bench/run.mjs`, against one real PostgreSQL cluster.
 * Each variant runs `concurrency` callers in a closed loop, each issuing `SELECT $1::int AS x`
 * and awaiting it, over the two replicas with the same pool `max` per replica.
 *
 *  - raw:          two `pg.Pool`s, round-robin by a counter, `pool.query(sql, [i])` (the baseline)
 *  - router:       `router.readOnly(() => router.query(sql, [i]))` per query
 *  - router-scope: `router.query(sql, [i])`, the read scope entered once around the whole loop
 *  - raw-als:      the raw baseline with each query inside `AsyncLocalStorage.run` (no router):
 *                  what Node's AsyncLocalStorage alone costs, to tell it apart from the router's code
 *  - router-nohc:  as `router` with `healthCheck: false`: what the background probes cost
 */
import { AsyncLocalStorage, createHook } from 'node:async_hooks'
import pg from 'pg'
import { createRouter } from '../../dist/index.js'
import { pgDriver } from '../../dist/pg/index.js'
import { closedLoop, IDLE_MS } from './closed-loop.mjs'
import { createMariadbVariant, MARIADB_VARIANTS } from './mariadb-throughput.mjs'
import { createMysqlVariant, MYSQL_VARIANTS } from './mysql-throughput.mjs'
import { createPostgresJsVariant, PGJS_VARIANTS } from './postgresjs-throughput.mjs'
import { createRywVariant, RYW_MYSQL_VARIANTS, RYW_VARIANTS } from './ryw.mjs'

export const SQL = 'SELECT $1::int AS x'

export const VARIANTS = Object.freeze({
  raw: 'A  raw pg.Pool x2, round-robin',
  router: 'B  router.readOnly(() => router.query()) per query',
  'router-scope': 'C  router.query(), readOnly scope entered once',
  'raw-als': 'D  raw pg + AsyncLocalStorage.run per query (no router)',
  'router-nohc': 'E  as B, healthCheck: false (no background probes)',
})

const noop = () => {}

function rawPools(replicas, max) {
  return replicas.map((url) => {
    const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: IDLE_MS })
    pool.on('error', noop)
    return pool
  })
}

/**
 * Creates one variant: `{ name, warmup(s), round(s), distribution(), close() }`.
 * `primary` is the primary's URL (the router needs one; no read goes there), `replicas` two URLs.
 */
export async function createVariant(name, config) {
  if (name in MYSQL_VARIANTS) return createMysqlVariant(name, config)
  if (name in MARIADB_VARIANTS) return createMariadbVariant(name, config)
  if (name in PGJS_VARIANTS) return createPostgresJsVariant(name, config)
  if (name in RYW_VARIANTS || name in RYW_MYSQL_VARIANTS) return createRywVariant(name, config)
  const { primary, replicas, concurrency, max } = config
  if (name === 'raw' || name === 'raw-als') {
    const pools = rawPools(replicas, max)
    const served = pools.map(() => 0)
    let next = 0
    const query = (i) => {
      const k = next++ % 2
      served[k]++
      return pools[k].query(SQL, [i])
    }
    let op = query
    if (name === 'raw-als') {
      const als = new AsyncLocalStorage()
      const store = Object.freeze({ mode: 'read' })
      op = (i) => als.run(store, query, i)
    }
    const round = (s) => closedLoop(op, concurrency, s)
    return {
      name,
      warmup: round,
      round,
      distribution: () => Object.fromEntries(served.map((n, k) => [`replica${k + 1}`, n])),
      close: () => Promise.all(pools.map((p) => p.end())),
    }
  }
  if (name === 'router' || name === 'router-scope' || name === 'router-nohc') {
    const router = createRouter({
      driver: pgDriver(),
      primary,
      replicas,
      pool: { max, idleTimeoutMillis: IDLE_MS },
      ...(name === 'router-nohc' ? { healthCheck: false } : {}),
    })
    router.on('error', noop)
    await router.ready()
    const unusable = router.stats().nodes.filter((n) => !n.usable)
    if (unusable.length > 0)
      throw new Error(`router not ready: ${unusable.map((n) => `${n.name}: ${n.unusableReason}`).join(', ')}`)
    let round
    if (name === 'router' || name === 'router-nohc') {
      const op = (i) => router.readOnly(() => router.query(SQL, [i]))
      round = (s) => closedLoop(op, concurrency, s)
    } else {
      const op = (i) => router.query(SQL, [i])
      round = (s) => router.readOnly(() => closedLoop(op, concurrency, s))
    }
    return {
      name,
      warmup: round,
      round,
      distribution: () => Object.fromEntries(router.stats().nodes.map((n) => [n.name, n.queries])),
      close: () => router.close(),
    }
  }
  throw new Error(`unknown variant "${name}"`)
}

/** Labels of every variant run in a worker: pg, postgres.js, mysql2 and mariadb throughput, read-your-writes. */
export const LABELS = Object.freeze({
  ...VARIANTS,
  ...PGJS_VARIANTS,
  ...MYSQL_VARIANTS,
  ...MARIADB_VARIANTS,
  ...RYW_VARIANTS,
  ...RYW_MYSQL_VARIANTS,
})

/**
 * Async resources (promises, timers, ticks...) created per query by a variant, counted with an
 * async_hooks `init` hook over a short extra round. Deterministic, unlike timings on a shared
 * machine. Run it last: the hook itself turns on promise hooks in the process.
 */
export async function census(variant, seconds = 0.5) {
  if (variant.census === false) return undefined
  const counts = {}
  const hook = createHook({
    init(_id, type) {
      counts[type] = (counts[type] ?? 0) + 1
    },
  })
  hook.enable()
  let res
  try {
    res = await variant.round(seconds)
  } finally {
    hook.disable()
  }
  const perQuery = {}
  for (const [type, n] of Object.entries(counts)) {
    const v = Math.round((n / res.count) * 100) / 100
    if (v >= 0.01) perQuery[type] = v
  }
  return perQuery
}
