/**
 * Compares PostgreSQL WAL positions (`pg_lsn` text such as `16/B374D848`: two hexadecimal numbers
 * of up to 8 digits each, either case): whether `replay` has reached `target`. Unparsable input
 * (anything else, such as a tampered token's position) never counts as reached.
 *
 * Read-your-writes compares positions on every read of a session that wrote, so this parses
 * without allocating (no slices, no `parseInt`).
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
  const hiA = hexPart(replay, 0, a)
  const hiB = hexPart(target, 0, b)
  const loA = hexPart(replay, a + 1, replay.length)
  const loB = hexPart(target, b + 1, target.length)
  if (hiA < 0 || hiB < 0 || loA < 0 || loB < 0) return false
  if (hiA !== hiB) return hiA > hiB
  return loA >= loB
}

/** The value of the hexadecimal digits `s[start..end)` (1 to 8 of them), or -1. */
function hexPart(s: string, start: number, end: number): number {
  const n = end - start
  if (n < 1 || n > 8) return -1
  let v = 0
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i)
    let d: number
    if (c >= 48 && c <= 57) d = c - 48
    else if (c >= 65 && c <= 70) d = c - 55
    else if (c >= 97 && c <= 102) d = c - 87
    else return -1
    v = v * 16 + d
  }
  return v
}
