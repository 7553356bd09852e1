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

/** Quantile `q` (0..1) of `values`, linear between closest ranks (`NaN` for an empty list). */
export function quantile(values, q) {
  if (values.length === 0) return Number.NaN
  const s = [...values].sort((a, b) => a - b)
  const at = (s.length - 1) * q
  const lo = Math.floor(at)
  const hi = Math.ceil(at)
  return s[lo] + (s[hi] - s[lo]) * (at - lo)
}

/**
 * A percentile bootstrap interval of the median of `values`: `resamples` medians of resamples
 * with replacement, their `(1 - level) / 2` and `(1 + level) / 2` quantiles. Seeded (a fixed
 * xorshift generator), so the same values always give the same interval.
 */
export function bootstrapMedianInterval(values, level = 0.95, resamples = 10_000, seed = 0x2545f491) {
  if (values.length === 0) return [Number.NaN, Number.NaN]
  let x = seed >>> 0 || 1
  const next = () => {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    return x / 0x1_0000_0000
  }
  const medians = new Float64Array(resamples)
  const sample = new Array(values.length)
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < values.length; i++) sample[i] = values[Math.floor(next() * values.length)]
    medians[r] = median(sample)
  }
  const all = Array.from(medians)
  return [quantile(all, (1 - level) / 2), quantile(all, (1 + level) / 2)]
}
