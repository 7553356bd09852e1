import { describeKey } from './describe-key.js'
import { listShards, ShardCheck } from './shard-check.js'
import type { ShardKey, ShardResolver } from './shard-resolver.js'

/**
 * Where {@link LookupResolver} finds a key's shard: a `Map`, a plain object (string keys), or a
 * function (sync or async, e.g. a query against a directory table or a cache).
 */
export type ShardLookup =
  | ReadonlyMap<ShardKey, string>
  | Readonly<Record<string, string>>
  | ((key: ShardKey) => string | Promise<string>)

/**
 * Directory-based sharding: each key's shard is looked up, so any key can live on any shard and be
 * moved one at a time (tenant by tenant), at the cost of keeping the directory.
 *
 * - a `Map`: `map.get(key)`. Map keys compare by type (`42`, `'42'` and `42n` are three keys),
 *   so use the type your code passes; the error for a missing key hints at a near miss.
 * - an object: `object[String(key)]`, own properties only (so `42`, `'42'` and `42n` are the same
 *   key; `'constructor'` is not found unless set).
 * - a function: called with the key; returns the shard name or a promise of it (then `resolve`
 *   returns a promise too). A throw or rejection is passed through untouched.
 *
 * The `Map` or object is read live, not copied: entries added later are seen (that is how a
 * directory grows); pass a copy for a snapshot. A missing key (`undefined` / `null`, from any of
 * the three) throws an `Error`: a missing shard is never silently defaulted. A name that is not a
 * configured shard throws an `Error` as well; `validate(shardNames)` checks a `Map`'s or object's
 * current entries at startup.
 *
 * @example
 * ```ts
 * const tenants = new LookupResolver({ acme: 'eu', globex: 'us' })
 * tenants.resolve('acme', ['eu', 'us']) // 'eu'
 * const fromDb = new LookupResolver(async (key) => (await cache.get(`shard:${key}`)) ?? undefined!)
 * createRouter({ driver, shards: { eu, us }, sharding: { strategy: tenants } })
 * ```
 */
export class LookupResolver implements ShardResolver {
  readonly name = 'lookup'
  readonly #map: ReadonlyMap<ShardKey, string> | undefined
  readonly #object: Readonly<Record<string, string>> | undefined
  readonly #fn: ((key: ShardKey) => string | Promise<string>) | undefined
  readonly #check = new ShardCheck('the lookup')

  constructor(lookup: ShardLookup) {
    if (lookup instanceof Map) this.#map = lookup
    else if (typeof lookup === 'function') this.#fn = lookup
    else if (typeof lookup === 'object' && lookup !== null && !Array.isArray(lookup)) {
      this.#object = lookup as Readonly<Record<string, string>>
    } else {
      throw new TypeError(
        `invalid lookup (${describeKey(lookup)}): expected a Map, an object of key → shard name, or a function`,
      )
    }
  }

  /**
   * Throws an `Error` if an entry of the `Map` or object names a shard not in `shardNames` (a
   * function lookup is checked per call instead).
   *
   * @example
   * ```ts
   * new LookupResolver({ acme: 'xx' }).validate(['eu', 'us']) // throws: lookup['acme'] is 'xx', ...
   * ```
   */
  validate(shardNames: readonly string[]): void {
    const entries: Iterable<[unknown, unknown]> =
      this.#map ?? (this.#object ? Object.entries(this.#object) : [])
    for (const [key, shard] of entries) {
      if (typeof shard !== 'string' || !this.#check.has(shardNames, shard)) {
        throw new Error(
          `lookup[${describeKey(key)}] is ${describeKey(shard)}, which is not a configured shard ` +
            `(${listShards(shardNames)})`,
        )
      }
    }
  }

  resolve(key: ShardKey, shardNames: readonly string[]): string | Promise<string> {
    const type = typeof key
    if (type !== 'string' && type !== 'number' && type !== 'bigint') {
      throw new TypeError(`invalid shard key (${describeKey(key)}): expected a string, a number or a bigint`)
    }
    if (this.#fn) return this.#check.answer(key, this.#fn(key), shardNames)
    let shard: string | undefined
    if (this.#map) shard = this.#map.get(key)
    else {
      const k = String(key)
      if (Object.hasOwn(this.#object!, k)) shard = this.#object![k]
    }
    if (shard === undefined || shard === null) {
      throw new Error(`no shard for key ${describeKey(key)} in the lookup${this.#nearMiss(key)}`)
    }
    return this.#check.answer(key, shard, shardNames)
  }

  /** For a `Map`: a hint when the key is there under another type (only on the error path). */
  #nearMiss(key: ShardKey): string {
    const map = this.#map
    if (!map) return ''
    const others: ShardKey[] = [String(key)]
    if (typeof key !== 'number' && /^-?\d+$/.test(String(key)) && Number.isSafeInteger(Number(key))) {
      others.push(Number(key))
    }
    if (typeof key !== 'bigint' && /^-?\d+$/.test(String(key))) others.push(BigInt(key))
    const hit = others.find((k) => k !== key && map.has(k))
    return hit === undefined
      ? ''
      : ` (the Map has ${describeKey(hit)}, a ${typeof hit}: Map keys are compared by type)`
  }
}
