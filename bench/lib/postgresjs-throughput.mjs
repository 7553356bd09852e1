/**
 * The postgres.js read-throughput variants (run by `bench/run.mjs --only postgres`), against the
 * same PostgreSQL primary + 2 streaming replicas as the pg part. Same closed loop: `concurrency`
 * callers, each awaiting one tagged query ``sql`select ${i}::int as x` `` and sending the next, over
 * the two replicas, with the same `max` connections per replica for both variants:
 *
 *  - pgjs-raw:    two `postgres()` instances, round-robin by a counter, ``sql`...` ``
 *  - pgjs-router: `router.readOnly(() => sql`...`)` per query with `sql = router.sql()`,
 *                 `postgresDriver()`, default options (health checks on)
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import postgres from 'postgres'
import { createRouter } from '../../dist/index.js'
import { postgresDriver } from '../../dist/postgres/index.js'
import { closedLoop } from './closed-loop.mjs'

export const PGJS_VARIANTS = Object.freeze({
  'pgjs-raw': 'A  raw postgres.js postgres() x2, round-robin, sql`...`',
  'pgjs-router': 'B  router.readOnly(() => sql`...`), sql = router.sql(), postgresDriver',
  'pgjs-raw-unsafe': 'C  raw postgres.js postgres() x2, round-robin, sql.unsafe(text, [i])',
  'pgjs-router-query': 'D  router.readOnly(() => router.query(text, [i])), postgresDriver',
  'pgjs-raw-als': 'E  A with each query inside AsyncLocalStorage.run (no router)',
})

/** What each variant is compared with (same statement shape on the wire). */
export const PGJS_BASELINES = Object.freeze({
  'pgjs-raw': 'pgjs-raw',
  'pgjs-router': 'pgjs-raw',
  'pgjs-raw-unsafe': 'pgjs-raw-unsafe',
  'pgjs-router-query': 'pgjs-raw-unsafe',
  'pgjs-raw-als': 'pgjs-raw',
})

const TEXT = 'select $1::int as x'

const noop = () => {}

export async function createPostgresJsVariant(name, { primary, replicas, concurrency, max, routerOptions }) {
  if (name === 'pgjs-raw' || name === 'pgjs-raw-unsafe' || name === 'pgjs-raw-als') {
    const unsafe = name === 'pgjs-raw-unsafe'
    const als = name === 'pgjs-raw-als' ? new AsyncLocalStorage() : undefined
    const instances = replicas.map((url) => postgres(url, { max, onnotice: noop }))
    const served = instances.map(() => 0)
    let next = 0
    const op = (i) => {
      const k = next++ % 2
      served[k]++
      const sql = instances[k]
      if (als !== undefined) return als.run(i, () => sql`select ${i}::int as x`)
      return unsafe ? sql.unsafe(TEXT, [i]) : sql`select ${i}::int as x`
    }
    const round = (s) => closedLoop(op, concurrency, s)
    return {
      op,
      name,
      warmup: round,
      round,
      distribution: () => Object.fromEntries(served.map((n, k) => [`replica${k + 1}`, n])),
      close: () => Promise.all(instances.map((sql) => sql.end({ timeout: 5 }))),
    }
  }
  if (name === 'pgjs-router' || name === 'pgjs-router-query') {
    const router = createRouter({
      driver: postgresDriver(),
      primary,
      replicas,
      pool: { max, onnotice: noop },
      ...routerOptions,
    })
    router.on('error', noop)
    await router.ready()
    // On a loaded machine the first probes may take a while after ready(): give them up to 30 s.
    for (let t = 0; t < 300 && router.stats().nodes.some((n) => !n.usable); t++)
      await new Promise((r) => setTimeout(r, 100))
    const unusable = router.stats().nodes.filter((n) => !n.usable)
    if (unusable.length > 0)
      throw new Error(`router not ready: ${unusable.map((n) => `${n.name}: ${n.unusableReason}`).join(', ')}`)
    const sql = router.sql()
    const op =
      name === 'pgjs-router-query'
        ? (i) => router.readOnly(() => router.query(TEXT, [i]))
        : (i) => router.readOnly(() => sql`select ${i}::int as x`)
    const round = (s) => closedLoop(op, concurrency, s)
    return {
      op,
      name,
      warmup: round,
      round,
      distribution: () => Object.fromEntries(router.stats().nodes.map((n) => [n.name, n.queries])),
      close: () => router.close(),
    }
  }
  throw new Error(`unknown variant "${name}"`)
}
