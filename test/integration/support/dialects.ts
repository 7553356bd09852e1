/**
 * The behavioural suites run once per dialect from one source: each dialect says how to start its
 * real cluster, which driver to use, and the few SQL differences the tests need.
 */
import { createRouter, type Driver, type Router, type RouterOptions } from '../../../src/index.js'
import { mariadbDriver } from '../../../src/mariadb/index.js'
import { mysql2Driver } from '../../../src/mysql2/index.js'
import { pgDriver } from '../../../src/pg/index.js'
import { postgresDriver } from '../../../src/postgres/index.js'
import { startMariaDbCluster, startPgCluster } from '../../../src/testing/index.js'

/** What the suites need of a running test cluster. */
export interface TestCluster {
  readonly primary: { readonly name: string; readonly url: string; readonly port: number }
  readonly replicas: ReadonlyArray<{ readonly name: string; readonly url: string; readonly port: number }>
  kill(name: string): Promise<void>
  pause(name: string): Promise<void>
  resume(name: string): Promise<void>
  restart(name: string): Promise<void>
  stop(name?: string): Promise<void>
  waitForReplication(timeoutMs?: number): Promise<void>
  /** Runs a statement on one node directly (not through a router): its rows. */
  query(name: string, sql: string, params?: unknown[]): Promise<unknown[]>
}

/** A connection checked out through a router's pool facade (`pool.connect()`, `getConnection()`, `sql.reserve()`). */
export interface FacadeConnection {
  query(sql: string, params?: unknown[]): Promise<unknown>
  release(): void
}

/**
 * The conformance suites: the behavioural suites every driver runs. A driver whose entry lists
 * `suites` runs only those (CI time); `'all'` runs every suite iterating {@link dialects} too.
 */
export type ConformanceSuite = 'routing' | 'failover' | 'read-only-bypass' | 'consistency' | 'sharding'

/** One driver under test (a dialect's cluster kind, a driver, the SQL differences the tests need). */
export interface DialectCase {
  /** The case's name (test titles): the SQL family's for its first driver, else the driver's. */
  readonly name: 'postgres' | 'mariadb' | 'postgres.js' | 'mariadb-connector'
  /** The SQL family: what the cluster and the SQL of the tests are. */
  readonly dialect: 'postgres' | 'mysql'
  /** The suites it runs: `'all'`, or the conformance subset named. */
  readonly suites: 'all' | readonly ConformanceSuite[]
  start(replicas: number): Promise<TestCluster>
  driver(): Driver
  /** Checks a connection out of `router.pool()` by the caller's scope. */
  checkout(router: Router): Promise<FacadeConnection>
  /** A statement returning one row `{ port, conn }`: the serving server's port and the connection's id. */
  readonly whoAmI: string
  /** Driver pool options limiting each node's pool to `n` connections. */
  poolMax(n: number): Record<string, unknown>
  /** A read that takes about `ms` on the server and returns `{ port }`. */
  slowWhoAmI(ms: number): string
  /** Placeholder for parameter n (1-based). */
  param(n: number): string
  /** DDL of a simple test table `name (id, v)` (id auto-generated) and what `hiddenWrite` needs, run in order on the primary. */
  setup(table: string): string[]
  /** A write that is not evident from its first keyword (the server must reject it in read-only mode). */
  hiddenWrite(table: string): string
  /** Whether an error is the server refusing a write on a read-only node/transaction. */
  isReadOnlyServerError(err: unknown): boolean
}

/** What `pg.Pool#connect()` and mysql2's `getConnection()` give: a client with `query` and `release`. */
type PoolClient = { query(sql: string, params?: unknown[]): Promise<unknown>; release(): void }

export const postgres: DialectCase = {
  name: 'postgres',
  dialect: 'postgres',
  suites: 'all',
  start: (replicas) => startPgCluster({ replicas }),
  driver: () => pgDriver(),
  checkout: (router) => (router.pool() as { connect(): Promise<PoolClient> }).connect(),
  whoAmI: 'SELECT inet_server_port() AS port, pg_backend_pid() AS conn',
  poolMax: (n) => ({ max: n }),
  slowWhoAmI: (ms) => `SELECT inet_server_port() AS port, pg_sleep(${ms / 1000}) IS NULL AS slept`,
  param: (n) => `$${n}`,
  setup: (name) => [`CREATE TABLE IF NOT EXISTS ${name} (id serial PRIMARY KEY, v text)`],
  hiddenWrite: (table) =>
    `WITH x AS (INSERT INTO ${table} (v) VALUES ('hidden') RETURNING id) SELECT id FROM x`,
  isReadOnlyServerError: (err) => (err as { code?: string })?.code === '25006',
}

/** The same PostgreSQL clusters through postgres.js (`routemate/postgres`); `checkout` is `router.sql().reserve()`. */
export const postgresJs: DialectCase = {
  ...postgres,
  name: 'postgres.js',
  suites: ['routing', 'failover', 'read-only-bypass', 'consistency', 'sharding'],
  driver: () => postgresDriver(),
  checkout: async (router) => {
    const sql = router.pool() as {
      reserve(): Promise<{ unsafe(s: string, p?: unknown[]): Promise<unknown>; release(): void }>
    }
    const reserved = await sql.reserve()
    return { query: (text, params) => reserved.unsafe(text, params ?? []), release: () => reserved.release() }
  },
}

