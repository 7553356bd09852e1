/** Small statistics and formatting helpers for the benchmarks. */

/** The median of a list of numbers (`NaN` for an empty list). */
export function median(values) {
  if (values.length === 0) return Number.NaN
  const s = [...values].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

/**
 * Round by round, the throughput of one variant over another's (`a`, `b`: their lists of round
 * results, `{ qps }`, in the same order): the paired ratios of the alternating rounds.
 */
export function pairedRatios(a, b) {
  return a.map((x, i) => x.qps / b[i].qps)
}

/** `n` with thousands separators and `digits` decimals. */
export function fmt(n, digits = 0) {
  if (!Number.isFinite(n)) return String(n)
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

/** A markdown table from a header row and data rows (cells are strings). */
export function table(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)))
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n')
}
