import { AsyncLocalStorage } from 'node:async_hooks'
import type { Scope } from '../router/scope.js'

/** One deferred call: started in its caller's async context. */
interface Deferred {
  readonly run: <R>(fn: () => R) => R
  readonly start: () => void
}

let nextId = 1
const ids = new WeakMap<object, number>()

function idOf(x: object | undefined): number {
  if (x === undefined) return 0
  let id = ids.get(x)
  if (id === undefined) {
    id = nextId++
    ids.set(x, id)
  }
  return id
}

/**
 * A key equal for two scopes that route alike: same mode, transaction, shard, read-your-writes
 * session and fallback (`'-'` outside every scope).
 */
export function scopeKey(scope: Scope | undefined): string {
  if (scope === undefined) return '-'
  return `${scope.mode}:${idOf(scope.tx)}:${idOf(scope.cluster)}:${idOf(scope.session)}:${String(scope.fallback)}`
}

/**
 * Starts calls that a library batches by tick (Prisma's `findUnique` data loader runs a whole
 * tick's batch in the async context of its first caller) so that one tick never mixes scopes:
 * calls are grouped by scope key; one group is started per turn of the event loop, each call in
 * its own caller's async context. Calls of one scope that arrive together still start together
 * (and so are still batched).
 *
 * The first group starts on the next tick (so calls of the same synchronous run gather); each later
 * group waits for `setImmediate`, after every tick and microtask of the previous group has run
 * (the library's own batch included).
 */
export class ScopeBatcher {
  readonly #pending = new Map<string, Deferred[]>()
  #scheduled = false

  /** Defers `start` (run in the current async context) into the group of `key`. */
  defer(key: string, start: () => void): void {
    const group = this.#pending.get(key)
    const call: Deferred = { run: AsyncLocalStorage.snapshot(), start }
    if (group === undefined) this.#pending.set(key, [call])
    else group.push(call)
    if (!this.#scheduled) {
      this.#scheduled = true
      process.nextTick(this.#flush)
    }
  }

  readonly #flush = (): void => {
    const first = this.#pending.entries().next()
    if (first.done === true) {
      this.#scheduled = false
      return
    }
    const [key, calls] = first.value
    this.#pending.delete(key)
    for (const call of calls) call.run(call.start)
    setImmediate(this.#flush)
  }
}
