import { connect as netConnect, type Socket } from 'node:net'
import type { Connection } from 'mysql2/promise'
import type { ProbeConnectionOps } from '../health/kept-connection-prober.js'
import type { DriverNodeOptions, ProbeResult } from '../router/driver.js'
import {
  classifyMysqlError,
  isPrivilegeError,
  isSyntaxError,
  isUnknownVariableError,
} from './mysql2-errors.js'
import { type CoreConnection, destroySocketLater } from './mysql2-internals.js'
import type { Mysql2Module } from './mysql2-node-pool.js'
import { probeConnectionOptions } from './mysql2-options.js'
import { parseReplicaStatus, type ReplicaStatus, replicaStatusStatements } from './mysql2-replica-status.js'
import { parseServerVersion, type ServerVersion } from './mysql2-server-version.js'

type Row = Record<string, unknown>

/** Runs one probe statement and resolves to its rows as plain objects. */
export type ProbeRows = (sql: string) => Promise<Row[]>

const noop = (): void => {}

/** The core (callback) connection under a promise connection. */
function coreOfConnection(conn: Connection): CoreConnection {
  return (conn as unknown as { connection: CoreConnection }).connection
}

/** Whether a server variable's value means "on" (`1`, `ON`, MariaDB 11's `NO_LOCK`...). */
function isOn(v: unknown): boolean {
  if (typeof v === 'number') return v !== 0
  if (typeof v === 'bigint') return v !== 0n
  if (typeof v === 'boolean') return v
  const s = typeof v === 'string' ? v : v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : ''
  return !['', '0', 'OFF', 'FALSE'].includes(s.trim().toUpperCase())
}

function str(v: unknown): string {
  if (typeof v === 'string') return v
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8')
  return v === null || v === undefined ? '' : String(v)
}

async function rows(conn: Connection, sql: string): Promise<Row[]> {
  const [result] = await conn.query({ sql, rowsAsArray: false })
  return Array.isArray(result) ? (result as Row[]) : []
}

function gtidColumns(version: ServerVersion): string {
  return version.flavour === 'mariadb'
    ? '@@GLOBAL.gtid_binlog_pos AS binlog_pos, @@GLOBAL.gtid_slave_pos AS slave_pos'
    : '@@GLOBAL.gtid_mode AS gtid_mode, @@GLOBAL.gtid_executed AS gtid_executed'
}

/** Reads `innodb_read_only` and the flavour's GTID variables; servers without InnoDB lack the first. */
async function stateRow(q: ProbeRows, version: ServerVersion): Promise<Row> {
  const gtid = gtidColumns(version)
  try {
    return (await q(`SELECT @@GLOBAL.innodb_read_only AS innodb_read_only, ${gtid}`))[0] ?? {}
  } catch (err) {
    if (!isUnknownVariableError(err)) throw err
    return (await q(`SELECT ${gtid}`))[0] ?? {}
  }
}

/**
 * Reads `@@read_only`, `VERSION()`, `@@innodb_read_only` and the GTID variables: in one round trip
 * when the handshake tells the flavour (and `VERSION()` agrees), else in two (first the version,
 * then the flavour's variables), which also covers servers lacking a variable.
 */
async function readState(
  q: ProbeRows,
  hint: string | undefined,
): Promise<{ version: ServerVersion; row: Row }> {
  if (typeof hint === 'string') {
    const guess = parseServerVersion(hint)
    try {
      const [row] = await q(
        'SELECT @@GLOBAL.read_only AS read_only, VERSION() AS version, ' +
          `@@GLOBAL.innodb_read_only AS innodb_read_only, ${gtidColumns(guess)}`,
      )
      const version = parseServerVersion(str(row?.version))
      if (row !== undefined && version.flavour === guess.flavour) return { version, row }
    } catch (err) {
      if (!isUnknownVariableError(err)) throw err
    }
  }
  const [first] = await q('SELECT @@GLOBAL.read_only AS read_only, VERSION() AS version')
  const version = parseServerVersion(str(first?.version))
  return { version, row: { ...first, ...(await stateRow(q, version)) } }
}

