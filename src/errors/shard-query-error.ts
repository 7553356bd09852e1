import { RoutemateError } from './routemate-error.js'

/**
 * Work on one shard failed during `forEachShard` / `queryAllShards`; names the shard and keeps the
 * original error as `cause`.
 *
 * @example
 * ```ts
 * try { await router.queryAllShards('SELECT ...') } catch (e) { if (e instanceof ShardQueryError) console.log(e.shard) }
 * ```
 */
export class ShardQueryError extends RoutemateError {
  /** The shard whose work failed. */
  readonly shard: string

  constructor(shard: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause)
    super('ROUTEMATE_SHARD_QUERY', `shard "${shard}" failed: ${why}`, { cause })
    this.shard = shard
  }
}
