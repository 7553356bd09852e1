import { describeKey } from './describe-key.js'
import type { ShardKey, ShardResolver } from './shard-resolver.js'

/** A range bound: numbers and bigints compare with each other; strings only with strings. */
export type RangeBound = number | bigint | string

/**
 * One range of {@link RangeResolver}: keys `k` with `from <= k < to` go to `shard`.
 *
 * @example
 * ```ts
 * const r: ShardRange = { shard: 's1', from: 1_000_000, to: 2_000_000 }
 * ```
 */
export interface ShardRange {
  /** The shard's name, as configured in `shards`. */
  shard: string
  /** Lowest key in the range (inclusive). Default: no lower bound (-∞). */
  from?: RangeBound
  /** First key past the range (exclusive). Default: no upper bound (+∞). */
  to?: RangeBound
}

type Kind = 'numeric' | 'string'

/**
 * Range sharding: half-open ranges `[from, to)` mapped to shards, found by binary search.
 *
 * Bounds are all numeric (numbers and bigints, compared exactly with each other: `10` and `10n` are
 * the same bound) or all strings (compared by UTF-16 code unit, as JavaScript's `<` does: not a
 * database collation, `'Z' < 'a'` and `'10' < '9'`); mixing them is a `TypeError`. Numbers must be
 * finite (omit `from` / `to` for an open end). Checked at construction, where the ranges are
 * copied, sorted by `from` and frozen: a range with `from >= to` or two overlapping ranges throw a
 * `RangeError` naming both (by their index in the given array). Gaps are allowed; a key in a gap
 * (or outside every range) throws a `RangeError` listing the ranges, which the router wraps. Keys
 * must be of the bounds' family (`TypeError` otherwise; a number key must be finite); with no bounds
 * at all (one range covering everything) any key goes.
 *
 * `validate(shardNames)` (the router calls it at startup) throws a `RangeError` for a range naming
 * an unknown shard; `resolve` runs it itself, once per `shardNames` array, if it was not called.
 * Several ranges may name the same shard. Keys never move when shards are added; moving a range is
 * a data migration.
 *
 * @example
 * ```ts
 * const byId = new RangeResolver([
 *   { shard: 's0', to: 1_000_000 },
 *   { shard: 's1', from: 1_000_000, to: 2_000_000n },
 *   { shard: 's2', from: 2_000_000 },
 * ])
 * byId.resolve(1_500_000, ['s0', 's1', 's2']) // 's1'
 * createRouter({ driver, shards, sharding: { strategy: 'range', ranges: [...] } })
 * ```
 */
export class RangeResolver implements ShardResolver {
  readonly name = 'range'
  /** The ranges, copied, sorted by `from` (open ends first) and frozen. */
  readonly ranges: readonly Readonly<ShardRange>[]
  /** `'numeric'` or `'string'`; undefined when no range has a bound. */
  readonly #kind: Kind | undefined
  /** Parallel arrays over the sorted ranges, for the binary search. */
  readonly #froms: (RangeBound | undefined)[]
  readonly #tos: (RangeBound | undefined)[]
  readonly #shards: string[]
  /** Each sorted range's index in the array the constructor got (for messages). */
  readonly #indexes: number[]
  /** The last `shardNames` array `validate` accepted. */
  #validated: readonly string[] | undefined

  constructor(ranges: readonly ShardRange[]) {
    if (!Array.isArray(ranges) || ranges.length === 0) {
      throw new TypeError('ranges: expected a non-empty array of { shard, from?, to? }')
    }
    let kind: Kind | undefined
    let kindFrom = ''
    const checkBound = (value: unknown, path: string): void => {
      if (value === undefined) return
      let k: Kind
      if (typeof value === 'string') k = 'string'
      else if (typeof value === 'bigint') k = 'numeric'
      else if (typeof value === 'number' && Number.isFinite(value)) k = 'numeric'
      else {
        throw new TypeError(
          `${path}: expected a finite number, a bigint or a string (omit it for an open end); got ${describeKey(value)}`,
        )
      }
      if (kind === undefined) {
        kind = k
        kindFrom = path
      } else if (k !== kind) {
        throw new TypeError(
          `${path}: ${describeKey(value)} is ${k === 'string' ? 'a string' : 'numeric'} but ${kindFrom} is ` +
            `${kind === 'string' ? 'a string' : 'numeric'}: the bounds must be all strings or all numbers/bigints`,
        )
      }
    }
    const copies: { range: Readonly<ShardRange>; index: number }[] = []
    ranges.forEach((r: ShardRange | undefined, i) => {
      if (typeof r !== 'object' || r === null) {
        throw new TypeError(`ranges[${i}]: expected an object { shard, from?, to? }`)
      }
      if (typeof r.shard !== 'string' || r.shard.length === 0) {
        throw new TypeError(`ranges[${i}].shard: expected a non-empty string (a shard name)`)
      }
      checkBound(r.from, `ranges[${i}].from`)
      checkBound(r.to, `ranges[${i}].to`)
      const copy: ShardRange = { shard: r.shard }
      if (r.from !== undefined) copy.from = r.from
      if (r.to !== undefined) copy.to = r.to
      if (copy.from !== undefined && copy.to !== undefined && !(copy.from < copy.to)) {
        throw new RangeError(`ranges[${i}]: ${formatRange(copy)} is empty: from must be below to`)
      }
      copies.push({ range: Object.freeze(copy), index: i })
    })
    copies.sort((a, b) => compareFrom(a.range.from, b.range.from) || a.index - b.index)
    for (let i = 1; i < copies.length; i++) {
      const prev = copies[i - 1]!
      const next = copies[i]!
      const prevTo = prev.range.to
      const nextFrom = next.range.from
      if (prevTo === undefined || nextFrom === undefined || prevTo > nextFrom) {
        throw new RangeError(
          `ranges[${prev.index}] ${formatRange(prev.range)} overlaps ranges[${next.index}] ` +
            `${formatRange(next.range)}: ranges must not overlap`,
        )
      }
    }
    this.#kind = kind
    this.ranges = Object.freeze(copies.map((c) => c.range))
    this.#froms = copies.map((c) => c.range.from)
    this.#tos = copies.map((c) => c.range.to)
    this.#shards = copies.map((c) => c.range.shard)
    this.#indexes = copies.map((c) => c.index)
  }

