import { ConfigError } from '../errors/config-error.js'
import { redactUrlValue } from '../util/redact.js'

/**
 * Reusable checkers for validating untrusted configuration. Each one either returns the checked
 * value or throws a {@link ConfigError} naming the path and stating what was expected and what was
 * given. Every user string that reaches a message goes through {@link quote}, which redacts passwords.
 */

/** The largest delay Node.js timers accept (2^31 - 1 ms); a larger one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647

/** A plain object (object literal, `JSON.parse` output or `Object.create(null)`). */
export type PlainObject = Record<string, unknown>

/** Whether `x` is a plain object: not null, not an array, prototype `Object.prototype` (of any realm) or null. */
export function isPlainObject(x: unknown): x is PlainObject {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return false
  const proto: unknown = Object.getPrototypeOf(x)
  return proto === null || Object.getPrototypeOf(proto) === null
}

/** `path` + `.key` (or `["odd key"]` for a key that is not an identifier); `key` alone at the root. */
export function keyPath(path: string, key: string): string {
  if (!/^[A-Za-z_$][\w$]*$/.test(key)) return `${path}[${quote(key)}]`
  return path === '' ? key : `${path}.${key}`
}

/**
 * Quotes a user-given string for a message: passwords redacted by structure (URL user info up to
 * the last `@`, even in strings that do not parse, and `password=` parameters), long strings
 * shortened.
 */
export function quote(text: string): string {
  let safe = redactUrlValue(text)
  if (safe.length > 120) safe = `${safe.slice(0, 117)}...`
  return JSON.stringify(safe)
}

/** Describes a given value for a message: `"text"` (redacted), `-1`, `NaN`, `null`, `an array`... */
export function describe(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return quote(value)
    case 'number':
    case 'boolean':
    case 'undefined':
      return String(value)
    case 'bigint':
      return `${value}n`
    case 'symbol':
      return 'a symbol'
    case 'function':
      return 'a function'
  }
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (isPlainObject(value)) return 'an object'
  const tag = Object.prototype.toString.call(value).slice(8, -1)
  return tag === 'Object' ? 'a class instance' : `a ${tag}`
}

/** Returns `value` if it is a plain object; else throws `path: expected <what>, got <value>`. */
export function checkObject(value: unknown, path: string, what: string): PlainObject {
  if (isPlainObject(value)) return value
  throw new ConfigError(path, `expected ${what}, got ${describe(value)}`)
}

/** A driver's check of one `pool` object (`Driver.checkPoolOptions`), throwing `ConfigError`s under `path`. */
export type PoolChecker = (pool: Readonly<PlainObject>, path: string) => void

/**
 * Checks an optional `pool` option (a plain object, its keys and values checked by the driver's
 * `check`, if any) and returns a shallow copy; `{}` when absent.
 */
export function checkPool(value: unknown, path: string, check?: PoolChecker): PlainObject {
  if (value === undefined) return {}
  const pool = { ...checkObject(value, path, 'a plain object of driver pool options, e.g. { max: 10 }') }
  check?.(pool, path)
  return pool
}

/** Throws for the first own key of `obj` not in `allowed`, listing the allowed keys and a close match. */
export function checkKeys(obj: PlainObject, path: string, allowed: readonly string[]): void {
  for (const key of Object.keys(obj)) {
    if (allowed.includes(key)) continue
    const hint = didYouMean(key, allowed)
    throw new ConfigError(
      keyPath(path, key),
      `unknown option ${quote(key)}${hint ? ` (did you mean "${hint}"?)` : ''}; expected one of: ${allowed.join(', ')}`,
    )
  }
}

/** Bounds of {@link checkNumber}. */
export interface NumberSpec {
  /** Must be an integer (a safe one). Default: false. */
  readonly integer?: boolean
  /** Lower bound, inclusive unless `minExclusive`. */
  readonly min?: number
  readonly minExclusive?: boolean
  /** Upper bound, inclusive. */
  readonly max?: number
  /** Why `max`, appended to the message when it is exceeded, e.g. `the largest timer delay`. */
  readonly maxReason?: string
  /** Returned when the value is `undefined`; without it `undefined` is an error ("required"). */
  readonly default?: number
}

/**
 * Checks a finite number (an integer with `integer`) within bounds. `NaN`, `Infinity`, numeric
 * strings and `null` are errors.
 *
 * @example
 * ```ts
 * checkNumber(-1, 'replicas[1].weight', { min: 0 }) // ConfigError: replicas[1].weight: expected a number >= 0, got -1
 * ```
 */
export function checkNumber(value: unknown, path: string, spec: NumberSpec): number {
  if (value === undefined && spec.default !== undefined) return spec.default
  const kind = spec.integer ? 'an integer' : 'a number'
  const lower = spec.min === undefined ? '' : ` ${spec.minExclusive ? '>' : '>='} ${spec.min}`
  const ok =
    typeof value === 'number' &&
    (spec.integer ? Number.isSafeInteger(value) : Number.isFinite(value)) &&
    (spec.min === undefined || (spec.minExclusive ? value > spec.min : value >= spec.min))
  if (!ok) {
    const given = value === undefined ? 'nothing (required)' : describe(value)
    throw new ConfigError(path, `expected ${kind}${lower}, got ${given}`)
  }
  if (spec.max !== undefined && value > spec.max) {
    const reason = spec.maxReason ? ` (${spec.maxReason})` : ''
    throw new ConfigError(path, `expected ${kind} <= ${spec.max}${reason}, got ${value}`)
  }
  return value === 0 ? 0 : value // no -0
}

/** A duration in ms for a timer: integer, at most {@link MAX_TIMER_MS}. */
export function checkMs(
  value: unknown,
  path: string,
  min: number,
  minExclusive: boolean,
  def: number,
): number {
  return checkNumber(value, path, {
    integer: true,
    min,
    minExclusive,
    max: MAX_TIMER_MS,
    maxReason: 'the largest timer delay',
    default: def,
  })
}

/** Checks a boolean (`undefined` gives `def`); `"true"`, `1`, `null` are errors. */
export function checkBoolean(value: unknown, path: string, def: boolean): boolean {
  if (value === undefined) return def
  if (typeof value === 'boolean') return value
  throw new ConfigError(path, `expected true or false, got ${describe(value)}`)
}

/**
 * The candidate closest to `input` by edit distance (case-insensitive), if close enough to be a
 * likely typo: within 1 edit for inputs of up to 3 characters, else within max(2, length / 3).
 *
 * @example
 * ```ts
 * didYouMean('replica', ['primary', 'replicas']) // 'replicas'
 * ```
 */
export function didYouMean(input: string, candidates: readonly string[]): string | undefined {
  const limit = input.length <= 3 ? 1 : Math.max(2, Math.floor(input.length / 3))
  let best: string | undefined
  let bestDistance = limit + 1
  for (const candidate of candidates) {
    const d = editDistance(input.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best
}

/** Levenshtein distance (insertions, deletions, substitutions), two rows. */
export function editDistance(a: string, b: string): number {
  if (a.length > 100 || b.length > 100) return Math.max(a.length, b.length) // not a typo; bound the work
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost))
    }
    prev = row
  }
  return prev[b.length]!
}
