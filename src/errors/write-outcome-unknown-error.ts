import { RoutemateError } from './routemate-error.js'

/**
 * A write (any statement sent to the primary outside a `readOnly` scope) or a transaction's
 * `COMMIT` lost its connection after it was sent and before its result arrived: it may or may
 * not have been applied (`outcome: 'unknown'`). Check before doing it again; routemate never
 * retries it. `cause` is the driver's error. A failure before the statement was sent (no
 * connection could be checked out, the primary is down) is not this error: it was not applied.
 *
 * @example
 * ```ts
 * try { await router.query('INSERT INTO orders ...') } catch (e) {
 *   if (e instanceof WriteOutcomeUnknownError || (e instanceof QueryTimeoutError && e.outcome === 'unknown'))
 *     await reconcileOrder() // look before writing again
 * }
 * ```
 */
export class WriteOutcomeUnknownError extends RoutemateError {
  /** Always `'unknown'`: the write may or may not have been applied. */
  readonly outcome = 'unknown' as const
  /** Node the statement was sent to. */
  readonly node: string
  /** Cluster (shard) of the node. */
  readonly cluster: string

  constructor(node: string, cluster: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message || cause.name : String(cause)
    super(
      'ROUTEMATE_WRITE_OUTCOME_UNKNOWN',
      `write outcome unknown: the connection to "${node}" failed after the statement was sent (${why}); it may or may not have been applied`,
      { cause },
    )
    this.node = node
    this.cluster = cluster
  }
}
