/**
 * Heap allocation per routed query (run by run.mjs as
 * `node --expose-gc --max-semi-space-size=256 --min-semi-space-size=256 bench/alloc.mjs [--n N]`).
 *
 * Method. Node 20 has no allocation counter, so we count bytes that appear in the heap while no
 * garbage collection runs: young-generation semi-spaces of 256 MB make scavenges rare; each batch
 * starts right after a full `gc()`, reads `v8.getHeapStatistics().used_heap_size` before and after
 * running the operation `batch` times, and a PerformanceObserver on 'gc' entries proves that no
 * collection that frees memory happened in between (a batch that saw one is thrown away and run
 * again smaller; incremental marking steps free nothing and are allowed).
 * Everything allocated in the batch, garbage or not, is then in the delta. The same harness with a
 * no-op (sync) or an `await` of an already-resolved promise (async) is subtracted, so a figure is
 * what the operation itself allocates. Each operation is warmed up (optimized) first; the figure is
 * the median over batches of (delta - harness delta) / batch.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { constants, PerformanceObserver } from 'node:perf_hooks'
import v8 from 'node:v8'
import { RoundRobinBalancer } from '../dist/balancers/index.js'
import { createRouter, isEvidentWrite } from '../dist/index.js'
import { directQuery, FAKE_PRIMARY, FAKE_REPLICAS, fakeDriver } from './lib/fake-driver.mjs'
import { median } from './lib/stats.mjs'

if (typeof globalThis.gc !== 'function') {
  console.error('run with node --expose-gc (see the header of bench/alloc.mjs)')
  process.exit(2)
}
const nArg = process.argv.indexOf('--n')
const N = nArg > 0 ? Number(process.argv[nArg + 1]) : 1e6
const BATCH = Math.min(50_000, N)

const SQL = 'SELECT $1::int AS x'
const PARAMS = Object.freeze([1])
const RESOLVED = Promise.resolve(1)

// Collections that free memory (scavenges, mark-compacts...) invalidate a batch; incremental
// marking steps (kind NODE_PERFORMANCE_GC_INCREMENTAL) only mark, they move and free nothing.
let gcs = 0
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.detail?.kind !== constants.NODE_PERFORMANCE_GC_INCREMENTAL) gcs++
}).observe({ entryTypes: ['gc'] })

const tick = () => new Promise((resolve) => setImmediate(resolve))
async function settle() {
  for (let k = 0; k < 3; k++) await tick()
}
const used = () => v8.getHeapStatistics().used_heap_size

/** Keeps results alive so the optimizer cannot drop the calls. */
const sink = { value: undefined }
let retries = 0
function syncLoop(op, n) {
  for (let i = 0; i < n; i++) sink.value = op()
}
async function asyncLoop(op, n) {
  for (let i = 0; i < n; i++) sink.value = await op()
}

/** Bytes allocated by `n` runs of `op` under `loop`, GC-free (retried smaller when a GC interferes). */
async function measureBatch(loop, op, n) {
  for (let size = n; size >= 1000; size = Math.floor(size / 2)) {
    globalThis.gc()
    await settle()
    const g0 = gcs
    const h0 = used()
    await loop(op, size)
    const h1 = used()
    await settle()
    if (gcs === g0) return { bytes: h1 - h0, n: size }
    retries++
  }
  throw new Error('could not run a batch without a GC')
}

/** Median bytes per op of `op` over `total` runs in batches, minus the harness's own bytes per op. */
async function bytesPerOp(loop, op, total, harness) {
  await loop(op, 20_000) // warm up: optimize op and the loop with it
  await loop(op, 20_000)
  const perOp = []
  let done = 0
  while (done < total) {
    const { bytes, n } = await measureBatch(loop, op, Math.min(BATCH, total - done))
    perOp.push(bytes / n)
    done += n
  }
  return median(perOp) - harness
}

