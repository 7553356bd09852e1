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
import postgres from 'postgres'
import { createRouter } from '../../dist/index.js'
import { postgresDriver } from '../../dist/postgres/index.js'
import { closedLoop } from './closed-loop.mjs'

export const PGJS_VARIANTS = Object.freeze({
  'pgjs-raw': 'A  raw postgres.js postgres() x2, round-robin, sql`...`',
  'pgjs-router': 'B  router.readOnly(() => sql`...`), sql = router.sql(), postgresDriver',
})

const noop = () => {}

export async function createPostgresJsVariant(name, { primary, replicas, concurrency, max }) {
  if (name === 'pgjs-raw') {
    const instances = replicas.map((url) => postgres(url, { max, onnotice: noop }))
    const served = instances.map(() => 0)
    let next = 0
    const op = (i) => {
      const k = next++ % 2
      served[k]++
      const sql = instances[k]
      return sql`select ${i}::int as x`
    }
    const round = (s) => closedLoop(op, concurrency, s)
    return {
      name,
      warmup: round,
      round,
      distribution: () => Object.fromEntries(served.map((n, k) => [`replica${k + 1}`, n])),
      close: () => Promise.all(instances.map((sql) => sql.end({ timeout: 5 }))),
    }
  }
  if (name === 'pgjs-router') {
    const router = createRouter({
      driver: postgresDriver(),
      primary,
      replicas,
      pool: { max, onnotice: noop },
    })
    router.on('error', noop)
    await router.ready()
    const unusable = router.stats().nodes.filter((n) => !n.usable)
    if (unusable.length > 0)
      throw new Error(`router not ready: ${unusable.map((n) => `${n.name}: ${n.unusableReason}`).join(', ')}`)
    const sql = router.sql()
    const op = (i) => router.readOnly(() => sql`select ${i}::int as x`)
    const round = (s) => closedLoop(op, concurrency, s)
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
