import type { PoolConnection } from 'mysql2/promise'
import { ReadOnlyViolationError } from '../errors/read-only-violation-error.js'
import { keywordStart, keywordTable, matchKeyword, wordEnd } from '../router/sql-guard.js'
import type { CoreConnection } from './mysql2-internals.js'

/** Makes every transaction of the session read-only (MySQL and MariaDB). */
export const READ_ONLY_SQL = 'SET SESSION TRANSACTION READ ONLY'
/** Reads the session's access mode back: `tx_read_only` (MariaDB, MySQL 5.7) and/or `transaction_read_only` (MySQL 5.7.20+, MariaDB 11.1+). */
const VERIFY_SQL = "SHOW SESSION VARIABLES WHERE Variable_name IN ('tx_read_only', 'transaction_read_only')"

/**
 * Sets a read-only pool's connection to a read-only session and verifies it took: the server then
 * refuses every write of the session itself — also one made by a privileged `SQL SECURITY DEFINER`
 * routine, which `read_only` on a replica does not stop. Throws `ReadOnlyViolationError` if the
 * session does not report read-only afterwards.
 */
export async function establishReadOnlySession(
  conn: PoolConnection,
  node: string,
  timeoutMs: number,
): Promise<void> {
  await establishReadOnlySessionWith(async (sql) => {
    const [rows] = await conn.query({ sql, timeout: timeoutMs, rowsAsArray: false })
    return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : []
  }, node)
}

/**
 * {@link establishReadOnlySession} for any MySQL driver: `q` runs one statement (bounded as the
 * driver can) and resolves to its rows as objects.
 *
 * @example
 * ```ts
 * await establishReadOnlySessionWith((sql) => conn.query(sql), 'primary')
 * ```
 */
export async function establishReadOnlySessionWith(
  q: (sql: string) => Promise<Record<string, unknown>[]>,
  node: string,
): Promise<void> {
  await q(READ_ONLY_SQL)
  const list = (await q(VERIFY_SQL)) as Array<{ Variable_name?: unknown; Value?: unknown }>
  const ok = list.length > 0 && list.every((r) => /^(on|1)$/i.test(String(r.Value)))
  if (!ok) {
    throw new ReadOnlyViolationError(
      `node "${node}": a read-only connection does not report a read-only session after "${READ_ONLY_SQL}"; it is not used`,
    )
  }
}

/**
 * Read-only connections that ran a statement which can change session state from inside the
 * server (`CALL` of a procedure, `DO` of a function): such a routine may have switched the session
 * to read-write or left a transaction open, so the connection is closed instead of pooled.
 */
const tainted = new WeakSet<object>()

/**
 * Whether a statement's text runs a routine that may change session state (`CALL`, `DO`); `arg` is
 * the text or an options object with `sql`.
 *
 * @example
 * ```ts
 * runsRoutine({ sql: 'CALL p()' }) // true
 * ```
 */
export function runsRoutine(arg: unknown): boolean {
  const sql = typeof arg === 'string' ? arg : (arg as { sql?: unknown } | null)?.sql
  if (typeof sql !== 'string') return false
  const i = keywordStart(sql)
  return matchKeyword(sql, i, wordEnd(sql, i), ROUTINES) !== undefined
}

/** The leading keywords that run a routine (see {@link runsRoutine}), matched with no allocation per statement. */
const ROUTINES = keywordTable(['CALL', 'DO'])

/**
 * Watches the statements of a read-only pool's connection (every path — the router, the pool
 * facade, prepared statements — goes through the core connection's `query`/`execute`).
 */
export function watchReadOnlyConnection(core: CoreConnection): void {
  type Method = (this: unknown, sql: unknown, values?: unknown, cb?: unknown) => unknown
  const c = core as unknown as Record<'query' | 'execute', Method>
  for (const method of ['query', 'execute'] as const) {
    const original = c[method]
    if (typeof original !== 'function') continue
    // mysql2's `query` and `execute` take (sql, values, cb) and read no `arguments`: passing the
    // three on spares a rest array and `apply` per statement.
    c[method] = function (this: unknown, sql: unknown, values?: unknown, cb?: unknown) {
      if (runsRoutine(sql)) tainted.add(core)
      return original.call(this, sql, values, cb)
    }
  }
}

/** Whether a read-only connection ran a routine since it was connected (see {@link watchReadOnlyConnection}). */
export function isTainted(core: CoreConnection): boolean {
  return tainted.has(core)
}
