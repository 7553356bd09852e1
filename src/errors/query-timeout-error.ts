import { RoutemateError } from './routemate-error.js'

/** What a {@link QueryTimeoutError} says about the statement that timed out. */
export interface QueryTimeoutDetails {
  /** Node the statement ran on. */
  readonly node: string
  /** Cluster (shard) of the node. */
  readonly cluster: string
  /** The node's `queryTimeoutMs`. */
  readonly timeoutMs: number
  /** Time from sending the statement to this error, in ms (at least `timeoutMs`). */
  readonly elapsedMs: number
  /** Whether the server confirmed it stopped the statement (the connection was then kept). */
  readonly cancelled: boolean
  /** `'unknown'` for a write (or `COMMIT`) that may or may not have been applied. */
  readonly outcome?: 'unknown' | undefined
  /** The driver's error the statement ended with (PostgreSQL 57014, MySQL 1317...). */
  readonly cause?: unknown
}

/**
 * A statement ran longer than its node's `queryTimeoutMs`: routemate asked the server to cancel
 * it (PostgreSQL: a cancel request; MySQL/MariaDB: `KILL QUERY` on its connection id) and waited
 * for it to end. A timeout is evidence about the statement, never about the node: it does not
 * count against the node's health (it makes the node be probed soon) and is never retried.
 *
 * - `cancelled: true`: the server stopped the statement; its connection was clean and was kept.
 *   A cancelled statement is rolled back, so nothing it did was applied.
 * - `cancelled: false`: the cancellation could not be confirmed within `connectTimeoutMs`; the
 *   connection was closed. For a write or `COMMIT` on the primary, `outcome` is then `'unknown'`.
 * - `cause`: the driver's error (`57014 canceling statement due to user request`,
 *   `1317 Query execution was interrupted`, or the closed connection's error).
 *
 * A statement that still completes while it is being cancelled resolves normally.
 *
 * @example
 * ```ts
 * try { await router.query('UPDATE big SET x = 1') } catch (e) {
 *   if (e instanceof QueryTimeoutError) console.warn(`${e.node}: cancelled after ${e.elapsedMs} ms`, e.outcome)
 * }
 * ```
 */
export class QueryTimeoutError extends RoutemateError {
  /** Node the statement ran on. */
  readonly node: string
  /** Cluster (shard) of the node. */
  readonly cluster: string
  /** The node's `queryTimeoutMs`. */
  readonly timeoutMs: number
  /** Time from sending the statement to this error, in ms. */
  readonly elapsedMs: number
  /** Whether the server confirmed it stopped the statement (nothing it did was applied). */
  readonly cancelled: boolean
  /** `'unknown'` when the statement was a write or `COMMIT` that may or may not have been applied; else absent. */
  readonly outcome?: 'unknown'

  constructor(details: QueryTimeoutDetails) {
    const ms = Math.round(details.elapsedMs)
    const how = details.cancelled
      ? 'cancelled on the server'
      : 'its cancellation could not be confirmed, so its connection was closed'
    const outcome = details.outcome === 'unknown' ? '; the write may or may not have been applied' : ''
    super(
      'ROUTEMATE_QUERY_TIMEOUT',
      `query timeout: the statement on "${details.node}" passed queryTimeoutMs (${details.timeoutMs} ms) and was ${how} after ${ms} ms${outcome}`,
      details.cause === undefined ? undefined : { cause: details.cause },
    )
    this.node = details.node
    this.cluster = details.cluster
    this.timeoutMs = details.timeoutMs
    this.elapsedMs = details.elapsedMs
    this.cancelled = details.cancelled
    if (details.outcome === 'unknown') this.outcome = 'unknown'
  }
}
