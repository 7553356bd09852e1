/**
 * Pools the per-round paired ratios of the read-your-writes variants over several runs of
 * `bench/run.mjs --only position,position-mysql` (their `--out` JSON files), because on a shared
 * box a single run's median of 5–7 rounds swings by ±5 % (even for the write variants, which send
 * exactly the statements of off). Prints, per variant against its baseline: the runs, the rounds
 * pooled, the median of all their paired ratios with its interquartile range and a seeded 95 %
 * bootstrap interval, and how many of the runs met issue 16's target on their own.
 *
 *   node bench/pool-rounds.mjs run1.json run2.json ...
 */
import { readFileSync } from 'node:fs'
import { rywScore, rywTarget } from './lib/ryw.mjs'
import { bootstrapMedianInterval, median, pairedRatios, quantile, table } from './lib/stats.mjs'

const files = process.argv.slice(2)
if (files.length === 0 || files.includes('--help') || files.includes('-h')) {
  console.log(
    'usage: node bench/pool-rounds.mjs RESULT.json [RESULT.json ...]  (outputs of bench/run.mjs --out)',
  )
  process.exit(files.length === 0 ? 1 : 0)
}

/** Per variant: its label, baseline, pooled paired ratios and per-run verdicts. */
const pooled = new Map()
for (const file of files) {
  let result
  try {
    result = JSON.parse(readFileSync(file, 'utf8'))
  } catch (err) {
    console.error(`${file}: not a bench/run.mjs result (${err.message})`)
    process.exit(1)
  }
  const setup = `${result.options?.sessions} sessions, pool ${result.options?.max}`
  for (const ryw of [result.readYourWrites, result.readYourWritesMysql]) {
    if (ryw === undefined) continue
    for (const [name, s] of Object.entries(ryw.summary)) {
      if (name === s.baseline) continue
      const ratios = pairedRatios(ryw.rounds[name], ryw.rounds[s.baseline])
      const entry = pooled.get(name) ?? { label: s.label, ratios: [], runs: 0, met: 0, setups: new Set() }
      entry.ratios.push(...ratios)
      entry.runs++
      entry.setups.add(setup)
      const target = rywTarget(name)
      if (target !== undefined && rywScore(s) >= target) entry.met++
      pooled.set(name, entry)
    }
  }
}
if (pooled.size === 0) {
  console.error(
    'no read-your-writes results in these files (run bench/run.mjs --only position,position-mysql)',
  )
  process.exit(1)
}

const rows = []
for (const [name, e] of pooled) {
  const [lo, hi] = bootstrapMedianInterval(e.ratios)
  const target = rywTarget(name)
  rows.push([
    e.label,
    String(e.runs),
    String(e.ratios.length),
    median(e.ratios).toFixed(3),
    `${quantile(e.ratios, 0.25).toFixed(3)}–${quantile(e.ratios, 0.75).toFixed(3)}`,
    `${lo.toFixed(3)}–${hi.toFixed(3)}`,
    target === undefined ? '' : `>= ${target}: ${e.met} of ${e.runs}`,
    [...e.setups].join('; '),
  ])
}
console.log(
  table(
    [
      'variant (paired ratio vs off)',
      'runs',
      'rounds',
      'median',
      'interquartile',
      '95 % interval of the median',
      'runs meeting the target alone',
      'setup',
    ],
    rows,
  ),
)
