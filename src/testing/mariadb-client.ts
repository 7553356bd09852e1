import type { Connection } from 'mysql2/promise'
import { MariaDbClusterError } from './mariadb-cluster-error.js'

/** Where and as whom {@link mariaDbQuery} connects. The host is always `127.0.0.1`. */
export interface MariaDbTarget {
  readonly port: number
  readonly user: string
  readonly password: string
  /** Default database; none when omitted. */
  readonly database?: string
}

/** Bounds of one {@link mariaDbQuery} call. */
export interface MariaDbQueryLimits {
  /** Connect (TCP + handshake) deadline in ms. Default 5000. */
  readonly connectTimeoutMs?: number
  /** Deadline for the whole call (connect + statement) in ms. Default 30000. */
  readonly timeoutMs?: number
}

type Mysql2 = typeof import('mysql2/promise')
let mysql2: Promise<Mysql2> | undefined

/**
 * Loads `mysql2/promise` on first use, so importing `routemate/testing` (and starting PostgreSQL
 * clusters) never requires it. Rejects with a `MariaDbClusterError` saying how to install it.
 *
 * @example
 * ```ts
 * const { createConnection } = await loadMysql2()
 * ```
 */
export function loadMysql2(): Promise<Mysql2> {
  mysql2 ??= import('mysql2/promise').catch((cause: unknown) => {
    mysql2 = undefined
    throw new MariaDbClusterError('startMariaDbCluster needs the `mysql2` package: npm install -D mysql2', {
      cause,
    })
  })
  return mysql2
}

/**
 * Runs one statement on a fresh `mysql2/promise` connection to 127.0.0.1 (never `localhost`, which
 * would mean the Unix socket) and closes it. Resolves to the rows of a result set, or to a
 * one-element array holding the `ResultSetHeader` of a statement without one.
 *
 * Defaults: connect timeout 5 s, overall deadline 30 s; on the deadline the connection is destroyed
 * and the call rejects (a SIGSTOPped server never answers). Driver errors pass through untouched.
 *
 * @example
 * ```ts
 * const rows = await mariaDbQuery({ port, user: 'app', password, database: 'app' }, 'SELECT ?', [1])
 * ```
 */
export async function mariaDbQuery(
  target: MariaDbTarget,
  sql: string,
  params: readonly unknown[] = [],
  limits: MariaDbQueryLimits = {},
): Promise<unknown[]> {
  const { createConnection } = await loadMysql2()
  const timeoutMs = limits.timeoutMs ?? 30_000
  const connectTimeout = Math.max(1, Math.min(limits.connectTimeoutMs ?? 5000, timeoutMs))
  let conn: Connection | undefined
  let timer: NodeJS.Timeout | undefined
  let timedOut = false
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true
      conn?.destroy()
      reject(new MariaDbClusterError(`MariaDB 127.0.0.1:${target.port}: no answer within ${timeoutMs} ms`))
    }, timeoutMs)
  })
  const run = async (): Promise<unknown[]> => {
    const connecting = createConnection({
      host: '127.0.0.1',
      port: target.port,
      user: target.user,
      password: target.password,
      ...(target.database !== undefined ? { database: target.database } : {}),
      connectTimeout,
    })
    conn = await connecting
    if (timedOut) {
      conn.destroy()
      return []
    }
    let rows: unknown
    try {
      ;[rows] = await conn.query(sql, params as unknown[])
    } catch (err) {
      await conn.end().catch(() => conn?.destroy())
      throw err
    }
    await conn.end().catch(() => conn?.destroy())
    return Array.isArray(rows) ? (rows as unknown[]) : [rows]
  }
  const running = run()
  // After the deadline wins, a late failure of `running` must not become an unhandled rejection.
  running.catch(() => {})
  try {
    return await Promise.race([running, deadline])
  } finally {
    clearTimeout(timer)
  }
}
