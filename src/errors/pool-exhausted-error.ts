import { RoutemateError } from './routemate-error.js'

/** Why a checkout of a node's pool failed: it waited too long, or too many were waiting already. */
export type PoolExhaustedReason = 'timeout' | 'queue-full'

/** What a {@link PoolExhaustedError} reports. */
export interface PoolExhaustedInit {
  /** The node whose pool was exhausted. */
  readonly node: string
  readonly reason: PoolExhaustedReason
  /** How long the checkout waited, in ms (`0` when the queue was full). */
  readonly waitedMs: number
  /** The pool's size (`max` / `connectionLimit`), every connection checked out. */
  readonly max: number
  /** Checkouts still waiting when this one failed. */
  readonly waiting: number
  /** The bound that was hit: the wait limit in ms (`timeout`) or the waiting-queue bound (`queue-full`). */
  readonly limit: number
  /** The driver's own error, when the driver's pool raised it (mysql2's `Queue limit reached.`). */
  readonly cause?: unknown
}

/**
 * A connection checkout failed because the node's pool was exhausted: every connection was
 * checked out and either the wait passed the pool's limit (pg: `pool.connectionTimeoutMillis`,
 * as `pg.Pool`; the message starts with pg.Pool's "timeout exceeded when trying to connect") or
 * the waiting queue was full (pg: `pool.maxWaiting`; mysql2: `queueLimit`, or
 * `waitForConnections: false`). The node itself is fine: this never counts against its health
 * and a read failing so is not retried on another node (its pool is the bottleneck, not the
 * server). Nothing was sent to the server.
 *
 * @example
 * ```ts
 * try { await router.query('SELECT 1') } catch (e) {
 *   if (e instanceof PoolExhaustedError) console.warn(`${e.node}: ${e.max} busy, ${e.waiting} waiting`)
 * }
 * ```
 */
export class PoolExhaustedError extends RoutemateError {
  /** The node whose pool was exhausted. */
  readonly node: string
  /** `timeout`: waited longer than the limit; `queue-full`: failed at once, the queue was full. */
  readonly reason: PoolExhaustedReason
  /** How long the checkout waited, in ms. */
  readonly waitedMs: number
  /** The pool's size: connections open, all checked out. */
  readonly max: number
  /** Checkouts still waiting when this one failed. */
  readonly waiting: number
  /** The bound that was hit: ms for `timeout`, a count for `queue-full`. */
  readonly limit: number

  constructor(init: PoolExhaustedInit) {
    const all = init.max === 1 ? 'the only connection' : `all ${init.max} connections`
    const busy = `${all} of node "${init.node}" busy`
    const message =
      init.reason === 'timeout'
        ? `timeout exceeded when trying to connect: waited ${init.waitedMs} ms for a pooled connection (${busy}, ${init.waiting} more waiting; limit ${init.limit} ms)`
        : `pool exhausted: ${busy} and ${init.waiting} checkout${init.waiting === 1 ? '' : 's'} already waiting (limit ${init.limit})`
    super('ROUTEMATE_POOL_EXHAUSTED', message, init.cause === undefined ? undefined : { cause: init.cause })
    this.node = init.node
    this.reason = init.reason
    this.waitedMs = init.waitedMs
    this.max = init.max
    this.waiting = init.waiting
    this.limit = init.limit
  }
}