/**
 * The node's GTID position. MariaDB: a primary's `@@gtid_binlog_pos` (everything it committed to
 * its binary log); a replica's `@@gtid_slave_pos`, the position the replica has *applied*: it is
 * updated in the same transaction as each replicated change (`mysql.gtid_slave_pos`), it does not
 * depend on `log_slave_updates`, and unlike `@@gtid_current_pos` it ignores transactions the node
 * wrote itself (a demoted primary's or errant local writes) that could make it look further along
 * than it is. MySQL: `@@gtid_executed` on both roles (it includes applied transactions), only when
 * `gtid_mode` is `ON`/`ON_PERMISSIVE`; otherwise there is no usable position. Whitespace (MySQL
 * prints a newline after each comma) is removed. A primary with an empty position has none.
 */
function positionOf(version: ServerVersion, replica: boolean, state: Row): string | undefined {
  let pos: string
  if (version.flavour === 'mariadb') pos = str(replica ? state.slave_pos : state.binlog_pos)
  else if (str(state.gtid_mode).toUpperCase().startsWith('ON')) pos = str(state.gtid_executed)
  else return undefined
  pos = pos.replace(/\s+/g, '')
  // A primary that has written nothing yet: no position (an empty one would be a lag sample that
  // no replica ever "reaches", see gtidReached). A replica's empty position is real: nothing applied.
  return pos === '' && !replica ? undefined : pos
}

/** How long a node whose user may not read replication status is not asked again. */
const STATUS_DENIED_RETRY_MS = 60_000

/**
 * Remembers, per node URL, until when not to ask for replication status after a privilege error
 * (saves a failing round trip per probe; asked again after a minute, in case it was granted).
 */
export type ProbeMemo = Map<string, number>

/**
 * Reads replication status. A user without the privilege to read it (MySQL `REPLICATION CLIENT`,
 * MariaDB `SLAVE MONITOR`) gets `undefined` instead of a failed probe; so does any other statement
 * error. Connection errors fail the probe.
 */
async function replicaStatus(
  q: ProbeRows,
  version: ServerVersion,
  node: DriverNodeOptions,
  memo: ProbeMemo,
): Promise<ReplicaStatus | undefined> {
  const deniedUntil = memo.get(node.url)
  if (deniedUntil !== undefined) {
    if (Date.now() < deniedUntil) return undefined
    memo.delete(node.url)
  }
  const [first, fallback] = replicaStatusStatements(version)
  for (const sql of [first, fallback]) {
    try {
      return parseReplicaStatus(await q(sql))
    } catch (err) {
      if (sql === first && isSyntaxError(err)) continue
      if (isPrivilegeError(err)) memo.set(node.url, Date.now() + STATUS_DENIED_RETRY_MS)
      if (isPrivilegeError(err) || classifyMysqlError(err) === 'statement') return undefined
      throw err
    }
  }
  return undefined
}

/** A probe connection, flagged when it reported an error or ended. */
interface MysqlProbeConn {
  readonly conn: Connection
  readonly core: CoreConnection
  readonly socket: { destroy(): void } | undefined
  broken: boolean
}

/** Opens a probe's single connection, owning its socket so an abort destroys it even while connecting. */
async function connectProbe(
  lib: Mysql2Module,
  node: DriverNodeOptions,
  signal: AbortSignal,
): Promise<MysqlProbeConn> {
  signal.throwIfAborted()
  const options = probeConnectionOptions(node) as Record<string, unknown>
  const userStream = options.stream
  let socket: { destroy(): void } | undefined
  options.stream = (opts: { config: { socketPath?: string; port?: number; host?: string } }) => {
    if (typeof userStream === 'function') socket = (userStream as (o: unknown) => Socket)(opts)
    else if (userStream !== undefined) socket = userStream as Socket
    else {
      const c = opts.config
      const s = c.socketPath ? netConnect(c.socketPath) : netConnect(c.port ?? 3306, c.host ?? 'localhost')
      if (!c.socketPath) s.setNoDelay(true)
      socket = s
    }
    return socket
  }
  const abort = () => socket?.destroy()
  signal.addEventListener('abort', abort, { once: true })
  try {
    const conn = await lib.createConnection(options)
    const core = coreOfConnection(conn)
    const probeConn: MysqlProbeConn = { conn, core, socket, broken: false }
    const broken = (): void => {
      probeConn.broken = true
    }
    core.on('error', broken)
    core.on('end', broken)
    signal.throwIfAborted()
    return probeConn
  } catch (err) {
    socket?.destroy()
    throw err
  } finally {
    signal.removeEventListener('abort', abort)
  }
}

