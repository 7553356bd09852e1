/**
 * The `mariadb` connector read-throughput variants (run by `bench/run.mjs --only mariadb`), against
 * one real MariaDB primary + 2 GTID replicas (`startMariaDbCluster`). Same closed loop as the pg and
 * mysql2 variants: `concurrency` callers, each awaiting `SELECT ? AS x` and sending the next, over
 * the two replicas, with the same `connectionLimit` per replica (and idle connections kept for a
 * minute) for every variant:
 *
 *  - mariadb-raw:         two `mariadb.createPool`s, round-robin by a counter, `pool.query(sql, [i])`
 *  - mariadb-router:      `router.readOnly(() => router.query(sql, [i]))` per query, `mariadbDriver()`,
 *                         default options (health checks on)
 *  - mariadb-router-pool: `router.readOnly(() => pool.query(sql, [i]))` with `pool = router.pool()`,
 *                         the `mariadb.Pool` look-alike that `@prisma/adapter-mariadb` uses
 */
import * as mariadb from 'mariadb'
import { createRouter } from '../../dist/index.js'
import { mariadbDriver } from '../../dist/mariadb/index.js'
import { closedLoop, IDLE_MS } from './closed-loop.mjs'

export const MARIADB_SQL = 'SELECT ? AS x'

export const MARIADB_VARIANTS = Object.freeze({
  'mariadb-raw': 'A  raw mariadb createPool x2, round-robin',
  'mariadb-router': 'B  router.readOnly(() => router.query()), mariadbDriver',
  'mariadb-router-pool': 'C  router.readOnly(() => router.pool().query()), mariadbDriver',
})

const noop = () => {}

export async function createMariadbVariant(name, { primary, replicas, concurrency, max }) {
  if (name === 'mariadb-raw') {
    const pools = replicas.map((url) => {
      const u = new URL(url)
      const pool = mariadb.createPool({
        host: u.hostname,
        port: Number(u.port),
        user: decodeURIComponent(u.username),
        password: decodeURIComponent(u.password),
        database: u.pathname.slice(1) || undefined,
        connectionLimit: max,
        idleTimeout: IDLE_MS / 1000,
      })
      pool.on('error', noop)
      return pool
    })
    const served = pools.map(() => 0)
    let next = 0
    const op = (i) => {
      const k = next++ % 2
      served[k]++
      return pools[k].query(MARIADB_SQL, [i])
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
  if (name === 'mariadb-router' || name === 'mariadb-router-pool') {
    const router = createRouter({
      driver: mariadbDriver(),
      primary,
      replicas,
      pool: { connectionLimit: max, idleTimeout: IDLE_MS / 1000 },
    })
    router.on('error', noop)
    await router.ready()
    const unusable = router.stats().nodes.filter((n) => !n.usable)
    if (unusable.length > 0)
      throw new Error(`router not ready: ${unusable.map((n) => `${n.name}: ${n.unusableReason}`).join(', ')}`)
    const pool = router.pool()
    const op =
      name === 'mariadb-router'
        ? (i) => router.readOnly(() => router.query(MARIADB_SQL, [i]))
        : (i) => router.readOnly(() => pool.query(MARIADB_SQL, [i]))
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
