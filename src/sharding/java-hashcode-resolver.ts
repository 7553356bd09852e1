import type { ShardKey, ShardResolver } from './shard-resolver.js'

/**
 * Which Java type a number or bigint key stands for; see {@link JavaHashCodeResolverOptions}.
 */
export type JavaNumberType = 'int' | 'long' | 'auto'

/** Options of {@link JavaHashCodeResolver}. */
export interface JavaHashCodeResolverOptions {
  /**
   * The Java type whose `hashCode()` a number or bigint key gets. Pick the one matching your Java
   * key type. Default: `'long'`.
   *
   * - `'long'`: `Long.hashCode(v) = (int) (v ^ (v >>> 32))`. For a `long` / `Long` id (JPA
   *   `Long id`, `BIGINT` columns, Snowflake ids), the usual type of ids big enough to shard.
   * - `'int'`: `Integer.hashCode(v) = v`. For an `int` / `Integer` id; a key outside the int range
   *   throws a `TypeError` (no Java int holds it).
   * - `'auto'`: `Integer` semantics when the value fits in an int, `Long` beyond. This is what Java
   *   code gets when it hashes an untyped `Object`/`Number` that came from JSON (Jackson makes an
   *   `Integer` when it fits, a `Long` otherwise); it matches neither a pure `int` nor a pure `long`
   *   service for every value.
   *
   * The choice only matters for negative values: for `0 <= v < 2^31` all three agree. For
   * `-2^31 <= v < 0` they differ: `Long.hashCode(-1L) = 0` but `Integer.hashCode(-1) = -1`, so with
   * 3 shards -1 goes to shard 0 as a long and to shard 2 as an int. Hence `'long'` by default (the
   * common id type, and exact for it over its whole range), and no silent guessing by magnitude.
   */
  numberAs?: JavaNumberType
}

const INT_MIN = -2147483648
const INT_MAX = 2147483647
const TWO_32 = 4294967296
const LONG_MIN = -(2n ** 63n)
const LONG_MAX = 2n ** 63n - 1n

/**
 * Java-compatible modulo hashing: `shardNames[Math.floorMod(key.hashCode(), shardNames.length)]`
 * with Java's own `hashCode()`, so a Node.js service and a Java service (Spring's routing
 * `DataSource`, a hand-written `userId.hashCode() % 2`) put the same key on the same shard.
 *
 * - a string: `String.hashCode()`, `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16 code units with int
 *   overflow (so surrogate pairs count as two units, as in Java). Pass Java `String` ids as
 *   strings and numeric ids as numbers or bigints: unlike `hash` and `jump`, `'42'` and `42` hash
 *   differently here, because they do in Java (watch out: `pg` returns `BIGINT` columns as strings);
 * - a number (a safe integer, else `TypeError`) or a bigint (within the signed 64-bit range, else
 *   `TypeError`): `Integer.hashCode` or `Long.hashCode` as `numberAs` says (default `'long'`).
 *
 * The remainder is `Math.floorMod` (never negative), and shard `i` is `shardNames[i]` in configured
 * order. For two shards that is the same as Java's `h % 2 == 0 ? first : second`. Java code written
 * as `Math.abs(h % n)` or `Math.abs(h) % n` differs for negative hash codes when `n > 2`; reproduce
 * it with a custom resolver built on {@link javaStringHashCode} / {@link javaLongHashCode}.
 *
 * @example
 * ```ts
 * // Java: if (userId.hashCode() % 2 == 0) useShardA(); else useShardB();
 * createRouter({ driver, shards: { a, b }, sharding: { strategy: 'java-hashcode' } })
 * new JavaHashCodeResolver().resolve('polygenelubricants', ['a', 'b']) // 'a' (hashCode is Integer.MIN_VALUE)
 * new JavaHashCodeResolver({ numberAs: 'int' }).resolve(-1, ['a', 'b', 'c']) // 'c' (floorMod(-1, 3) = 2)
 * ```
 */
export class JavaHashCodeResolver implements ShardResolver {
  readonly name = 'java-hashcode'
  /** The Java type number and bigint keys are hashed as. */
  readonly numberAs: JavaNumberType

