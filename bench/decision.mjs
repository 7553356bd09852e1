/**
 * Micro-benchmarks of the routing decision, no database (run as a child of run.mjs, or alone:
 * `node bench/decision.mjs`). Uses mitata's `measure`; every figure is ns per call, p50 of mitata's
 * samples. The router runs over an in-memory fake driver (lib/fake-driver.mjs) with health checks off.
 *
 * On a shared machine a wall clock also counts the time other processes hold the CPU. So the key
 * pair (direct vs router.query) is also measured in CPU time: `process.cpuUsage()` over a loop of
 * 100 000 awaited calls, 7 repetitions interleaved, median. (Not as mitata's clock: Linux reports
 * process CPU time with a lag of up to a few ms, fine over 100 ms, wrong over one short sample.)
 *
 * The decision is not a public method, so it is measured two ways:
 *  - synthetic: the same public pieces the router calls (AsyncLocalStorage.getStore, isEvidentWrite,
 *    RoundRobinBalancer.pick) in a sync loop: the pure decision, no promise involved;
 *  - overhead: router.query on the fake driver minus the same fake driver called directly
 *    (acquire + execute + release): everything the router adds to a query, promises included.
 *
 * Order matters in Node 20: the first AsyncLocalStorage.run installs process-wide promise hooks, so
 * the direct call is measured once before that (ALS off) and again after it (ALS on), and the
 * router is compared with the ALS-on figure.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { do_not_optimize, measure } from 'mitata'
import { RoundRobinBalancer } from '../dist/balancers/index.js'
import { createRouter, isEvidentWrite } from '../dist/index.js'
import { directQuery, FAKE_PRIMARY, FAKE_REPLICAS, fakeDriver } from './lib/fake-driver.mjs'
import { median } from './lib/stats.mjs'

const SQL = 'SELECT $1::int AS x'
const PARAMS = Object.freeze([1])
const REPS = 3
// calls per mitata sample: small, so that most samples fit between two preemptions on a busy machine
const BATCH = 256
const CPU_REPS = 7
const CPU_CALLS = 100_000

/** CPU time (user + system) of this process per awaited call of `fn`, in ns, over CPU_CALLS calls. */
async function cpuNsPerCall(fn) {
  const c0 = process.cpuUsage()
  for (let i = 0; i < CPU_CALLS; i++) await fn()
  const c = process.cpuUsage(c0)
  return ((c.user + c.system) * 1e3) / CPU_CALLS
}

const quiet = process.argv.includes('--quiet')
const rows = []

async function bench(key, label, fn) {
  const s = await measure(fn, { batch_samples: BATCH })
  const row = { key, label, p50: s.p50, avg: s.avg, min: s.min, p99: s.p99 }
  rows.push(row)
  if (!quiet)
    console.log(
      `  ${label.padEnd(66)} p50 ${s.p50.toFixed(1).padStart(7)} ns   avg ${s.avg.toFixed(1).padStart(7)} ns`,
    )
  return row
}

