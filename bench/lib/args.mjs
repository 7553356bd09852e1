/** Command-line options of `bench/run.mjs` (`--name value` or `--flag`). */

const DEFAULTS = {
  rounds: 5,
  seconds: 3,
  warmup: 1.5,
  concurrency: 32,
  max: 16,
  skipDb: false,
  skipMicro: false,
  skipAlloc: false,
  inProcess: false,
  out: 'bench/results/latest.json',
  variants: 'raw,router,router-scope,raw-als,router-nohc',
  priority: '',
}

const NUMBERS = new Set(['rounds', 'seconds', 'warmup', 'concurrency', 'max'])

function camel(flag) {
  return flag.replace(/-([a-z])/g, (_, c) => c.toUpperCase())
}

/** Parses `argv` (without node and the script) over the defaults; throws on an unknown option. */
export function parseArgs(argv) {
  const opts = { ...DEFAULTS }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--help' || arg === '-h') {
      opts.help = true
      continue
    }
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}" (see --help)`)
    const key = camel(arg.slice(2))
    if (!(key in DEFAULTS)) throw new Error(`unknown option ${arg} (see --help)`)
    if (typeof DEFAULTS[key] === 'boolean') {
      opts[key] = true
    } else {
      const value = argv[++i]
      if (value === undefined) throw new Error(`${arg} needs a value`)
      if (key === 'priority') {
        const n = Number(value)
        if (!(Number.isInteger(n) && n >= -20 && n <= 19))
          throw new Error(`${arg}: expected a nice value from -20 to 19, got "${value}"`)
        opts[key] = n
      } else if (NUMBERS.has(key)) {
        const n = Number(value)
        if (!(Number.isFinite(n) && n > 0))
          throw new Error(`${arg}: expected a positive number, got "${value}"`)
        opts[key] = key === 'seconds' || key === 'warmup' ? n : Math.round(n)
      } else opts[key] = value
    }
  }
  return opts
}

export const USAGE = `Usage: node bench/run.mjs [options]   (build first: npx tsup, or use npm run bench)

  --rounds N        measured rounds per throughput variant (default ${DEFAULTS.rounds})
  --seconds S       length of one round, seconds (default ${DEFAULTS.seconds})
  --warmup S        warm-up of each variant before round 1, seconds (default ${DEFAULTS.warmup})
  --concurrency C   concurrent callers in the throughput benchmark (default ${DEFAULTS.concurrency})
  --max M           pool max per node, raw pg and router alike (default ${DEFAULTS.max})
  --variants LIST   throughput variants, comma-separated, raw first (default ${DEFAULTS.variants})
  --priority N      run the benchmark (and so its children and the PostgreSQL servers, which inherit
                    it) at nice value N, e.g. -10 on a shared machine (needs root or CAP_SYS_NICE)
  --in-process      run all throughput variants in this process instead of one child process each
  --skip-db         skip the PostgreSQL throughput benchmark
  --skip-micro      skip the routing-decision micro-benchmarks
  --skip-alloc      skip the allocation measurement
  --out FILE        JSON results file (default ${DEFAULTS.out})
`
