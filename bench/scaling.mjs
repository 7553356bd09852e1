/**
 * Does the per-query cost grow with the topology? mitata p50 in ns per call over the in-memory
 * fake driver (lib/fake-driver.mjs), health checks off:
 *  - `readOnly(() => query())` with 2 vs 100 replicas (round-robin balancer, the default);
 *  - `withShard(key, () => query())` with 2 vs 1,024 shards, for `hash` and `jump`;
 *  - `withShard(key, () => query())` vs `readOnly(() => query())` (2 shards vs 2 replicas).
 *
 * Each case runs in a child process of its own with one router in it, as in an application: every
 * router has its own `AsyncLocalStorage`, and in Node 20 every enabled one adds work to every
 * promise of the process (and leaves its inline caches polymorphic), so cases measured one after
 * the other in one process got slower by the number of routers made before them, not by their
 * topology. Rounds alternate the order of the cases (1..n, then n..1); reported: the median p50 per
 * case, the ratio of medians and the median of per-round ratios.
 *
 * Run alone with `node bench/scaling.mjs [--rounds 5] [--json] [--quiet]` after `npx tsup`
 * (`--dist DIR`: the build in DIR/dist instead, e.g. one made from another commit).
 * Targets (issue 16): 100 vs 2 replicas within 20 %, 1,024 vs 2 shards within 20 %, withShard
 * at most 1.5 × readOnly.
 */
import { randomBytes } from 'node:crypto'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { measure } from 'mitata'
import { runScript } from './lib/child.mjs'
import { median } from './lib/stats.mjs'

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? argv[i + 1] : dflt
}
const quiet = argv.includes('--quiet')
const json = argv.includes('--json')
const rounds = Number(opt('rounds', '5'))
const distDir = opt('dist', fileURLToPath(new URL('..', import.meta.url)))
const here = fileURLToPath(import.meta.url)

const SQL = 'SELECT $1::int AS x'
const PARAMS = Object.freeze([1])

const CASES = Object.freeze([
  'readOnly:2-replicas',
  'readOnly:100-replicas',
  'withShard:hash:2-shards',
  'withShard:hash:1024-shards',
  'withShard:jump:2-shards',
  'withShard:jump:1024-shards',
])

const replicaUrls = (n, tag = '') =>
  Array.from({ length: n }, (_, i) => `postgres://bench@replica${i}${tag}.invalid:5432/app`)

function shardsConfig(primary, n) {
  const shards = {}
  for (let i = 0; i < n; i++)
    shards[`s${i}`] = {
      primary: primary.replace('primary.invalid', `s${i}-primary.invalid`),
      replicas: replicaUrls(2, `-s${i}`),
    }
  return shards
}

/** Child: builds the one router of `name`, measures it, sends its p50 (ns) over IPC. */
async function runCase(name) {
  const { createRouter } = await import(pathToFileURL(`${distDir}/dist/index.js`).href)
  const { FAKE_PRIMARY, fakeDriver } = await import('./lib/fake-driver.mjs')
  const driver = fakeDriver()
  const [kind, a, b] = name.split(':')
  let r
  let fn
  if (kind === 'readOnly') {
    const n = Number.parseInt(a, 10)
    r = createRouter({ driver, primary: FAKE_PRIMARY, replicas: replicaUrls(n), healthCheck: false })
    fn = () => r.readOnly(() => r.query(SQL, PARAMS))
  } else {
    const n = Number.parseInt(b, 10)
    const keys = Object.freeze(Array.from({ length: 1024 }, () => randomBytes(8).toString('hex')))
    const mask = keys.length - 1
    r = createRouter({
      driver,
      shards: shardsConfig(FAKE_PRIMARY, n),
      sharding: { strategy: a },
      healthCheck: false,
    })
    let j = 0
    fn = () => r.withShard(keys[j++ & mask], () => r.query(SQL, PARAMS))
  }
  await r.ready()
  for (let i = 0; i < 50_000; i++) await fn() // JIT warm-up, before the first sample
  const p50s = []
  for (let i = 0; i < 3; i++) p50s.push((await measure(fn, { batch_samples: 256 })).p50)
  await r.close()
  return median(p50s)
}

async function main() {
  const p50 = Object.fromEntries(CASES.map((c) => [c, []]))
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? CASES : [...CASES].reverse()
    for (const c of order) p50[c].push(await runScript(here, ['--case', c, '--dist', distDir]))
    if (!quiet && !json)
      console.log(`  round ${round + 1}: ${CASES.map((c) => `${c} ${p50[c][round].toFixed(0)}`).join(', ')}`)
  }
  const rows = Object.fromEntries(CASES.map((c) => [c, median(p50[c])]))
  const pair = (a, b) => ({
    ratioOfMedians: rows[a] / rows[b],
    medianOfRoundRatios: median(p50[a].map((x, i) => x / p50[b][i])),
  })
  const summary = {
    rounds,
    p50ns: rows,
    replicas100vs2: pair('readOnly:100-replicas', 'readOnly:2-replicas'),
    hashShards1024vs2: pair('withShard:hash:1024-shards', 'withShard:hash:2-shards'),
    jumpShards1024vs2: pair('withShard:jump:1024-shards', 'withShard:jump:2-shards'),
    withShardVsReadOnly: pair('withShard:hash:2-shards', 'readOnly:2-replicas'),
  }
  if (json) {
    console.log(JSON.stringify(summary))
    return
  }
  if (quiet) return
  for (const c of CASES)
    console.log(`  ${c.padEnd(40)} p50 ${rows[c].toFixed(1).padStart(8)} ns (median of ${rounds})`)
  for (const [k, v] of Object.entries(summary)) {
    if (k === 'p50ns' || k === 'rounds') continue
    console.log(
      `  ${k.padEnd(40)} ${v.ratioOfMedians.toFixed(2)} × (median of per-round ratios ${v.medianOfRoundRatios.toFixed(2)} ×)`,
    )
  }
}

const caseName = opt('case', undefined)
if (caseName !== undefined) {
  try {
    process.send({ ok: true, result: await runCase(caseName) })
  } catch (err) {
    process.send({ ok: false, error: String(err?.stack ?? err) })
  }
} else {
  await main()
}
