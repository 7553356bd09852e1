import { RoutemateError } from './routemate-error.js'

/**
 * A read had to go to a replica but none is usable (down, lagging, drained or none configured) and
 * `fallbackToPrimary` is `false`.
 *
 * @example
 * ```ts
 * const router = createRouter({ driver, primary, replicas, fallbackToPrimary: false })
 * ```
 */
export class NoHealthyReplicaError extends RoutemateError {
  /** The cluster (shard) whose replicas were all unusable. */
  readonly cluster: string

  constructor(cluster: string, message: string, options?: { cause?: unknown }) {
    super('ROUTEMATE_NO_HEALTHY_REPLICA', message, options)
    this.cluster = cluster
  }
}