/** The probe's statements on an open mysql2 connection (see {@link probeNode}). */
function probeOn(c: MysqlProbeConn, node: DriverNodeOptions, memo: ProbeMemo): Promise<ProbeResult> {
  return probeWith((sql) => rows(c.conn, sql), c.core._handshakePacket?.serverVersion, node, memo)
}

/**
 * Runs a probe's statements on an open connection of any MySQL driver (`mysql2`, the `mariadb`
 * connector): `q` runs one statement and resolves to its rows as objects; `hint` is the server
 * version from the handshake (`undefined` when unknown: one more round trip). See {@link probeNode}.
 *
 * @example
 * ```ts
 * const result = await probeWith((sql) => conn.query(sql), conn.serverVersion(), node, memo)
 * ```
 */
export async function probeWith(
  q: ProbeRows,
  hint: string | undefined,
  node: DriverNodeOptions,
  memo: ProbeMemo,
): Promise<ProbeResult> {
  const { version, row } = await readState(q, hint)
  const replica = isOn(row.read_only) || isOn(row.innodb_read_only)
  const position = positionOf(version, replica, row)
  const status = replica ? await replicaStatus(q, version, node, memo) : undefined
  return {
    role: replica ? 'replica' : 'primary',
    ...(position !== undefined ? { position } : {}),
    ...(status !== undefined ? { replicating: status.replicating } : {}),
    ...(status?.reportedLagMs !== undefined ? { reportedLagMs: status.reportedLagMs } : {}),
  }
}

/**
 * How the probes of one node connect and query, for {@link KeptConnectionProber} (and the
 * one-shot {@link probeNode}). Closing says goodbye with `COM_QUIT` (no "Aborted connection"
 * warning in the server log); destroying drops the socket at once.
 */
export function mysqlProbeOps(
  lib: Mysql2Module,
  node: DriverNodeOptions,
  memo: ProbeMemo,
): ProbeConnectionOps<MysqlProbeConn> {
  return {
    connect: (signal) => connectProbe(lib, node, signal),
    probe: (c) => probeOn(c, node, memo),
    broken: (c) => c.broken,
    setActive(c, active) {
      const stream = c.core.stream as { ref?(): void; unref?(): void } | undefined
      if (active) stream?.ref?.()
      else stream?.unref?.()
    },
    close(c) {
      c.broken = true
      c.conn.end().catch(noop)
      destroySocketLater(c.core, Math.max(1000, node.connectTimeoutMs))
    },
    destroy(c) {
      c.broken = true
      c.socket?.destroy()
    },
  }
}

/**
 * Probes one node on a fresh single connection (never from the pool): `@@read_only`,
 * `@@innodb_read_only` and `VERSION()` give the role (`replica` when either is on) and the flavour,
 * read with the GTID position in one round trip; on a replica, a second one reads the replication
 * status (`replicating`, `reportedLagMs`), unless the user was recently refused it (`memo`).
 * When `signal` aborts, the socket is destroyed at once, even while still connecting; a finished
 * probe says goodbye with `COM_QUIT` (no "Aborted connection" warning in the server log).
 *
 * @example
 * ```ts
 * const result = await probeNode(mysql2, node, AbortSignal.timeout(500), memo)
 * // { role: 'replica', position: '0-1-42', replicating: true, reportedLagMs: 0 }
 * ```
 */
export async function probeNode(
  lib: Mysql2Module,
  node: DriverNodeOptions,
  signal: AbortSignal,
  memo: ProbeMemo = new Map(),
): Promise<ProbeResult> {
  const ops = mysqlProbeOps(lib, node, memo)
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
