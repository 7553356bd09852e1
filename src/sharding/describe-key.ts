/**
 * Shows a shard key (or range bound) in an error message: strings quoted and cut at 100
 * characters, bigints with their `n`, anything else by type.
 * @internal
 *
 * @example
 * ```ts
 * describeKey('u-1') // "'u-1'"
 * describeKey(42n) // '42n'
 * ```
 */
export function describeKey(key: unknown): string {
  switch (typeof key) {
    case 'string':
      return key.length > 100 ? `'${key.slice(0, 100)}…' (${key.length} characters)` : `'${key}'`
    case 'number':
      return String(key)
    case 'bigint':
      return `${key}n`
    default:
      return key === null ? 'null' : typeof key
  }
}
