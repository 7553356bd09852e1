import { describeKey } from './describe-key.js'
import type { ShardKey } from './shard-resolver.js'

/**
 * Checks what a lookup or a user function answered for a key: a configured shard name (or a
 * promise of one), else a clear `Error`. Membership is O(1) for long shard lists: the `Set` is
 * built once per `shardNames` array (the router passes the same frozen array on every call), and
 * short lists are simply scanned.
 * @internal
 *
 * @example
 * ```ts
 * const check = new ShardCheck('the lookup')
 * check.answer('u1', lookup('u1'), shardNames) // the name, or a promise of it; throws / rejects otherwise
 * ```
 */
export class ShardCheck {
  /** Who answered, for messages: `the lookup`, `custom resolver 'byRegion'`. */
  readonly #source: string
  #names: readonly string[] | undefined
  #set: ReadonlySet<string> = new Set()

  constructor(source: string) {
    this.#source = source
  }

  /** Whether `name` is one of `shardNames`. */
  has(shardNames: readonly string[], name: string): boolean {
    if (shardNames.length <= 16) return shardNames.includes(name)
    if (this.#names !== shardNames) {
      this.#set = new Set(shardNames)
      this.#names = shardNames
    }
    return this.#set.has(name)
  }

  /** `answer` checked (awaited first if it is a promise). */
  answer(key: ShardKey, answer: unknown, shardNames: readonly string[]): string | Promise<string> {
    if (typeof answer === 'string' && this.has(shardNames, answer)) return answer // the fast path
    if (isThenable(answer))
      return Promise.resolve(answer).then((shard) => this.#checked(key, shard, shardNames))
    return this.#checked(key, answer, shardNames)
  }

  #checked(key: ShardKey, shard: unknown, shardNames: readonly string[]): string {
    if (typeof shard === 'string' && this.has(shardNames, shard)) return shard
    if (shard === undefined || shard === null) {
      throw new Error(`no shard for key ${describeKey(key)} in ${this.#source}`)
    }
    throw new Error(
      `${this.#source} gave ${describeKey(shard)} for key ${describeKey(key)}, which is not a ` +
        `configured shard (${listShards(shardNames)})`,
    )
  }
}

/**
 * The shard names quoted and joined, for error messages.
 * @internal
 *
 * @example
 * ```ts
 * listShards(['s0', 's1']) // "'s0', 's1'"
 * ```
 */
export function listShards(shardNames: readonly string[]): string {
  if (shardNames.length === 0) return 'none'
  const shown = shardNames.slice(0, 20).map((s) => `'${s}'`)
  if (shardNames.length > 20) shown.push(`… (${shardNames.length} in all)`)
  return shown.join(', ')
}

function isThenable(x: unknown): x is PromiseLike<unknown> {
  return typeof x === 'object' && x !== null && typeof (x as { then?: unknown }).then === 'function'
}
