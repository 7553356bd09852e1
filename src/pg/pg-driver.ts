import pg from 'pg'
import type {
  BeginOptions,
  Driver,
  DriverNodeOptions,
  DriverPool,
  DriverProber,
  IsolationLevel,
  ProbeResult,
  QueryResult,
} from '../router/driver.js'
import { KeptConnectionProber, type ProbeConnectionOps } from '../health/kept-connection-prober.js'
import type { FacadeHost } from '../router/facade-host.js'
import type { Statement } from '../router/statement.js'
import { classifyPgError } from './pg-errors.js'
import { createPgPoolFacade } from './pg-pool-facade.js'
import { lsnReached } from './pg-position.js'

/** Options of {@link pgDriver}. */
export interface PgDriverOptions {
  /** The `pg` module to use (e.g. to share one with your ORM). Default: the `pg` package routemate resolves. */
  pg?: typeof pg
}

const ISOLATION: Record<IsolationLevel, string> = {
  'read uncommitted': 'READ UNCOMMITTED',
  'read committed': 'READ COMMITTED',
  'repeatable read': 'REPEATABLE READ',
  serializable: 'SERIALIZABLE',
}

const PROBE_SQL =
  'SELECT pg_is_in_recovery() AS in_recovery, CASE WHEN pg_is_in_recovery() ' +
  'THEN pg_last_wal_replay_lsn()::text ELSE pg_current_wal_lsn()::text END AS lsn'

const noop = (): void => {}

/** Lets a client's socket keep the process alive (`ref`) or not (`unref`). */
function refClient(client: pg.Client, ref: boolean): void {
  const stream = (client as unknown as { connection?: { stream?: { ref?(): void; unref?(): void } } })
    .connection?.stream
  if (ref) stream?.ref?.()
  else stream?.unref?.()
}

function destroyClient(client: pg.Client | pg.PoolClient): void {
  const stream = (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream
  stream?.destroy()
}

/** A probe connection, flagged when it reported an error or ended. */
interface PgProbeConn {
  readonly client: pg.Client
  broken: boolean
}

/** `application_name` of probe connections (unless the node's options set one), for `pg_stat_activity`. */
const PROBE_APPLICATION_NAME = 'routemate-probe'

/** `pg.Pool` options that mean nothing to a single `pg.Client`. */
const POOL_ONLY_OPTIONS = new Set([
  'Client',
  'max',
  'min',
  'idleTimeoutMillis',
  'maxUses',
  'maxLifetimeSeconds',
  'allowExitOnIdle',
  'log',
  'verify',
  'Promise',
])

/**
 * How the probes of one node connect and query: a plain `pg.Client` (not from the pool) with the
 * node's client options (`ssl`, `password`...; not the pool's own) and `application_name`
 * `routemate-probe` unless they set one, bounded by the probe deadline.
 */
function pgProbeOps(lib: typeof pg, node: DriverNodeOptions): ProbeConnectionOps<PgProbeConn> {
  const clientOptions: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(node.pool)) if (!POOL_ONLY_OPTIONS.has(k)) clientOptions[k] = v
  return {
    async connect(signal) {
      signal.throwIfAborted()
      const client = new lib.Client({
        application_name: PROBE_APPLICATION_NAME,
        ...clientOptions,
        connectionString: node.url,
        connectionTimeoutMillis: node.connectTimeoutMs,
      })
      const conn: PgProbeConn = { client, broken: false }
      const broken = (): void => {
        conn.broken = true
      }
      client.on('error', broken)
      client.on('end', broken)
      const abort = () => destroyClient(client)
      signal.addEventListener('abort', abort, { once: true })
      try {
        await client.connect()
      } catch (err) {
        destroyClient(client)
        throw err
      } finally {
        signal.removeEventListener('abort', abort)
      }
      return conn
    },
    async probe(conn) {
      const res = await conn.client.query<{ in_recovery: boolean; lsn: string | null }>(PROBE_SQL)
      const row = res.rows[0]
      if (row === undefined) throw new Error('probe returned no row')
      return {
        role: row.in_recovery ? 'replica' : 'primary',
        ...(row.lsn !== null ? { position: row.lsn } : {}),
      }
    },
    broken: (conn) => conn.broken,
    setActive: (conn, active) => refClient(conn.client, active),
    close(conn) {
      conn.broken = true
      conn.client.end().catch(noop)
    },
    destroy(conn) {
      conn.broken = true
      destroyClient(conn.client)
    },
  }
}

/** The DriverPool of one node over a `pg.Pool`. */
class PgNodePool implements DriverPool<pg.PoolClient> {
  readonly #pool: pg.Pool

