/**
 * The mysql2 read-throughput variants (run by `bench/run.mjs --only mysql2`), against one real
 * MariaDB primary + 2 GTID replicas (`startMariaDbCluster`). Same closed loop as the pg variants:
 * `concurrency` callers, each awaiting one statement and sending the next, over the two replicas,
 * with the same `connectionLimit` (and `idleTimeout`, `maxIdle`) per replica for every variant.
 *
 * The statement is chosen by `--mysql-shape` (see {@link MYSQL_SHAPES}): `SELECT 1` (no
 * parameter), `SELECT ? AS x` with one parameter, or a point select by primary key with one
 * parameter on a 1,000-row table. Variants (`--mysql-variants`), each compared with its raw
 * baseline of the same protocol:
 *
 *  - mysql-raw:             two `mysql2/promise` pools, one picked at random, `pool.query(sql, params)`
 *  - mysql-cluster:         mysql2's own PoolCluster over the two, `cluster.of('REPLICA*', 'RANDOM').query()`
 *  - mysql-router:          `router.readOnly(() => router.query(sql, params))`, `mysql2Driver()`,
 *                           default options (health checks on)
 *  - mysql-router-pool:     `router.readOnly(() => router.pool().query(sql, params))` (the facade Drizzle/Kysely use)
 *  - mysql-raw-execute:     as mysql-raw with `pool.execute` (prepared statements, binary protocol)
 *  - mysql-cluster-execute: as mysql-cluster with `execute`
 *  - mysql-router-execute:  `router.readOnly(() => router.pool().execute(sql, params))`
 *  - mysql-raw-checkout:    as mysql-raw through mysql2's callback pool: `getConnection`, then
 *                           `conn.query(sql, params, cb)` released in the callback, one promise per
 *                           query (the path the router's driver takes; mysql2's `pool.query` is slower)
 */
import mysql from 'mysql2/promise'
import { createRouter } from '../../dist/index.js'
import { mysql2Driver } from '../../dist/mysql2/index.js'
import { closedLoop, IDLE_MS } from './closed-loop.mjs'

/** Rows of the point-select table. */
export const MYSQL_POINT_ROWS = 1000

/** The statement shapes: SQL and the parameters of call `i` (`undefined`: none). */
export const MYSQL_SHAPES = Object.freeze({
  select1: { sql: 'SELECT 1', params: () => undefined },
  param: { sql: 'SELECT ? AS x', params: (i) => [i] },
  point: {
    sql: 'SELECT id, name, email, score FROM bench_users WHERE id = ?',
    params: (i) => [(i % MYSQL_POINT_ROWS) + 1],
  },
})

/** The point-select table, made on the primary before the variants start (replicated). */
export const MYSQL_POINT_TABLE_SQL = [
  'DROP TABLE IF EXISTS bench_users',
  'CREATE TABLE bench_users (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, email VARCHAR(128) NOT NULL, score INT NOT NULL)',
  `INSERT INTO bench_users (id, name, email, score) SELECT seq, CONCAT('user ', seq), CONCAT('user', seq, '@example.com'), seq * 7 % 1000 FROM seq_1_to_${MYSQL_POINT_ROWS}`,
]

export const MYSQL_VARIANTS = Object.freeze({
  'mysql-raw': 'A  raw mysql2/promise createPool x2, random, query',
  'mysql-cluster': 'B  mysql2 PoolCluster of(REPLICA*, RANDOM), query',
  'mysql-router': 'C  router.readOnly(() => router.query()), mysql2Driver',
  'mysql-router-pool': 'D  router.readOnly(() => router.pool().query())',
  'mysql-raw-execute': 'E  raw mysql2/promise createPool x2, random, execute',
  'mysql-cluster-execute': 'F  mysql2 PoolCluster of(REPLICA*, RANDOM), execute',
  'mysql-router-execute': 'G  router.readOnly(() => router.pool().execute())',
  'mysql-raw-checkout': 'H  raw mysql2 callback getConnection + conn.query x2, random',
})

/** Each variant's baseline: the raw pools with the same protocol (text `query` or prepared `execute`). */
export const MYSQL_BASE = Object.freeze({
  'mysql-raw': 'mysql-raw',
  'mysql-cluster': 'mysql-raw',
  'mysql-router': 'mysql-raw',
  'mysql-router-pool': 'mysql-raw',
  'mysql-raw-execute': 'mysql-raw-execute',
  'mysql-cluster-execute': 'mysql-raw-execute',
  'mysql-router-execute': 'mysql-raw-execute',
  'mysql-raw-checkout': 'mysql-raw',
})

