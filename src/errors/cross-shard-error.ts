import { RoutemateError } from './routemate-error.js'

/**
 * A scope inside a transaction named another shard than the transaction's: a transaction lives on
 * one connection of one shard and cannot span shards.
 *
 * @example
 * ```ts
 * await router.withShard(1, () => router.transaction(() => router.withShard(2, ...))) // CrossShardError if 1 and 2 differ
 * ```
 */
export class CrossShardError extends RoutemateError {
  constructor(inTransaction: string, asked: string) {
    super(
      'ROUTEMATE_CROSS_SHARD',
      `a transaction on shard "${inTransaction}" cannot use shard "${asked}": transactions cannot span shards`,
    )
  }
}
