import { RoutemateError } from './routemate-error.js'

/**
 * A statement had to go to the primary but the primary is down (or not trusted, e.g. it reports
 * being in recovery). Raised at once, without waiting for a connection timeout.
 *
 * @example
 * ```ts
 * try { await router.query('INSERT ...') } catch (e) { if (e instanceof PrimaryUnavailableError) retryLater() }
 * ```
 */
export class PrimaryUnavailableError extends RoutemateError {
  /** The cluster (shard) whose primary is unavailable. */
  readonly cluster: string

  constructor(cluster: string, message: string, options?: { cause?: unknown }) {
    super('ROUTEMATE_PRIMARY_UNAVAILABLE', message, options)
    this.cluster = cluster
  }
}
