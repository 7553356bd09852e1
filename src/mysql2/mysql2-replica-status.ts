import { type ServerVersion, versionAtLeast } from './mysql2-server-version.js'

/** What a replica's status rows say about its replication. */
export interface ReplicaStatus {
  /**
   * False when replication is stopped or broken on some channel: its SQL (applier) thread is not
   * running, or its IO (receiver) thread is `No`. An IO thread that is `Connecting` (the primary is
   * down or restarting) still counts as replicating.
   */
  readonly replicating: boolean
  /** The server's own lag estimate (`Seconds_Behind_Master` / `_Source` × 1000), the worst channel's; absent when NULL. */
  readonly reportedLagMs?: number
}

type Row = Readonly<Record<string, unknown>>

function column(row: Row, ...names: string[]): unknown {
  for (const n of names) if (n in row) return row[n]
  return undefined
}

function text(v: unknown): string | undefined {
  if (typeof v === 'string') return v
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8')
  return undefined
}

function seconds(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? v : undefined
  if (typeof v === 'bigint') return v >= 0n ? Number(v) : undefined
  const s = text(v)
  if (s === undefined || s.trim() === '') return undefined
  const n = Number(s)
  return Number.isFinite(n) && n >= 0 ? n : undefined
}

/**
 * Reads the rows of `SHOW REPLICA STATUS` / `SHOW SLAVE STATUS` (MySQL, one row per channel) or
 * `SHOW ALL REPLICAS STATUS` / `SHOW ALL SLAVES STATUS` (MariaDB, one row per connection); both the
 * old (`Slave_IO_Running`, `Seconds_Behind_Master`) and new (`Replica_IO_Running`,
 * `Seconds_Behind_Source`) column names are understood.
 *
 * Returns `undefined` when there is nothing to judge: no rows (replication not configured, e.g. an
 * Aurora reader or a reset replica: the position tracker judges such a node), or only MySQL group
 * replication channels (`group_replication_*`, whose threads do not follow the classic rules).
 * Caveat: with several channels, one stopped channel makes the whole node not replicating.
 *
 * @example
 * ```ts
 * parseReplicaStatus([{ Slave_IO_Running: 'Connecting', Slave_SQL_Running: 'Yes', Seconds_Behind_Master: null }])
 * // { replicating: true }
 * ```
 */
export function parseReplicaStatus(rows: readonly Row[]): ReplicaStatus | undefined {
  let seen = false
  let replicating = true
  let lag: number | undefined
  for (const row of rows) {
    const channel = text(column(row, 'Channel_Name', 'Channel_name')) ?? ''
    if (channel.startsWith('group_replication_')) continue
    const io = text(column(row, 'Replica_IO_Running', 'Slave_IO_Running'))
    const sql = text(column(row, 'Replica_SQL_Running', 'Slave_SQL_Running'))
    if (io === undefined && sql === undefined) continue
    seen = true
    if (sql?.toLowerCase() !== 'yes' || io?.toLowerCase() === 'no') replicating = false
    const s = seconds(column(row, 'Seconds_Behind_Source', 'Seconds_Behind_Master'))
    if (s !== undefined && (lag === undefined || s * 1000 > lag)) lag = s * 1000
  }
  if (!seen) return undefined
  return lag === undefined ? { replicating } : { replicating, reportedLagMs: lag }
}

/**
 * The statements that list a server's replication channels, newest syntax first, the other as a
 * fallback for a server that rejects the first one (error 1064). MySQL: `SHOW REPLICA STATUS` from
 * 8.0.22, else `SHOW SLAVE STATUS`. MariaDB: `SHOW ALL REPLICAS STATUS` from 10.5.1, else
 * `SHOW ALL SLAVES STATUS` (the `ALL` form includes named multi-source connections).
 *
 * Privileges: MySQL `REPLICATION CLIENT`; MariaDB 10.5.9+ `SLAVE MONITOR` (10.5.2–10.5.8
 * `REPLICATION SLAVE ADMIN`, older versions `REPLICATION CLIENT`), or `SUPER`.
 *
 * @example
 * ```ts
 * replicaStatusStatements(parseServerVersion('10.11.6-MariaDB')) // ['SHOW ALL REPLICAS STATUS', 'SHOW ALL SLAVES STATUS']
 * ```
 */
export function replicaStatusStatements(v: ServerVersion): readonly [string, string] {
  if (v.flavour === 'mariadb') {
    return versionAtLeast(v, 10, 5, 1)
      ? ['SHOW ALL REPLICAS STATUS', 'SHOW ALL SLAVES STATUS']
      : ['SHOW ALL SLAVES STATUS', 'SHOW ALL REPLICAS STATUS']
  }
  return versionAtLeast(v, 8, 0, 22)
    ? ['SHOW REPLICA STATUS', 'SHOW SLAVE STATUS']
    : ['SHOW SLAVE STATUS', 'SHOW REPLICA STATUS']
}
