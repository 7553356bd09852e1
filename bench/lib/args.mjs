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
  only: '',
  sessions: 16,
  readsPerSession: 10,
  mysqlShape: 'point',
  mysqlVariants:
    'mysql-raw,mysql-cluster,mysql-router,mysql-router-pool,mysql-raw-execute,mysql-cluster-execute,mysql-router-execute,mysql-raw-checkout',
}

/** The parts of a full run, in the order they run; `--only` picks some of them. */
export const PARTS = Object.freeze({
  micro: 'routing-decision micro-benchmarks (bench/decision.mjs)',
  alloc: 'heap allocation per query (bench/alloc.mjs)',
  shards: 'shard resolve + route micro-benchmarks (bench/shards.mjs)',
  pg: 'read throughput, router vs raw pg (PostgreSQL cluster)',
  postgres: 'read throughput, router vs raw postgres.js (PostgreSQL cluster)',
  mysql2: 'read throughput, router vs raw mysql2 (MariaDB cluster)',
  mariadb: 'read throughput, router vs the raw mariadb connector pool (MariaDB cluster)',
  position: 'read-your-writes cost: off vs position vs window (PostgreSQL cluster)',
  'position-mysql': 'read-your-writes cost: off vs position (MariaDB cluster)',
  tokens: 'forged consistency tokens vs honest readers (bench/forged-tokens.mjs; PostgreSQL and MariaDB)',
})

/** The parts to run: `--only` if given, else all minus the `--skip-*` ones. Throws on an unknown name. */
export function selectedParts(opts) {
  if (opts.only !== '') {
    const names = opts.only
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '')
    for (const n of names)
      if (!(n in PARTS))
        throw new Error(`--only: unknown part "${n}" (known: ${Object.keys(PARTS).join(', ')})`)
    return new Set(names)
  }
  const all = new Set(Object.keys(PARTS))
  if (opts.skipMicro) all.delete('micro')
  if (opts.skipAlloc) all.delete('alloc')
  if (opts.skipDb)
    for (const p of ['pg', 'postgres', 'mysql2', 'mariadb', 'position', 'position-mysql', 'tokens'])
      all.delete(p)
  return all
}

const NUMBERS = new Set(['rounds', 'seconds', 'warmup', 'concurrency', 'max', 'sessions', 'readsPerSession'])

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
  --only LIST       run only these parts, comma-separated (default: all): micro, alloc, shards,
                    pg, mysql2, position, position-mysql, tokens (e.g. --only position,position-mysql)
  --sessions N      concurrent sessions in the read-your-writes benchmark (default ${DEFAULTS.sessions})
  --reads-per-session N
                    reads after the one write of each session, read-your-writes benchmark (default ${DEFAULTS.readsPerSession})
  --mysql-shape S   mysql2 part: the statement, select1 (SELECT 1), param (SELECT ? AS x) or point
                    (a primary-key select with one parameter; default ${DEFAULTS.mysqlShape})
  --mysql-variants LIST
                    mysql2 part: variants, comma-separated, each with its raw baseline
                    (default ${DEFAULTS.mysqlVariants})
  --in-process      run all throughput variants in this process instead of one child process each
  --skip-db         skip the database benchmarks (pg, mysql2, position, position-mysql, tokens)
  --skip-micro      skip the routing-decision micro-benchmarks
  --skip-alloc      skip the allocation measurement
  --out FILE        JSON results file (default ${DEFAULTS.out})
`
