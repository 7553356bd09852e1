import type pg from 'pg'
import type { ProbeConnectionOps } from '../health/kept-connection-prober.js'
import type { DriverNodeOptions } from '../router/driver.js'
import { destroyClient, refClient } from './pg-internals.js'
import { clientOptionsOf } from './pg-node-pool.js'
import { poolPasswordOf } from './pg-pool-options.js'
import { PG_PROBE_SQL } from './pg-sql.js'

const noop = (): void => {}

/** A probe connection, flagged when it reported an error or ended. */
interface PgProbeConn {
  readonly client: pg.Client
  broken: boolean
}

/** `application_name` of probe connections (unless the node's options set one), for `pg_stat_activity`. */
const PROBE_APPLICATION_NAME = 'routemate-probe'

/**
 * How the probes of one node connect and query: a plain `pg.Client` (not from the pool) with the
 * node's client options (`ssl`, `password`...; not the pool's own) and `application_name`
 * `routemate-probe` unless they set one, bounded by the probe deadline. A `pool.password` is used
 * when the URL has none, as in the pool.
 */
export function pgProbeOps(lib: typeof pg, node: DriverNodeOptions): ProbeConnectionOps<PgProbeConn> {
  const clientOptions = clientOptionsOf(node.pool)
  const password = poolPasswordOf(node.url, node.pool)
  return {
    async connect(signal) {
      signal.throwIfAborted()
      const client = new lib.Client({
        application_name: PROBE_APPLICATION_NAME,
        ...clientOptions,
        connectionString: node.url,
        connectionTimeoutMillis: node.connectTimeoutMs,
      })
      if (password !== undefined) client.password = password as string
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
      const res = await conn.client.query<{ in_recovery: boolean; lsn: string | null }>(PG_PROBE_SQL)
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