  /**
   * Throws a `RangeError` if a range names a shard not in `shardNames`.
   *
   * @example
   * ```ts
   * new RangeResolver([{ shard: 's9' }]).validate(['s0', 's1']) // throws: ranges[0].shard: unknown shard 's9'
   * ```
   */
  validate(shardNames: readonly string[]): void {
    for (let i = 0; i < this.#shards.length; i++) {
      const shard = this.#shards[i]!
      if (!shardNames.includes(shard)) {
        const known = shardNames.map((s) => `'${s}'`).join(', ') || 'none'
        throw new RangeError(
          `ranges[${this.#indexes[i]}].shard: unknown shard '${shard}'; the configured shards are ${known}`,
        )
      }
    }
    this.#validated = shardNames
  }

  resolve(key: ShardKey, shardNames: readonly string[]): string {
    this.#checkKey(key)
    const froms = this.#froms
    // The last range whose from <= key (an open from is -∞, and only the first range can have one).
    let lo = 0
    let hi = froms.length - 1
    let found = -1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      const from = froms[mid]
      if (from === undefined || from <= key) {
        found = mid
        lo = mid + 1
      } else {
        hi = mid - 1
      }
    }
    if (found < 0) throw this.#outOfRange(key, found)
    const to = this.#tos[found]
    if (to !== undefined && !(key < to)) throw this.#outOfRange(key, found)
    if (this.#validated !== shardNames) this.validate(shardNames)
    return this.#shards[found]!
  }

  #checkKey(key: ShardKey): void {
    const type = typeof key
    if (type === 'string') {
      if (this.#kind === 'numeric') {
        throw new TypeError(`shard key ${describeKey(key)} is a string but the range bounds are numeric`)
      }
    } else if (type === 'number' || type === 'bigint') {
      if (this.#kind === 'string') {
        throw new TypeError(
          `shard key ${describeKey(key)} is ${type === 'number' ? 'a number' : 'a bigint'} but the range bounds are strings`,
        )
      }
      if (type === 'number' && !Number.isFinite(key)) {
        throw new TypeError(`shard key ${describeKey(key)} is not a finite number`)
      }
    } else {
      throw new TypeError(`invalid shard key (${describeKey(key)}): expected a string, a number or a bigint`)
    }
  }

  /** The out-of-range error; `before` is the sorted index of the range just below the key, or -1. */
  #outOfRange(key: ShardKey, before: number): RangeError {
    const all = this.ranges
    const shown =
      all.length <= 8
        ? `(${all.map(formatRange).join(', ')})`
        : `(nearest: ${all
            .slice(Math.max(0, before), before + 2)
            .map(formatRange)
            .join(', ')}; ${all.length} ranges in all)`
    return new RangeError(`key ${describeKey(key)} is outside every configured range ${shown}`)
  }
}

/** Orders `from` bounds, an open one (-∞) first. Bounds are of one family, checked before. */
function compareFrom(a: RangeBound | undefined, b: RangeBound | undefined): number {
  if (a === undefined) return b === undefined ? 0 : -1
  if (b === undefined) return 1
  return a < b ? -1 : a > b ? 1 : 0
}

function formatRange(r: Readonly<ShardRange>): string {
  const from = r.from === undefined ? '(-∞' : `[${describeKey(r.from)}`
  const to = r.to === undefined ? '+∞)' : `${describeKey(r.to)})`
  return `${from}, ${to} → ${r.shard}`
}
