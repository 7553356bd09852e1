/**
 * Compares PostgreSQL WAL positions (`pg_lsn` text such as `16/B374D848`): whether `replay` has
 * reached `target`. Unparsable input never counts as reached.
 *
 * @example
 * ```ts
 * lsnReached('0/3000060', '0/3000028') // true
 * ```
 */
export function lsnReached(replay: string, target: string): boolean {
  const a = replay.indexOf('/')
  const b = target.indexOf('/')
  if (a < 0 || b < 0) return false
  const hiA = Number.parseInt(replay.slice(0, a), 16)
  const hiB = Number.parseInt(target.slice(0, b), 16)
  if (Number.isNaN(hiA) || Number.isNaN(hiB)) return false
  if (hiA !== hiB) return hiA > hiB
  const loA = Number.parseInt(replay.slice(a + 1), 16)
  const loB = Number.parseInt(target.slice(b + 1), 16)
  if (Number.isNaN(loA) || Number.isNaN(loB)) return false
  return loA >= loB
}
