import type { EventEmitter } from 'node:events'
import type { Readable } from 'node:stream'
import type { PoolConnection } from 'mysql2/promise'

/** mysql2's Node-style callback of a query. */
export type QueryCallback = (err: Error | null, result?: unknown, fields?: unknown) => void

/** A mysql2 query or execute command: an emitter of `result`/`fields`/`error`/`end` that can stream its rows. */
export interface Mysql2Command extends EventEmitter {
  stream(options?: { highWaterMark?: number; objectMode?: boolean }): Readable
}

/** The socket under a mysql2 connection (a `net.Socket`, or a `TLSSocket` after STARTTLS). */
interface Socket extends EventEmitter {
  readonly destroyed?: boolean
  destroy(): void
}

/**
 * The callback-style connection under a `mysql2/promise` connection (mysql2's core `Connection` /
 * `PoolConnection`), described by the members routemate uses. Underscored members are mysql2
 * internals: always read them guarded.
 */
export interface CoreConnection extends EventEmitter {
  readonly stream?: Socket
  readonly config: object
  readonly threadId: number | null
  readonly state?: string
  readonly _handshakePacket?: { readonly serverVersion?: string } | null
  query(sql: unknown, values?: unknown, cb?: QueryCallback): Mysql2Command
  execute(sql: unknown, values?: unknown, cb?: QueryCallback): Mysql2Command
  ping(cb?: (err: Error | null) => void): unknown
  escape(value: unknown): string
  escapeId(value: string | string[]): string
  format(sql: string, values?: unknown): string
  pause(): void
  resume(): void
  destroy(): void
}

/** mysql2's callback pool (the `pool` of a `mysql2/promise` pool): its checkout. */
export interface CorePool {
  getConnection(cb: (err: Error | null, conn?: CoreConnection) => void): void
}

/** mysql2's core pool internals (ring queues with `length` and `get(i)`), all optional. */
export interface CorePoolInternals {
  readonly _allConnections?: { readonly length?: number; get?(i: number): unknown }
  readonly _freeConnections?: { readonly length?: number }
  readonly _connectionQueue?: { readonly length?: number }
}

/**
 * The core connection under a promise `PoolConnection` (its `connection` property; mysql2's typings
 * call it a promise `Connection`, but it is the callback one).
 *
 * @example
 * ```ts
 * coreOf(await pool.getConnection()).threadId
 * ```
 */
export function coreOf(conn: PoolConnection): CoreConnection {
  return (conn as unknown as { connection: CoreConnection }).connection
}

/**
 * Destroys a connection's socket at once. mysql2 then fails the command in progress with
 * `PROTOCOL_CONNECTION_LOST` (its `destroy()` only half-closes the socket, and leaves a command
 * pending on a frozen server unanswered).
 *
 * @example
 * ```ts
 * destroySocket(coreOf(conn)) // the query pending on `conn` rejects now
 * ```
 */
export function destroySocket(core: CoreConnection | undefined): void {
  const stream = core?.stream
  if (stream !== undefined && stream.destroyed !== true) stream.destroy()
}

/**
 * Destroys a connection's socket if it is still open after `graceMs`: after a `COM_QUIT` the server
 * closes it, but a frozen server never does, and an open socket keeps the process alive.
 * The timer is `unref()`'d and cleared when the socket closes.
 *
 * @example
 * ```ts
 * conn.end(); destroySocketLater(coreOf(conn), 1000)
 * ```
 */
export function destroySocketLater(core: CoreConnection | undefined, graceMs: number): void {
  const stream = core?.stream
  if (stream === undefined || stream.destroyed === true) return
  const timer = setTimeout(() => stream.destroy(), graceMs)
  timer.unref()
  stream.once('close', () => clearTimeout(timer))
}

/**
 * The length of one of mysql2's internal queues (0 when missing).
 *
 * @example
 * ```ts
 * queueLength((pool.pool as CorePoolInternals)._freeConnections) // idle connections
 * ```
 */
export function queueLength(q: { readonly length?: number } | undefined): number {
  return typeof q?.length === 'number' ? q.length : 0
}

/**
 * Every connection a mysql2 core pool holds (idle or checked out), from its internals; `[]` when
 * they are missing.
 *
 * @example
 * ```ts
 * for (const core of poolConnections(pool.pool as CorePoolInternals)) destroySocket(core)
 * ```
 */
export function poolConnections(pool: CorePoolInternals): CoreConnection[] {
  const all = pool._allConnections
  const out: CoreConnection[] = []
  if (all === undefined || typeof all.get !== 'function') return out
  for (let i = 0; i < queueLength(all); i++) {
    const c = all.get(i)
    if (c !== undefined && c !== null) out.push(c as CoreConnection)
  }
  return out
}