async function main() {
  const driver = fakeDriver()
  const pool = driver.createPool()
  const direct = () => directQuery(driver, pool, SQL, PARAMS)

  if (!quiet) console.log('routing decision micro-benchmarks (mitata, wall clock, ns/call):')
  // 1. before any AsyncLocalStorage is enabled in this process
  await bench('direct-als-off', 'fake driver direct: acquire+execute+release [ALS off]', direct)

  // 2. the pieces of the decision, and the synthetic decision, in a sync loop
  const als = new AsyncLocalStorage()
  const scope = Object.freeze({ mode: 'read', tx: undefined, cluster: undefined, session: undefined })
  const candidates = Object.freeze(
    ['replica1', 'replica2'].map((name) => ({ name, weight: 1, inFlight: 0, latencyMs: 0 })),
  )
  const rr = new RoundRobinBalancer()
  await als.run(scope, async () => {
    await bench('getStore', 'AsyncLocalStorage.getStore()', () => do_not_optimize(als.getStore()))
    await bench('pick', 'RoundRobinBalancer.pick(2 candidates)', () => do_not_optimize(rr.pick(candidates)))
    await bench('decision-synthetic', 'synthetic decision: getStore + isEvidentWrite + pick', () => {
      const s = als.getStore()
      if (s !== undefined && s.tx === undefined && s.mode === 'read' && !isEvidentWrite(SQL)) {
        const c = candidates
        do_not_optimize(c.length === 1 ? c[0] : rr.pick(c))
      }
    })
  })
  als.disable() // leave only the router's storage enabled for what follows

  // 3. the router over the fake driver, interleaved with the direct call (ALS on from here)
  const router = createRouter({ driver, primary: FAKE_PRIMARY, replicas: FAKE_REPLICAS, healthCheck: false })
  await router.ready()
  router.readOnly(() => 0) // enables the router's AsyncLocalStorage
  const check = await router.readOnly(() => router.query(SQL, PARAMS))
  if (check.rows[0]?.x !== 1) throw new Error('fake driver returned an unexpected result')
  for (let rep = 0; rep < REPS; rep++) {
    await router.readOnly(() =>
      bench('direct', 'fake driver direct: acquire+execute+release [ALS on]', direct),
    )
    await router.readOnly(() =>
      bench('query-in-scope', 'router.query() inside readOnly scope (fake driver)', () =>
        router.query(SQL, PARAMS),
      ),
    )
    await bench('readonly-query', 'router.readOnly(() => router.query()) (fake driver)', () =>
      router.readOnly(() => router.query(SQL, PARAMS)),
    )
  }
  // 4. the same pair in CPU time (robust to other processes taking the CPU), interleaved
  const cpu = { direct: [], queryInScope: [], readOnlyQuery: [] }
  for (let rep = 0; rep < CPU_REPS; rep++) {
    cpu.direct.push(await router.readOnly(() => cpuNsPerCall(direct)))
    cpu.queryInScope.push(await router.readOnly(() => cpuNsPerCall(() => router.query(SQL, PARAMS))))
    cpu.readOnlyQuery.push(await cpuNsPerCall(() => router.readOnly(() => router.query(SQL, PARAMS))))
  }
  const cpuSummary = {
    directNs: median(cpu.direct),
    queryInScopeNs: median(cpu.queryInScope),
    readOnlyQueryNs: median(cpu.readOnlyQuery),
  }
  cpuSummary.routerOverheadInScopeNs = cpuSummary.queryInScopeNs - cpuSummary.directNs
  cpuSummary.routerOverheadReadOnlyNs = cpuSummary.readOnlyQueryNs - cpuSummary.directNs
  if (!quiet)
    console.log(
      `  CPU time per call (median of ${CPU_REPS}): direct ${cpuSummary.directNs.toFixed(0)} ns, ` +
        `router.query in scope ${cpuSummary.queryInScopeNs.toFixed(0)} ns, readOnly+query ${cpuSummary.readOnlyQueryNs.toFixed(0)} ns`,
    )

  await bench('query-unscoped', 'router.query() outside any scope -> primary (fake driver)', () =>
    router.query(SQL, PARAMS),
  )
  const served = Object.fromEntries(router.stats().nodes.map((n) => [n.name, n.queries]))
  await router.close()

  const p50 = (key) => median(rows.filter((r) => r.key === key).map((r) => r.p50))
  const summary = {
    getStoreNs: p50('getStore'),
    pickNs: p50('pick'),
    decisionSyntheticNs: p50('decision-synthetic'),
    directAlsOffNs: p50('direct-als-off'),
    directNs: p50('direct'),
    queryInScopeNs: p50('query-in-scope'),
    readOnlyQueryNs: p50('readonly-query'),
    queryUnscopedNs: p50('query-unscoped'),
  }
  summary.alsPromiseHookTaxNs = summary.directNs - summary.directAlsOffNs
  summary.routerOverheadInScopeNs = summary.queryInScopeNs - summary.directNs
  summary.routerOverheadReadOnlyNs = summary.readOnlyQueryNs - summary.directNs
  summary.alsRunNs = summary.readOnlyQueryNs - summary.queryInScopeNs
  return { rows, summary, cpu: cpuSummary, cpuSamples: cpu, served }
}

main().then(
  (result) => {
    if (process.send) process.send({ ok: true, result })
    else console.log(JSON.stringify(result.summary, null, 2))
  },
  (err) => {
    if (process.send) process.send({ ok: false, error: String(err?.stack ?? err) })
    else console.error(err)
    process.exitCode = 1
  },
)