export const mariadb: DialectCase = {
  name: 'mariadb',
  dialect: 'mysql',
  suites: 'all',
  start: (replicas) => startMariaDbCluster({ replicas }),
  driver: () => mysql2Driver(),
  checkout: (router) => (router.pool() as { getConnection(): Promise<PoolClient> }).getConnection(),
  whoAmI: 'SELECT @@port AS port, CONNECTION_ID() AS conn',
  poolMax: (n) => ({ connectionLimit: n }),
  slowWhoAmI: (ms) => `SELECT @@port AS port, SLEEP(${ms / 1000}) AS slept`,
  param: () => '?',
  setup: (name) => [
    `CREATE TABLE IF NOT EXISTS ${name} (id INT AUTO_INCREMENT PRIMARY KEY, v TEXT)`,
    `CREATE OR REPLACE PROCEDURE add_${name}() INSERT INTO ${name} (v) VALUES ('hidden')`,
  ],
  // A procedure call is no evident write: the replica's read_only (or the read-only transaction) refuses it.
  hiddenWrite: (table) => `CALL add_${table}()`,
  isReadOnlyServerError: (err) => [1290, 1792, 1836].includes(Number((err as { errno?: number })?.errno)),
}

/**
 * The same MariaDB GTID clusters through the `mariadb` connector (`routemate/mariadb`); `checkout`
 * is `router.pool().getConnection()` (a `mariadb.Pool` look-alike).
 */
export const mariadbConnector: DialectCase = {
  ...mariadb,
  name: 'mariadb-connector',
  suites: ['routing', 'failover', 'read-only-bypass', 'consistency', 'sharding'],
  driver: () => mariadbDriver(),
  checkout: async (router) => {
    const pool = router.pool() as {
      getConnection(): Promise<{
        query(s: string, p?: unknown[]): Promise<unknown>
        release(): Promise<void>
      }>
    }
    const conn = await pool.getConnection()
    return { query: (text, params) => conn.query(text, params), release: () => void conn.release() }
  },
}

/** Every driver under test: the one place a driver is added. */
export const allCases: readonly DialectCase[] = [postgres, mariadb, postgresJs, mariadbConnector]

/** The cases chosen (ROUTEMATE_DIALECTS=postgres,mariadb,postgres.js,mariadb-connector to choose; default: all). */
const chosen: readonly DialectCase[] =
  process.env.ROUTEMATE_DIALECTS === undefined
    ? allCases
    : process.env.ROUTEMATE_DIALECTS.split(',').map((name) => {
        const d = allCases.find((x) => x.name === name.trim())
        if (d === undefined) throw new Error(`ROUTEMATE_DIALECTS: unknown dialect "${name}"`)
        return d
      })

/** The cases that run every behavioural suite. */
export const dialects: readonly DialectCase[] = chosen.filter((d) => d.suites === 'all')

/** The cases a conformance suite runs over: every driver (those with a subset, if it lists the suite), optionally of one SQL family. */
export function dialectsFor(
  suite: ConformanceSuite,
  family?: DialectCase['dialect'],
): readonly DialectCase[] {
  return chosen.filter(
    (d) => (d.suites === 'all' || d.suites.includes(suite)) && (family === undefined || d.dialect === family),
  )
}

/** A router over a test cluster with fast health checks (`options.driver` replaces the dialect's driver, e.g. a {@link logProbes} wrapper). */
export function testRouter(
  d: DialectCase,
  cluster: TestCluster,
  options: Partial<RouterOptions> = {},
): Router {
  return createRouter({
    driver: d.driver(),
    primary: { name: 'primary', url: cluster.primary.url },
    replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
    healthCheck: {
      intervalMs: 500,
      timeoutMs: 450,
      failureThreshold: 2,
      successThreshold: 1,
      maxBackoffMs: 1000,
    },
    connectTimeoutMs: 2000,
    ...options,
  })
}

/** Which node (by name) a port belongs to. */
export function nodeByPort(cluster: TestCluster): (port: unknown) => string {
  const map = new Map<number, string>()
  map.set(cluster.primary.port, cluster.primary.name)
  for (const r of cluster.replicas) map.set(r.port, r.name)
  return (port) => map.get(Number(port)) ?? `unknown:${String(port)}`
}

/** Waits until every node of the router is idle: nothing in flight, nobody waiting for a connection. */
export async function expectIdle(router: Router, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const busy = router
      .stats()
      .nodes.filter((n) => n.inFlight !== 0 || n.pool.waiting !== 0 || n.pool.total !== n.pool.idle)
    if (busy.length === 0) return
    if (Date.now() > deadline) {
      throw new Error(
        `pools not idle: ${JSON.stringify(busy.map((n) => ({ name: n.name, inFlight: n.inFlight, pool: n.pool })))}`,
      )
    }
    await sleep(20)
  }
}

/**
 * How long a wait may last before a test gives up: liveness only, never the claim under test (a
 * loaded machine must not fail a test). Speed claims are counted in probe rounds or events instead.
 */
export const LIVENESS_MS = 30_000

/**
 * Resolves when `predicate` holds (polled), or rejects after `timeoutMs` -- but never before
 * {@link LIVENESS_MS}: a wait is not an assertion on how long something takes.
 */
export async function waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now()
  const limit = Math.max(timeoutMs, LIVENESS_MS)
  for (;;) {
    if (predicate()) return Date.now() - started
    if (Date.now() - started > limit) throw new Error(`timed out after ${limit} ms waiting for ${what}`)
    await sleep(10)
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** The state of a node in the router's stats. */
export function stateOf(router: Router, node: string): string | undefined {
  return router.stats().nodes.find((n) => n.name === node)?.state
}
