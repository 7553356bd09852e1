/**
 * The mysql2 read-throughput variants (run by `bench/run.mjs --only mysql2`), against one real
 * MariaDB primary + 2 GTID replicas (`startMariaDbCluster`). Same closed loop as the pg variants:
 * `concurrency` callers, each awaiting `SELECT ? AS x` and sending the next, over the two replicas,
 * with the same `connectionLimit` (and `idleTimeout`, `maxIdle`) per replica for both variants:
 *
 *  - mysql-raw:    two `mysql2/promise` pools, round-robin by a counter, `pool.query(sql, [i])`
 *  - mysql-router: `router.readOnly(() => router.query(sql, [i]))` per query, `mysql2Driver()`,
 *                  default options (health checks on)
 */
import mysql from 'mysql2/promise'
import { createRouter } from '../../dist/index.js'
import { mysql2Driver } from '../../dist/mysql2/index.js'
import { closedLoop, IDLE_MS } from './closed-loop.mjs'

export const MYSQL_SQL = 'SELECT ? AS x'

export const MYSQL_VARIANTS = Object.freeze({
  'mysql-raw': 'A  raw mysql2/promise createPool x2, round-robin',
  'mysql-router': 'B  router.readOnly(() => router.query()), mysql2Driver',
})

const noop = () => {}

/** mysql2 pool options shared by both variants: the size, and idle connections kept for a minute. */
function sizeOptions(max) {
  return { connectionLimit: max, maxIdle: max, idleTimeout: IDLE_MS }
}

export async function createMysqlVariant(name, { primary, replicas, concurrency, max }) {
  if (name === 'mysql-raw') {
    const pools = replicas.map((uri) => {
      const pool = mysql.createPool({ uri, ...sizeOptions(max) })
      pool.on('connection', (conn) => conn.on('error', noop))
      return pool
    })
    const served = pools.map(() => 0)
    let next = 0
    const op = (i) => {
      const k = next++ % 2
      served[k]++
      return pools[k].query(MYSQL_SQL, [i])
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
  if (name === 'mysql-router') {
    const router = createRouter({ driver: mysql2Driver(), primary, replicas, pool: sizeOptions(max) })
    router.on('error', noop)
    await router.ready()
    const unusable = router.stats().nodes.filter((n) => !n.usable)
    if (unusable.length > 0)
      throw new Error(`router not ready: ${unusable.map((n) => `${n.name}: ${n.unusableReason}`).join(', ')}`)
    const op = (i) => router.readOnly(() => router.query(MYSQL_SQL, [i]))
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