async function main() {
  const results = []
  const record = (key, label, bytes, n) => {
    results.push({ key, label, bytesPerOp: Math.max(0, Math.round(bytes * 10) / 10), n })
    console.log(`  ${label.padEnd(66)} ${bytes.toFixed(1).padStart(7)} B/op`)
  }
  console.log(`heap allocation per operation (N = ${N}, GC-free batches of up to ${BATCH}):`)

  const driver = fakeDriver()
  const pool = driver.createPool()
  const direct = () => directQuery(driver, pool, SQL, PARAMS)
  const awaitResolved = () => RESOLVED

  const syncHarness = await bytesPerOp(syncLoop, () => 0, N, 0)
  const asyncHarnessOff = await bytesPerOp(asyncLoop, awaitResolved, N / 10, 0)
  record('harness-async-als-off', 'harness: await of a resolved promise [ALS off]', asyncHarnessOff, N / 10)
  record(
    'direct-als-off',
    'fake driver direct: acquire+execute+release [ALS off]',
    await bytesPerOp(asyncLoop, direct, N / 5, asyncHarnessOff),
    N / 5,
  )

  const als = new AsyncLocalStorage()
  const scope = Object.freeze({ mode: 'read', tx: undefined, cluster: undefined, session: undefined })
  const candidates = Object.freeze(
    ['replica1', 'replica2'].map((name) => ({ name, weight: 1, inFlight: 0, latencyMs: 0 })),
  )
  const rr = new RoundRobinBalancer()
  await als.run(scope, async () => {
    record(
      'getStore',
      'AsyncLocalStorage.getStore()',
      await bytesPerOp(syncLoop, () => als.getStore(), N, syncHarness),
      N,
    )
    record(
      'pick',
      'RoundRobinBalancer.pick(2 candidates)',
      await bytesPerOp(syncLoop, () => rr.pick(candidates), N, syncHarness),
      N,
    )
    const decide = () => {
      const s = als.getStore()
      if (s !== undefined && s.tx === undefined && s.mode === 'read' && !isEvidentWrite(SQL))
        return candidates.length === 1 ? candidates[0] : rr.pick(candidates)
      return undefined
    }
    record(
      'decision-synthetic',
      'synthetic decision: getStore + isEvidentWrite + pick',
      await bytesPerOp(syncLoop, decide, N, syncHarness),
      N,
    )
  })
  als.disable()

  const router = createRouter({ driver, primary: FAKE_PRIMARY, replicas: FAKE_REPLICAS, healthCheck: false })
  await router.ready()
  router.readOnly(() => 0) // enables the router's AsyncLocalStorage: promise hooks on from here
  const asyncHarness = await router.readOnly(() => bytesPerOp(asyncLoop, awaitResolved, N / 10, 0))
  record('harness-async', 'harness: await of a resolved promise [ALS on]', asyncHarness, N / 10)
  record(
    'direct',
    'fake driver direct: acquire+execute+release [ALS on]',
    await router.readOnly(() => bytesPerOp(asyncLoop, direct, N, asyncHarness)),
    N,
  )
  record(
    'query-in-scope',
    'router.query() inside readOnly scope (fake driver)',
    await router.readOnly(() => bytesPerOp(asyncLoop, () => router.query(SQL, PARAMS), N, asyncHarness)),
    N,
  )
  record(
    'readonly-query',
    'router.readOnly(() => router.query()) (fake driver)',
    await bytesPerOp(asyncLoop, () => router.readOnly(() => router.query(SQL, PARAMS)), N, asyncHarness),
    N,
  )
  await router.close()

  const by = (key) => results.find((r) => r.key === key)?.bytesPerOp
  return {
    method:
      'used_heap_size delta over GC-free batches (256 MB semi-spaces, gc() before each batch, PerformanceObserver proves no GC ran), minus the loop harness, median over batches',
    n: N,
    discardedBatches: retries,
    results,
    summary: {
      decisionSyntheticBytes: by('decision-synthetic'),
      directAlsOffBytes: by('direct-als-off'),
      directBytes: by('direct'),
      queryInScopeBytes: by('query-in-scope'),
      readOnlyQueryBytes: by('readonly-query'),
      routerExtraInScopeBytes: by('query-in-scope') - by('direct'),
      routerExtraReadOnlyBytes: by('readonly-query') - by('direct'),
    },
  }
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
