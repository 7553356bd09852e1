/**
 * A value that picks a shard: a user id, a tenant id, an order number... Numbers must be safe
 * integers for the hashing strategies (see `keyBytes`); bigints cover 64-bit ids.
 *
 * @example
 * ```ts
 * await router.withShard(userId satisfies ShardKey, async () => { ... })
 * ```
 */
export type ShardKey = string | number | bigint

/**
 * Maps a shard key to the name of one configured shard. One instance serves one router.
 *
 * The router calls `resolve` with the key and `shardNames`, the names of the configured shards in
 * the order they were configured (the order of the `shards` object's keys). That order is part of
 * the mapping for the positional strategies (`hash`, `jump`, `java-hashcode`): reordering or
 * renaming shards moves keys. The array is frozen and the same array is passed on every call, so a
 * resolver may cache what it derives from it by identity.
 *
 * `resolve` must return one of `shardNames` (or a promise of one), be deterministic (the same key
 * and the same `shardNames` always give the same shard, across calls, instances and processes),
 * and never mutate `shardNames`. It throws (a `TypeError` for a key it cannot take, a `RangeError`
 * or `Error` for a key it has no shard for) rather than return a default: a key that cannot be
 * placed is an error, never a silent default.
 *
 * @example
 * ```ts
 * const byRegion: ShardResolver = {
 *   name: 'region',
 *   resolve: (key) => (String(key).startsWith('eu-') ? 'eu' : 'us'),
 *   validate: (names) => { if (!names.includes('eu') || !names.includes('us')) throw new Error('need eu and us') },
 * }
 * createRouter({ driver, shards: { eu: {...}, us: {...} }, sharding: { strategy: byRegion } })
 * ```
 */
export interface ShardResolver {
  /** A short name identifying the resolver (the built-ins use their strategy's name). */
  readonly name: string
  /**
   * Returns the shard name for a key; `shardNames` is the ordered list of configured shards
   * (stable order as configured). May return a Promise (a directory lookup).
   */
  resolve(key: ShardKey, shardNames: readonly string[]): string | Promise<string>
  /**
   * Optional startup check, called once by the router with the configured shard names before the
   * first `resolve`: throws if the resolver's configuration names a shard that does not exist (or
   * is otherwise unusable with these shards), so the mistake surfaces at startup, not on the first
   * unlucky key.
   */
  validate?(shardNames: readonly string[]): void
}

/** The built-in sharding strategy names, usable as `sharding.strategy`. */
export type ShardingStrategyName = 'hash' | 'jump' | 'range' | 'java-hashcode'
