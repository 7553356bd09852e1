/**
 * Does the per-query cost grow with the topology? mitata p50 in ns per call over the in-memory
 * fake driver (lib/fake-driver.mjs), health checks off, AsyncLocalStorage on for every figure:
 *  - `readOnly(() => query())` with 2 vs 100 replicas (round-robin balancer, the default);
 *  - `withShard(key, () => query())` with 2 vs 1,024 shards, for `hash` and `jump`;
 *  - `withShard(key, () => query())` vs `readOnly(() => query())` (2 shards vs 2 replicas).
 * Run alone with `node bench/scaling.mjs` after `npx tsup`, or as part `scaling` of run.mjs.
 * Targets (issue 16): 100 vs 2 replicas within 20 %, 1,024 vs 2 shards within 20 %, withShard
 * at most 1.5 × readOnly.
 */
import { randomBytes } from 'node:crypto'
import { measure } from 'mitata'
import { createRouter } from '../dist/index.js'
import { FAKE_PRIMARY, fakeDriver } from './lib/fake-driver.mjs'

const SQL = 'SELECT $1::int AS x'
const PARAMS = Object.freeze([1])
const KEYS = Object.freeze(Array.from({ length: 1024 }, () => randomBytes(8).toString('hex')))
const MASK = KEYS.length - 1
const quiet = process.argv.includes('--quiet')
const json = process.argv.includes('--json')
const rows = {}

async function bench(key, fn) {
  const s = await measure(fn, { batch_samples: 256 })
  rows[key] = s.p50
  if (!quiet && !json) console.log(`  ${key.padEnd(40)} p50 ${s.p50.toFixed(1).padStart(8)} ns`)
}

const replicaUrls = (n, tag = '') =>
  Array.from({ length: n }, (_, i) => `postgres://bench@replica${i}${tag}.invalid:5432/app`)

function shardsConfig(n) {
  const shards = {}
  for (let i = 0; i < n; i++)
    shards[`s${i}`] = {
      primary: FAKE_PRIMARY.replace('primary.invalid', `s${i}-primary.invalid`),
      replicas: replicaUrls(2, `-s${i}`),
    }
  return shards
}

async function main() {
  const driver = fakeDriver()
  const routers = []
  for (const n of [2, 100]) {
    const r = createRouter({ driver, primary: FAKE_PRIMARY, replicas: replicaUrls(n), healthCheck: false })
    await r.ready()
    routers.push(r)
    await bench(`readOnly:${n}-replicas`, () => r.readOnly(() => r.query(SQL, PARAMS)))
  }
  for (const strategy of ['hash', 'jump']) {
    for (const n of [2, 1024]) {
      const r = createRouter({ driver, shards: shardsConfig(n), sharding: { strategy }, healthCheck: false })
      await r.ready()
      routers.push(r)
      let j = 0
      await bench(`withShard:${strategy}:${n}-shards`, () =>
        r.withShard(KEYS[j++ & MASK], () => r.query(SQL, PARAMS)),
      )
    }
  }
  const ratio = (a, b) => rows[a] / rows[b]
  const summary = {
    p50ns: rows,
    replicas100vs2: ratio('readOnly:100-replicas', 'readOnly:2-replicas'),
    hashShards1024vs2: ratio('withShard:hash:1024-shards', 'withShard:hash:2-shards'),
    jumpShards1024vs2: ratio('withShard:jump:1024-shards', 'withShard:jump:2-shards'),
    withShardVsReadOnly: ratio('withShard:hash:2-shards', 'readOnly:2-replicas'),
  }
  if (json) console.log(JSON.stringify(summary))
  else
    for (const [k, v] of Object.entries(summary))
      if (k !== 'p50ns') console.log(`  ${k.padEnd(40)} ${v.toFixed(2)} ×`)
  await Promise.all(routers.map((r) => r.close()))
}

await main()