  constructor(lib: typeof pg, node: DriverNodeOptions, onError: (err: unknown) => void) {
    // The connect deadline goes on the Client (opening a connection), not the Pool: there it would
    // also arm a timer on every checkout of an idle connection. Waiting for a free connection of
    // a busy pool is not bounded by it; work waiting on a node marked down is aborted instead.
    const connectTimeout = node.connectTimeoutMs
    const Client = class extends lib.Client {
      constructor(o: pg.ClientConfig) {
        super({ ...o, connectionTimeoutMillis: connectTimeout })
      }
    }
    const config: pg.PoolConfig = {
      connectionString: node.url,
      Client: Client as unknown as typeof pg.Client,
      ...(node.queryTimeoutMs > 0 ? { query_timeout: node.queryTimeoutMs } : {}),
      ...(node.readOnly ? { options: '-c default_transaction_read_only=on' } : {}),
      ...(node.pool as pg.PoolConfig),
    }
    this.#pool = new lib.Pool(config)
    // An idle client dying must never crash the process; nor may one dying while checked out.
    this.#pool.on('error', onError)
    this.#pool.on('connect', (client) => {
      client.on('error', noop)
    })
  }

  acquire(): Promise<pg.PoolClient> {
    return this.#pool.connect()
  }

  acquireCallback(cb: (err: unknown, conn?: pg.PoolClient) => void): void {
    // pg calls back with (null | Error, client, done): the core only checks `err != null`.
    this.#pool.connect(cb as Parameters<pg.Pool['connect']>[0])
  }

  release(conn: pg.PoolClient, destroy: boolean): void {
    conn.release(destroy ? true : undefined)
  }

  destroy(conn: pg.PoolClient): void {
    destroyClient(conn)
  }

  end(): Promise<void> {
    return this.#pool.end()
  }

  counts(): { total: number; idle: number; waiting: number } {
    return { total: this.#pool.totalCount, idle: this.#pool.idleCount, waiting: this.#pool.waitingCount }
  }
}

/** The PostgreSQL driver over `pg` (node-postgres). */
class PgDriver implements Driver<pg.PoolClient> {
  readonly dialect = 'postgres' as const
  readonly name = 'pg'
  readonly #pg: typeof pg

  constructor(options: PgDriverOptions) {
    this.#pg = options.pg ?? pg
  }

  createPool(node: DriverNodeOptions, onError: (err: unknown) => void = noop): DriverPool<pg.PoolClient> {
    return new PgNodePool(this.#pg, node, onError)
  }

  execute(
    conn: pg.PoolClient,
    stmt: Statement,
    params: readonly unknown[] | undefined,
  ): Promise<QueryResult> {
    return conn.query(stmt as string, params as unknown[] | undefined) as unknown as Promise<QueryResult>
  }

  executeCallback(
    conn: pg.PoolClient,
    stmt: Statement,
    params: readonly unknown[] | undefined,
    cb: (err: unknown, result?: QueryResult) => void,
  ): void {
    // pg calls back with (null | Error, result): the core only checks `err != null`.
    conn.query(
      stmt as string,
      params as unknown[],
      cb as unknown as (err: Error | null, res: pg.QueryResult) => void,
    )
  }

  async probe(node: DriverNodeOptions, signal: AbortSignal): Promise<ProbeResult> {
    const ops = pgProbeOps(this.#pg, node)
    const conn = await ops.connect(signal)
    const abort = () => ops.destroy(conn)
    signal.addEventListener('abort', abort, { once: true })
    try {
      return await ops.probe(conn, signal)
    } finally {
      signal.removeEventListener('abort', abort)
      if (signal.aborted) ops.destroy(conn)
      else ops.close(conn)
    }
  }

  createProber(node: DriverNodeOptions, options: { readonly maxAgeMs: number }): DriverProber {
    return new KeptConnectionProber(pgProbeOps(this.#pg, node), options.maxAgeMs)
  }

  positionReached(replay: string, target: string): boolean {
    return lsnReached(replay, target)
  }

  async positionAfterWrite(conn: pg.PoolClient): Promise<string> {
    const res = await conn.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')
    const lsn = res.rows[0]?.lsn
    if (lsn === undefined) throw new Error('pg_current_wal_insert_lsn() returned no row')
    return lsn
  }

  async waitForPosition(conn: pg.PoolClient, target: string, timeoutMs: number): Promise<string | undefined> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const res = await conn.query<{ lsn: string | null }>('SELECT pg_last_wal_replay_lsn()::text AS lsn')
      const lsn = res.rows[0]?.lsn ?? undefined
      if (lsn === undefined || lsnReached(lsn, target)) return lsn
      const left = deadline - Date.now()
      if (left <= 0) return lsn
      await new Promise((r) => setTimeout(r, Math.min(5, left)))
    }
  }

  beginSql(options: BeginOptions): string {
    let sql = 'BEGIN'
    if (options.isolation !== undefined) {
      const level = ISOLATION[options.isolation]
      if (level === undefined) throw new TypeError(`unknown isolation level "${String(options.isolation)}"`)
      sql += ` ISOLATION LEVEL ${level}`
    }
    return options.readOnly ? `${sql} READ ONLY` : sql
  }

  savepointSql(name: string, op: 'create' | 'release' | 'rollback'): string {
    if (op === 'create') return `SAVEPOINT ${name}`
    if (op === 'release') return `RELEASE SAVEPOINT ${name}`
    return `ROLLBACK TO SAVEPOINT ${name}`
  }

  classify(err: unknown) {
    return classifyPgError(err)
  }

  facade(host: FacadeHost<pg.PoolClient>): unknown {
    return createPgPoolFacade(this.#pg, host)
  }
}

/**
 * The PostgreSQL driver for routemate, over `pg` (node-postgres, an optional peer dependency):
 * one `pg.Pool` per node (plus a read-only pool on the primary for `readOnly` reads that fall back
 * to it), probes with `pg_is_in_recovery()` and WAL LSNs, and `router.pool()` as a `pg.Pool`.
 * Each node's `pool` options go to `pg.Pool` (default `max` 10).
 *
 * @example
 * ```ts
 * import { createRouter } from 'routemate'
 * import { pgDriver } from 'routemate/pg'
 * const router = createRouter({ driver: pgDriver(), primary: 'postgres://app@db1/app', replicas: ['postgres://app@db2/app'] })
 * ```
 */
export function pgDriver(options: PgDriverOptions = {}): Driver<pg.PoolClient> {
  return new PgDriver(options)
}