const noop = () => {}

/** mysql2 pool options shared by every variant: the size, and idle connections kept for a minute. */
function sizeOptions(max) {
  return { connectionLimit: max, maxIdle: max, idleTimeout: IDLE_MS }
}

function shapeOf(name) {
  const shape = MYSQL_SHAPES[name ?? 'point']
  if (shape === undefined) throw new Error(`unknown mysql shape "${name}"`)
  return shape
}

/** A variant's closed loop over `op(i)`, with its query distribution and its close. */
function looped(name, op, concurrency, distribution, close) {
  const round = (s) => closedLoop(op, concurrency, s)
  return { name, warmup: round, round, distribution, close, op }
}

/** Two raw `mysql2/promise` pools (one per replica), connection errors swallowed. */
function rawPools(replicas, max) {
  return replicas.map((uri) => {
    const pool = mysql.createPool({ uri, ...sizeOptions(max) })
    pool.on('connection', (conn) => conn.on('error', noop))
    return pool
  })
}

/** {@link looped} over raw pools: the distribution is `served` per replica, close ends the pools. */
function loopedOverPools(name, op, concurrency, pools, served) {
  return looped(
    name,
    op,
    concurrency,
    () => Object.fromEntries(served.map((n, k) => [`replica${k + 1}`, n])),
    () => Promise.all(pools.map((p) => p.end())),
  )
}

export async function createMysqlVariant(name, { primary, replicas, concurrency, max, mysqlShape }) {
  const { sql, params } = shapeOf(mysqlShape)
  if (name === 'mysql-raw' || name === 'mysql-raw-execute') {
    const pools = rawPools(replicas, max)
    const served = pools.map(() => 0)
    const execute = name === 'mysql-raw-execute'
    const op = (i) => {
      const k = Math.floor(Math.random() * pools.length)
      served[k]++
      const p = params(i)
      if (execute) return p === undefined ? pools[k].execute(sql) : pools[k].execute(sql, p)
      return p === undefined ? pools[k].query(sql) : pools[k].query(sql, p)
    }
    return loopedOverPools(name, op, concurrency, pools, served)
  }
  if (name === 'mysql-raw-checkout') {
    const pools = rawPools(replicas, max)
    const cores = pools.map((p) => p.pool)
    const served = pools.map(() => 0)
    const op = (i) => {
      const k = Math.floor(Math.random() * cores.length)
      served[k]++
      const p = params(i)
      return new Promise((resolve, reject) => {
        cores[k].getConnection((err, conn) => {
          if (err) return reject(err)
          const done = (e, rows) => {
            conn.release()
            if (e) reject(e)
            else resolve(rows)
          }
          if (p === undefined) conn.query(sql, done)
          else conn.query(sql, p, done)
        })
      })
    }
    return loopedOverPools(name, op, concurrency, pools, served)
  }
  if (name === 'mysql-cluster' || name === 'mysql-cluster-execute') {
    const cluster = mysql.createPoolCluster()
    replicas.forEach((uri, k) => {
      cluster.add(`REPLICA${k + 1}`, { uri, ...sizeOptions(max) })
    })
    cluster.on('connection', (conn) => conn.on('error', noop))
    const ns = cluster.of('REPLICA*', 'RANDOM')
    const execute = name === 'mysql-cluster-execute'
    const op = (i) => {
      const p = params(i)
      return execute ? ns.execute(sql, p ?? []) : ns.query(sql, p)
    }
    return looped(
      name,
      op,
      concurrency,
      () => ({}),
      () => cluster.end(),
    )
  }
  if (name === 'mysql-router' || name === 'mysql-router-pool' || name === 'mysql-router-execute') {
    const router = createRouter({ driver: mysql2Driver(), primary, replicas, pool: sizeOptions(max) })
    router.on('error', noop)
    await router.ready()
    const unusable = router.stats().nodes.filter((n) => !n.usable)
    if (unusable.length > 0)
      throw new Error(`router not ready: ${unusable.map((n) => `${n.name}: ${n.unusableReason}`).join(', ')}`)
    const pool = router.pool()
    let run
    if (name === 'mysql-router') run = (i) => router.query(sql, params(i))
    else if (name === 'mysql-router-pool') run = (i) => pool.query(sql, params(i))
    else run = (i) => pool.execute(sql, params(i))
    const op = (i) => router.readOnly(() => run(i))
    return looped(
      name,
      op,
      concurrency,
      () => Object.fromEntries(router.stats().nodes.map((n) => [n.name, n.queries])),
      () => router.close(),
    )
  }
  throw new Error(`unknown variant "${name}"`)
}
