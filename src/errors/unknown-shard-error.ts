import { RoutemateError } from './routemate-error.js'

/**
 * A shard name that is not configured (in `router.shard(name)`, or returned by a resolver).
 *
 * @example
 * ```ts
 * router.shard('s9') // UnknownShardError: unknown shard "s9"; configured: s0, s1
 * ```
 */
export class UnknownShardError extends RoutemateError {
  /** The name that was asked for. */
  readonly shard: string

  constructor(shard: string, known: readonly string[]) {
    super('ROUTEMATE_UNKNOWN_SHARD', `unknown shard "${shard}"; configured: ${known.join(', ')}`)
    this.shard = shard
  }
}
