/**
 * Micro-benchmarks of shard resolution and shard routing, no database (run as a child of run.mjs,
 * or alone: `node bench/shards.mjs`). mitata p50 in ns per call, over the in-memory fake driver
 * (lib/fake-driver.mjs), health checks off. Keys: 1024 random 16-byte (16-character hex) strings,
 * taken in turn so that no call sees the previous key.
 *
 * For each strategy (`hash`, `jump`, `java-hashcode`) over 4 and 16 shards:
 *  - resolve():             `resolver.resolve(key, names)` alone (HashResolver, JumpResolver,
 *                           JavaHashCodeResolver from dist/sharding/index.js), sync;
 *  - resolve + decision:    resolve, the shard's cluster by name (Map), then the same synthetic
 *                           routing decision as decision.mjs (AsyncLocalStorage.getStore + the
 *                           scope's shard check + isEvidentWrite + RoundRobinBalancer.pick over 2
 *                           candidates), sync: what the < 500 ns target is about;
 *  - shardFor():            `router.shardFor(key)`: resolve + the name check, an async function;
 *  - withShard + query:     `router.withShard(key, () => router.query(sql, params))` on a sharded
 *                           router, to the shard's primary;
 *  - withShard overhead:    that minus `router.query(sql, params)` on an unsharded router over the
 *                           same fake driver (also to the primary), measured interleaved with it:
 *                           everything sharding adds to a query, the awaits of the async
 *                           `withShard` / `shardFor` and the AsyncLocalStorage.run of the shard
 *                           scope included.
 * AsyncLocalStorage is enabled before any async figure (Node 20 promise-hook tax on both sides).
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { randomBytes } from 'node:crypto'
import { do_not_optimize, measure } from 'mitata'
import { RoundRobinBalancer } from '../dist/balancers/index.js'
import { createRouter, isEvidentWrite } from '../dist/index.js'
import { HashResolver, JavaHashCodeResolver, JumpResolver } from '../dist/sharding/index.js'
import { FAKE_PRIMARY, FAKE_REPLICAS, fakeDriver } from './lib/fake-driver.mjs'
import { median } from './lib/stats.mjs'

const SQL = 'SELECT $1::int AS x'
const PARAMS = Object.freeze([1])
const BATCH = 256
const REPS = 3
const KEYS = Object.freeze(Array.from({ length: 1024 }, () => randomBytes(8).toString('hex')))
const MASK = KEYS.length - 1
const STRATEGIES = Object.freeze({
  hash: () => new HashResolver(),
  jump: () => new JumpResolver(),
  'java-hashcode': () => new JavaHashCodeResolver(),
})
const SHARD_COUNTS = [4, 16]

const quiet = process.argv.includes('--quiet')
const rows = []

async function bench(key, label, fn) {
  const s = await measure(fn, { batch_samples: BATCH })
  rows.push({ key, label, p50: s.p50, avg: s.avg, min: s.min, p99: s.p99 })
  if (!quiet)
    console.log(
      `  ${label.padEnd(64)} p50 ${s.p50.toFixed(1).padStart(7)} ns   avg ${s.avg.toFixed(1).padStart(7)} ns`,
    )
}

const p50 = (key) => median(rows.filter((r) => r.key === key).map((r) => r.p50))

function shardsConfig(n) {
  const shards = {}
  for (let i = 0; i < n; i++)
    shards[`s${i}`] = {
      primary: FAKE_PRIMARY.replace('primary.invalid', `s${i}-primary.invalid`),
      replicas: FAKE_REPLICAS.map((u) => u.replace('.invalid', `-s${i}.invalid`)),
    }
  return shards
}

async function main() {
  const driver = fakeDriver()
  if (!quiet) console.log('shard resolve + route micro-benchmarks (mitata, wall clock, ns/call):')

  // 1. sync: resolve alone, and resolve + the synthetic routing decision
  const als = new AsyncLocalStorage()
  const rr = new RoundRobinBalancer()
  const baseScope = Object.freeze({ mode: 'read', tx: undefined, cluster: undefined, session: undefined })
  await als.run(baseScope, async () => {
    await bench('decision', 'synthetic decision alone: getStore + isEvidentWrite + pick', () => {
      const s = als.getStore()
      if (s !== undefined && s.tx === undefined && s.mode === 'read' && !isEvidentWrite(SQL))
        do_not_optimize(rr.pick(FAKE_CANDIDATES))
    })
    for (const n of SHARD_COUNTS) {
      const names = Object.freeze(Array.from({ length: n }, (_, i) => `s${i}`))
      const clusters = new Map(
        names.map((name) => [
          name,
          Object.freeze({
            name,
            candidates: Object.freeze(
              ['replica1', 'replica2'].map((r) => ({
                name: `${name}/${r}`,
                weight: 1,
                inFlight: 0,
                latencyMs: 0,
              })),
            ),
          }),
        ]),
      )
      for (const [strategy, make] of Object.entries(STRATEGIES)) {
        const resolver = make()
        let j = 0
        await bench(`resolve:${strategy}:${n}`, `${strategy} resolve(), ${n} shards`, () =>
          do_not_optimize(resolver.resolve(KEYS[j++ & MASK], names)),
        )
        await bench(
          `resolve+decision:${strategy}:${n}`,
          `${strategy} resolve + routing decision, ${n} shards`,
          () => {
            const cluster = clusters.get(resolver.resolve(KEYS[j++ & MASK], names))
            if (cluster === undefined) throw new Error('unknown shard')
            const s = als.getStore()
            if (s?.tx !== undefined && s.tx.cluster !== cluster) throw new Error('cross-shard')
            if (s !== undefined && s.mode === 'read' && !isEvidentWrite(SQL)) {
              const c = cluster.candidates
              do_not_optimize(c.length === 1 ? c[0] : rr.pick(c))
            }
          },
        )
      }
    }
  })
  als.disable()

  // 2. async: the routers over the fake driver (AsyncLocalStorage on from here)
  const plain = createRouter({ driver, primary: FAKE_PRIMARY, replicas: FAKE_REPLICAS, healthCheck: false })
  await plain.ready()
  plain.readOnly(() => 0)
  for (const n of SHARD_COUNTS) {
    for (const strategy of Object.keys(STRATEGIES)) {
      const router = createRouter({
        driver,
        shards: shardsConfig(n),
        sharding: { strategy },
        healthCheck: false,
      })
      await router.ready()
      router.readOnly(() => 0)
      const check = await router.withShard(KEYS[0], () => router.query(SQL, PARAMS))
      if (check.rows[0]?.x !== 1) throw new Error('fake driver returned an unexpected result')
      let j = 0
      for (let rep = 0; rep < REPS; rep++) {
        await bench(
          `query-unsharded:${strategy}:${n}`,
          'unsharded router.query() -> primary (baseline)',
          () => plain.query(SQL, PARAMS),
        )
        await bench(
          `withShard:${strategy}:${n}`,
          `${strategy} withShard(key, () => query()), ${n} shards`,
          () => router.withShard(KEYS[j++ & MASK], () => router.query(SQL, PARAMS)),
        )
      }
      await bench(`shardFor:${strategy}:${n}`, `${strategy} router.shardFor(key), ${n} shards`, () =>
        router.shardFor(KEYS[j++ & MASK]),
      )
      await router.close()
    }
  }
  await plain.close()

  const queryNs = median(rows.filter((r) => r.key.startsWith('query-unsharded:')).map((r) => r.p50))
  const summary = []
  for (const n of SHARD_COUNTS)
    for (const strategy of Object.keys(STRATEGIES)) {
      const k = `${strategy}:${n}`
      summary.push({
        strategy,
        shards: n,
        resolveNs: p50(`resolve:${k}`),
        resolvePlusDecisionNs: p50(`resolve+decision:${k}`),
        shardForNs: p50(`shardFor:${k}`),
        withShardQueryNs: p50(`withShard:${k}`),
        unshardedQueryNs: p50(`query-unsharded:${k}`),
        // against the baseline measured interleaved with it (same moments of the machine's load)
        withShardOverheadNs: p50(`withShard:${k}`) - p50(`query-unsharded:${k}`),
      })
    }
  return {
    rows,
    summary,
    baseline: { queryNs, decisionNs: p50('decision') },
    keys: '1024 random 16-char hex strings',
  }
}

const FAKE_CANDIDATES = Object.freeze(
  ['replica1', 'replica2'].map((name) => ({ name, weight: 1, inFlight: 0, latencyMs: 0 })),
)

main().then(
  (result) => {
    if (process.send) process.send({ ok: true, result })
    else console.log(JSON.stringify({ summary: result.summary, baseline: result.baseline }, null, 2))
  },
  (err) => {
    if (process.send) process.send({ ok: false, error: String(err?.stack ?? err) })
    else console.error(err)
    process.exitCode = 1
  },
)
