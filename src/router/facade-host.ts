import type { QueryResult } from './driver.js'
import type { Statement } from './statement.js'

/**
 * A connection checked out through a router's pool facade, chosen by the caller's scope. Drivers'
 * facades wrap it in their native client shape.
 */
export interface ScopedConnection<Conn = unknown> {
  /** The driver's raw connection. */
  readonly conn: Conn
  /** Name of the node it belongs to. */
  readonly node: string
  /** Statements on it must be reads (a `readOnly` scope or a read-only transaction). */
  readonly readOnly: boolean
  /** It is a transaction's connection: `release` leaves it to the transaction. */
  readonly pinned: boolean
  /** Throws `ReadOnlyViolationError` for an evident write on a read-only connection. */
  check(text: string): void
  /**
   * Maps transaction control on a transaction's connection: BEGIN/START TRANSACTION become a
   * savepoint, COMMIT/END release it, ROLLBACK rolls back to it — so a library's own transaction
   * nested in `router.transaction` cannot end the outer one. Other text is returned as is.
   */
  translate(text: string): string
  /** Records an error raised on this connection (passive health) and maps it; returns what to throw. */
  fail(err: unknown): unknown
  /** Gives the connection back (`destroy` closes it). Idempotent. */
  release(destroy: boolean): void
}

/** What a driver's pool facade may use of the router. */
export interface FacadeHost<Conn = unknown> {
  /** Routes one statement by the caller's scope, like `router.query`. */
  query(sql: Statement, params?: readonly unknown[]): Promise<QueryResult>
  /** Checks out a connection chosen by the caller's scope. */
  connect(): Promise<ScopedConnection<Conn>>
  /** Sum of every node's pool occupancy. */
  counts(): { total: number; idle: number; waiting: number }
  /** Closes the router. */
  close(): Promise<void>
  /** Subscribes to background errors (an idle pooled connection dying, ...); returns the unsubscribe function. */
  onError(listener: (err: unknown) => void): () => void
}
