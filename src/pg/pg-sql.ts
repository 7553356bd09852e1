/**
 * The PostgreSQL SQL every PostgreSQL driver sends (`pg`, postgres.js): probe, WAL positions,
 * `BEGIN` and savepoints, and the replay wait. No driver module is imported here.
 */
import type { BeginOptions, IsolationLevel } from '../router/driver.js'
import { lsnReached } from './pg-position.js'

/** A probe: the node's role and its position (replay LSN on a standby, write LSN on a primary). */
export const PG_PROBE_SQL =
  'SELECT pg_is_in_recovery() AS in_recovery, CASE WHEN pg_is_in_recovery() ' +
  'THEN pg_last_wal_replay_lsn()::text ELSE pg_current_wal_lsn()::text END AS lsn'

/**
 * The primary's position after a write: `pg_current_wal_insert_lsn()`, not `pg_current_wal_lsn()`:
 * with `synchronous_commit = off` (settable per transaction) a `COMMIT` returns before its WAL is
 * written, so the write position read after it may still be short of that commit; the insert
 * position never is.
 */
export const PG_INSERT_LSN_SQL = 'SELECT pg_current_wal_insert_lsn()::text AS lsn'

/** A standby's replay position. */
export const PG_REPLAY_LSN_SQL = 'SELECT pg_last_wal_replay_lsn()::text AS lsn'

const ISOLATION: Record<IsolationLevel, string> = {
  'read uncommitted': 'READ UNCOMMITTED',
  'read committed': 'READ COMMITTED',
  'repeatable read': 'REPEATABLE READ',
  serializable: 'SERIALIZABLE',
}

/** `BEGIN [ISOLATION LEVEL ...] [READ ONLY]` (a `TypeError` for an unknown level). */
export function pgBeginSql(options: BeginOptions): string {
  let sql = 'BEGIN'
  if (options.isolation !== undefined) {
    const level = ISOLATION[options.isolation]
    if (level === undefined) throw new TypeError(`unknown isolation level "${String(options.isolation)}"`)
    sql += ` ISOLATION LEVEL ${level}`
  }
  return options.readOnly ? `${sql} READ ONLY` : sql
}

/** `SAVEPOINT`, `RELEASE SAVEPOINT` or `ROLLBACK TO SAVEPOINT` of `name`. */
export function pgSavepointSql(name: string, op: 'create' | 'release' | 'rollback'): string {
  if (op === 'create') return `SAVEPOINT ${name}`
  if (op === 'release') return `RELEASE SAVEPOINT ${name}`
  return `ROLLBACK TO SAVEPOINT ${name}`
}

/**
 * Polls a standby's replay position (`readReplayLsn`, every 5 ms) until it reaches `target` or
 * `timeoutMs` passes; resolves to the last position read (`undefined`: not a standby).
 */
export async function waitForLsn(
  readReplayLsn: () => Promise<string | undefined>,
  target: string,
  timeoutMs: number,
): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const lsn = await readReplayLsn()
    if (lsn === undefined || lsnReached(lsn, target)) return lsn
    const left = deadline - Date.now()
    if (left <= 0) return lsn
    await new Promise((r) => setTimeout(r, Math.min(5, left)))
  }
}
