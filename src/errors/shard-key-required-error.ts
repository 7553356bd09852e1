import { RoutemateError } from './routemate-error.js'

/**
 * A statement ran in a sharded router with no shard in scope (no `withShard`, `shard(name)` or
 * `forEachShard` around it) and no `sharding.defaultShard`. routemate never picks a shard silently.
 *
 * @example
 * ```ts
 * await router.query('SELECT 1') // ShardKeyRequiredError in a sharded router
 * await router.withShard(userId, () => router.query('SELECT 1')) // fine
 * ```
 */
export class ShardKeyRequiredError extends RoutemateError {
  constructor() {
    super(
      'ROUTEMATE_SHARD_KEY_REQUIRED',
      'this router is sharded and no shard is in scope: wrap the call in router.withShard(key, fn) or router.shard(name), or configure sharding.defaultShard',
    )
  }
}
