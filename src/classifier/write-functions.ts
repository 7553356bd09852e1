/**
 * PostgreSQL functions a replica must not run: they write (sequences, large objects, stats, slots),
 * take locks, notify, read session-local state (`currval`, `lastval`), fail on a standby
 * (`pg_current_wal_lsn`), or run SQL text or connections of their own (`dblink`, `query_to_xml`).
 * A trailing `*` marks a prefix.
 *
 * @example
 * ```ts
 * PG_WRITE_FUNCTIONS.includes('nextval') // true
 * ```
 */
export const PG_WRITE_FUNCTIONS: readonly string[] = [
  'nextval',
  'setval',
  'currval',
  'lastval',
  'set_config',
  'setseed',
  'pg_notify',
  'pg_promote',
  'pg_reload_conf',
  'pg_rotate_logfile',
  'pg_export_snapshot',
  'pg_stat_statements_reset',
  'gin_clean_pending_list',
  'query_to_xml*',
  'cursor_to_xml*',
  'ts_stat',
  'txid_current*',
  'pg_current_*',
  'pg_advisory*',
  'pg_try_advisory*',
  'dblink*',
  'lo_*',
  'pg_stat_reset*',
  'pg_replication_origin*',
  'pg_replication_slot*',
  'pg_create_*',
  'pg_drop_*',
  'pg_copy_*',
  'pg_logical_*',
  'pg_log_*',
  'pg_wal_replay_*',
  'pg_switch_*',
  'pg_backup_*',
  'pg_start_backup',
  'pg_stop_backup',
  'pg_cancel_*',
  'pg_terminate_*',
  'pg_file_*',
  'pg_import_*',
  'pg_set_*',
  'pg_clear_*',
  'pg_restore_*',
  'pg_sync_*',
  'pg_truncate_*',
  'brin_*',
  'binary_upgrade_*',
]

/**
 * MySQL/MariaDB functions a replica must not run: user locks, session-local results
 * (`LAST_INSERT_ID`, `FOUND_ROWS`, `ROW_COUNT`, `CONNECTION_ID`), MariaDB sequences, replication
 * waits, and plugin services that change server state. A trailing `*` marks a prefix.
 *
 * @example
 * ```ts
 * MYSQL_WRITE_FUNCTIONS.includes('get_lock') // true
 * ```
 */
export const MYSQL_WRITE_FUNCTIONS: readonly string[] = [
  'get_lock',
  'release_lock',
  'release_all_locks',
  'is_free_lock',
  'is_used_lock',
  'last_insert_id',
  'found_rows',
  'row_count',
  'connection_id',
  'nextval',
  'setval',
  'lastval',
  'master_pos_wait',
  'source_pos_wait',
  'master_gtid_wait',
  'wait_for_executed_gtid_set',
  'wait_until_sql_thread_after_gtids',
  'service_*',
  'version_tokens_*',
  'group_replication_*',
  'asynchronous_connection_failover_*',
  'keyring_*',
  'audit_log_*',
]

/**
 * Tells whether `sql[start, end)` names a function that sends its statement to the primary.
 *
 * @example
 * ```ts
 * isWrite('SELECT nextval(1)', 7, 14) // true
 * ```
 */
export type WriteFunctionMatcher = (sql: string, start: number, end: number) => boolean

/**
 * Builds a case-insensitive, allocation-free matcher over function names (`name` or `prefix*`),
 * bucketed by first letter. Names are matched without their schema: pass bare names.
 *
 * @example
 * ```ts
 * const isWrite = createWriteFunctionMatcher(['nextval', 'lo_*'])
 * isWrite('lo_import', 0, 9) // true
 * ```
 */
export function createWriteFunctionMatcher(names: readonly string[]): WriteFunctionMatcher {
  const buckets = new Map<number, Array<{ name: string; prefix: boolean }>>()
  for (const raw of names) {
    const prefix = raw.endsWith('*')
    const name = (prefix ? raw.slice(0, -1) : raw).toLowerCase()
    if (name === '') continue
    const key = name.charCodeAt(0)
    const list = buckets.get(key) ?? []
    list.push({ name, prefix })
    buckets.set(key, list)
  }
  return (sql, start, end) => {
    const list = buckets.get(lower(sql.charCodeAt(start)))
    if (list === undefined) return false
    const len = end - start
    outer: for (let e = 0; e < list.length; e++) {
      const { name, prefix } = list[e]!
      if (prefix ? len < name.length : len !== name.length) continue
      for (let k = 1; k < name.length; k++) {
        if (lower(sql.charCodeAt(start + k)) !== name.charCodeAt(k)) continue outer
      }
      return true
    }
    return false
  }
}

function lower(c: number): number {
  return c >= 65 && c <= 90 ? c + 32 : c
}

/**
 * The bare, lower-case function name of a user's `writeFunctions` entry: quotes dropped, schema
 * dropped (`"audit".Touch` → `touch`); `''` when nothing is left.
 *
 * @example
 * ```ts
 * bareFunctionName('audit.touch') // 'touch'
 * ```
 */
export function bareFunctionName(entry: string): string {
  const unquoted = entry.replace(/["`]/g, '').trim()
  const dot = unquoted.lastIndexOf('.')
  return unquoted
    .slice(dot + 1)
    .trim()
    .toLowerCase()
}
