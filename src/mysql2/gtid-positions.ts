import { gtidFormat, gtidReached } from './gtid.js'

/**
 * Runs one internal statement on a checked-out connection and resolves to its rows as plain
 * objects; `timeoutMs` (0 = none) is a client-side bound the driver applies as it can. Each MySQL
 * driver (`mysql2`, the `mariadb` connector) supplies its own; the GTID logic here is shared.
 */
export type RowsRunner = (
  sql: string,
  values?: readonly unknown[],
  timeoutMs?: number,
) => Promise<Record<string, unknown>[]>

/**
 * The primary's GTID position after a write on this connection (for read-your-writes), for every
 * MySQL driver. MariaDB: `@@gtid_binlog_pos` read on the writing connection right after its commit
 * includes that commit in every domain (perhaps later ones of other sessions too: waiting for those
 * is harmless), whereas `@@last_gtid` only covers one domain and only this connection's last write.
 * MySQL: `@@gtid_executed`. Whitespace is removed.
 *
 * @example
 * ```ts
 * const pos = await positionAfterWrite((sql) => rowsOf(conn, sql), true, 5000) // '0-1-42'
 * ```
 */
export async function positionAfterWrite(
  run: RowsRunner,
  mariadb: boolean,
  timeoutMs: number,
): Promise<string> {
  const sql = mariadb ? 'SELECT @@GLOBAL.gtid_binlog_pos AS pos' : 'SELECT @@GLOBAL.gtid_executed AS pos'
  const rows = await run(sql, undefined, timeoutMs)
  if (rows.length === 0) throw new Error(`${sql} returned no row`)
  return String(rows[0]?.pos ?? '').replace(/\s+/g, '')
}

/**
 * On a replica's connection: waits up to `timeoutMs` (0 = just read) until its applied GTID
 * position reaches `target`; resolves to the position seen last (`undefined` if unknown). MariaDB:
 * `MASTER_GTID_WAIT` blocks on the server (no polling), then `@@gtid_slave_pos` is read; MySQL:
 * `@@gtid_executed` is polled. A target of the other flavour's format is only read, never waited
 * for. `baseTimeoutMs` is the node's `queryTimeoutMs` (0 = none), the client-side bound of each
 * internal statement (the wait's own statement gets it plus `timeoutMs`).
 *
 * @example
 * ```ts
 * const seen = await waitForPosition(run, true, '0-1-42', 500, 0)
 * ```
 */
export async function waitForPosition(
  run: RowsRunner,
  mariadb: boolean,
  target: string,
  timeoutMs: number,
  baseTimeoutMs: number,
): Promise<string | undefined> {
  const read = async (): Promise<string | undefined> => {
    const sql = mariadb ? 'SELECT @@GLOBAL.gtid_slave_pos AS pos' : 'SELECT @@GLOBAL.gtid_executed AS pos'
    const pos = (await run(sql, undefined, baseTimeoutMs))[0]?.pos
    return typeof pos === 'string' ? pos.replace(/\s+/g, '') : undefined
  }
  const format = gtidFormat(target)
  if (timeoutMs <= 0 || format === undefined || format !== (mariadb ? 'mariadb' : 'mysql')) return read()
  if (mariadb) {
    // MASTER_GTID_WAIT blocks on the server until @@gtid_slave_pos reaches `target` (0) or the
    // timeout passes (-1): no polling. Fractional seconds are allowed. The position is read in
    // the same statement, after the wait (select items are evaluated in order; were one read
    // first, it would only look older than the target: the read then goes to the primary).
    const rows = await run(
      'SELECT MASTER_GTID_WAIT(?, ?) AS r, @@GLOBAL.gtid_slave_pos AS pos',
      [target, timeoutMs / 1000],
      baseTimeoutMs > 0 ? baseTimeoutMs + timeoutMs : 0,
    )
    const pos = rows[0]?.pos
    return typeof pos === 'string' ? pos.replace(/\s+/g, '') : undefined
  }
  // MySQL: poll @@gtid_executed (as the pg driver polls its replay LSN).
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const pos = await read()
    if (pos === undefined || gtidReached(pos, target)) return pos
    const left = deadline - Date.now()
    if (left <= 0) return pos
    await new Promise((r) => setTimeout(r, Math.min(5, left)))
  }
}