  constructor(options: JavaHashCodeResolverOptions = {}) {
    const numberAs = options.numberAs ?? 'long'
    if (numberAs !== 'long' && numberAs !== 'int' && numberAs !== 'auto') {
      throw new TypeError(`invalid numberAs '${String(numberAs)}': expected 'long', 'int' or 'auto'`)
    }
    this.numberAs = numberAs
  }

  resolve(key: ShardKey, shardNames: readonly string[]): string {
    const n = shardNames.length
    if (n === 0) throw new RangeError('java-hashcode resolver: no shards configured')
    const h = this.hashCode(key)
    const r = h % n
    return shardNames[r < 0 ? r + n : r]!
  }

  /**
   * The Java `hashCode()` this resolver computes for a key (a signed 32-bit integer).
   *
   * @example
   * ```ts
   * new JavaHashCodeResolver().hashCode(-1) // 0, as Long.hashCode(-1L)
   * ```
   */
  hashCode(key: ShardKey): number {
    if (typeof key === 'string') return javaStringHashCode(key)
    if (typeof key === 'number') {
      if (!Number.isSafeInteger(key)) {
        throw new TypeError(
          `shard key ${key} is not a safe integer: number keys must be integers between ` +
            '-(2 ** 53 - 1) and 2 ** 53 - 1; pass larger ids as a bigint',
        )
      }
      const fitsInt = key >= INT_MIN && key <= INT_MAX
      if (this.numberAs === 'long' || (this.numberAs === 'auto' && !fitsInt)) return javaLongHashCode(key)
      if (!fitsInt) throw intRangeError(key)
      return key | 0
    }
    if (typeof key === 'bigint') {
      if (key < LONG_MIN || key > LONG_MAX) {
        throw new TypeError(`shard key ${key}n does not fit in a Java long (signed 64 bits)`)
      }
      const fitsInt = key >= INT_MIN && key <= INT_MAX
      if (this.numberAs === 'long' || (this.numberAs === 'auto' && !fitsInt)) return javaLongHashCode(key)
      if (!fitsInt) throw intRangeError(key)
      return Number(key) | 0
    }
    throw new TypeError(
      `invalid shard key (${key === null ? 'null' : typeof key}): expected a string, a number or a bigint`,
    )
  }
}

function intRangeError(key: number | bigint): TypeError {
  return new TypeError(
    `shard key ${key}${typeof key === 'bigint' ? 'n' : ''} does not fit in a Java int ` +
      "(numberAs: 'int'); use numberAs: 'long' if the Java key is a long",
  )
}

/**
 * Java's `String.hashCode()`: `s[0]*31^(n-1) + s[1]*31^(n-2) + ... + s[n-1]` over UTF-16 code
 * units, in 32-bit two's complement (may be negative). Allocates nothing.
 *
 * @example
 * ```ts
 * javaStringHashCode('Aa') === javaStringHashCode('BB') // true, both 2112
 * javaStringHashCode('polygenelubricants') // -2147483648
 * ```
 */
export function javaStringHashCode(s: string): number {
  let h = 0
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0
  return h
}

/**
 * Java's `Long.hashCode(v)`: `(int) (v ^ (v >>> 32))` on the 64-bit two's complement value. Takes a
 * safe-integer number or a bigint in the signed 64-bit range (not checked here: larger bigints are
 * taken modulo 2^64).
 *
 * @example
 * ```ts
 * javaLongHashCode(-1) // 0
 * javaLongHashCode(2n ** 31n) // -2147483648
 * ```
 */
export function javaLongHashCode(v: number | bigint): number {
  let hi: number
  let lo: number
  if (typeof v === 'bigint') {
    hi = Number(BigInt.asIntN(32, v >> 32n))
    lo = Number(BigInt.asUintN(32, v))
  } else {
    hi = Math.floor(v / TWO_32) // two's complement: -1 -> hi = -1, lo = 2^32 - 1
    lo = v - hi * TWO_32
  }
  return (hi ^ lo) | 0
}
