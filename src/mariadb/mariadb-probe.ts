import type { Connection } from 'mariadb'
import type { ProbeConnectionOps } from '../health/kept-connection-prober.js'
import type { DriverNodeOptions, ProbeResult } from '../router/driver.js'
import { killQuery } from '../mysql2/kill-query.js'
import { type ProbeMemo, probeWith } from '../mysql2/mysql2-probe.js'
import {
  dropConnection,
  dropSocket,
  type MariadbModule,
  socketOf,
  withOwnSocket,
} from './mariadb-node-pool.js'
import { mariadbProbeOptions } from './mariadb-options.js'

const noop = (): void => {}

/** A probe's single connection, flagged when it reported an error or ended. */
export interface MariadbProbeConn {
  readonly conn: Connection
  broken: boolean
}

/** Runs one statement and resolves to its rows as plain objects. */
export async function rowsOf(
  conn: Connection,
  sql: string,
  values?: readonly unknown[],
): Promise<Record<string, unknown>[]> {
  const rows = (await conn.query({ sql, rowsAsArray: false, bigIntAsNumber: true }, values)) as unknown
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : []
}

/**
 * How the probes (and `KILL QUERY` cancellations) of one node connect and query over the
 * `mariadb` connector, for `KeptConnectionProber`: connecting is bounded by `connectTimeoutMs`
 * and given up (the connection destroyed) when `signal` aborts; the statements are the ones every
 * MySQL driver shares (`probeWith`); closing says goodbye with `COM_QUIT`, destroying drops the
 * socket at once.
 *
 * @example
 * ```ts
 * const prober = new KeptConnectionProber(mariadbProbeOps(mariadb, node, memo), 60_000)
 * ```
 */
export function mariadbProbeOps(
  lib: MariadbModule,
  node: DriverNodeOptions,
  memo: ProbeMemo,
): ProbeConnectionOps<MariadbProbeConn> {
  return {
    async connect(signal) {
      signal.throwIfAborted()
      const own = withOwnSocket(mariadbProbeOptions(node))
      const pending = lib.createConnection(own.options as Parameters<MariadbModule['createConnection']>[0])
      let onAbort = noop
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(signal.reason)
        signal.addEventListener('abort', onAbort, { once: true })
      })
      let conn: Connection
      try {
        conn = await Promise.race([pending, aborted])
      } catch (err) {
        // The socket is dropped at once; a connection that opens after the abort is closed too.
        dropSocket(own.socket())
        pending.then((c) => c.destroy(), noop)
        throw err
      } finally {
        signal.removeEventListener('abort', onAbort)
      }
      own.adopt(conn)
      const c: MariadbProbeConn = { conn, broken: false }
      conn.on('error', () => {
        c.broken = true
      })
      conn.on('end', () => {
        c.broken = true
      })
      return c
    },
    probe: (c) => probeWith((sql) => rowsOf(c.conn, sql), c.conn.serverVersion(), node, memo),
    broken: (c) => c.broken || !c.conn.isValid(),
    setActive(c, active) {
      const socket = socketOf(c.conn)
      if (active) socket?.ref()
      else socket?.unref()
    },
    close(c) {
      c.broken = true
      const timer = setTimeout(() => dropConnection(c.conn), Math.max(1000, node.connectTimeoutMs))
      timer.unref()
      c.conn
        .end()
        .catch(noop)
        .finally(() => clearTimeout(timer))
    },
    destroy(c) {
      c.broken = true
      dropConnection(c.conn)
    },
  }
}

/**
 * Probes one node on a fresh single connection (never from the pool), as the `mysql2` driver does:
 * role from `@@read_only`/`@@innodb_read_only`, GTID position, replication status on a replica.
 *
 * @example
 * ```ts
 * await probeMariadbNode(mariadb, node, AbortSignal.timeout(500), new Map()) // { role: 'replica', position: '0-1-42', ... }
 * ```
 */
export async function probeMariadbNode(
  lib: MariadbModule,
  node: DriverNodeOptions,
  signal: AbortSignal,
  memo: ProbeMemo,
): Promise<ProbeResult> {
  const ops = mariadbProbeOps(lib, node, memo)
  const c = await ops.connect(signal)
  const abort = () => ops.destroy(c)
  signal.addEventListener('abort', abort, { once: true })
  let ok = false
  try {
    const result = await ops.probe(c, signal)
    ok = true
    return result
  } finally {
    signal.removeEventListener('abort', abort)
    if (ok && !signal.aborted) ops.close(c)
    else ops.destroy(c)
  }
}

/**
 * Cancels the statement running on `conn`: `KILL QUERY <its connection id>` from a short-lived
 * connection (see the `mysql2` driver's `cancel`). Resolves `true` once the server ran it,
 * `false` when it could not; never rejects.
 *
 * @example
 * ```ts
 * await cancelMariadbQuery(mariadb, conn, node, AbortSignal.timeout(5000), memo)
 * ```
 */
export async function cancelMariadbQuery(
  lib: MariadbModule,
  conn: Connection,
  node: DriverNodeOptions,
  signal: AbortSignal,
  memo: ProbeMemo,
): Promise<boolean> {
  return killQuery(mariadbProbeOps(lib, node, memo), conn.threadId, signal)
}
