/**
 * Forged consistency tokens vs honest readers (`node bench/forged-tokens.mjs`, or part `tokens` of
 * `bench/run.mjs`; build first). Against a real primary + 2 replicas per dialect (PostgreSQL,
 * MariaDB), one router per read-your-writes mode, the configuration of the report: `position` with
 * `maxWaitMs: 100` (a forged far-ahead position used to hold a replica connection 100 ms per read,
 * then read the primary), and `window` (a forged `{"w":1e300}` used to send every read of that
 * client to the primary, forever).
 *
 * Each round runs `--honest` closed-loop token-less readers (`SELECT $1`, read-only, each read
 * timed) next to `--clients` other clients that each send one read every `--pace-ms`:
 *  - `alone`:   no other clients (the honest readers only);
 *  - `plain`:   the other clients send no token (the same load, nothing forged);
 *  - `forged`:  the other clients send forged tokens: a far-future write time and a position the
 *               primary never reached (`FFFFFFFF/FFFFFFFF`, a GTID far ahead), in turn.
 * Scenarios alternate round by round. Reported: the honest readers' p50/p99 per scenario (median
 * over rounds), the ratio forged/plain and forged/alone of the p50s, and where the forged reads
 * were served. `--dist DIR` benchmarks another build (e.g. one made from an older commit).
 */
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { fmt, median, table } from './lib/stats.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))

const DEFAULTS = {
  rounds: 5,
  seconds: 3,
  warmup: 1,
  honest: 4,
  clients: 30,
  paceMs: 20,
  dialects: 'postgres,mariadb',
  dist: path.join(here, '..', 'dist'),
}

function parse(argv) {
  const o = { ...DEFAULTS }
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, '').replace(/-([a-z])/g, (_, c) => c.toUpperCase())
    if (!(key in DEFAULTS)) throw new Error(`unknown option ${argv[i]}`)
    const v = argv[++i]
    o[key] = typeof DEFAULTS[key] === 'number' ? Number(v) : v
  }
  return o
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Nearest-rank percentile of a list of numbers. */
function pct(list, p) {
  if (list.length === 0) return Number.NaN
  const s = Float64Array.from(list).sort()
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]
}

const forge = (payload) => `rm1.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`

const DIALECTS = {
  postgres: {
    start: (t) => t.startPgCluster({ replicas: 2 }),
    driver: async (dist) => (await import(pathToFileURL(path.join(dist, 'pg', 'index.js')).href)).pgDriver(),
    select: 'SELECT $1::int AS x',
    port: 'SELECT inet_server_port() AS port',
    farAhead: 'FFFFFFFF/FFFFFFFF',
  },
  mariadb: {
    start: (t) => t.startMariaDbCluster({ replicas: 2, settings: { max_connections: 200 } }),
    driver: async (dist) =>
      (await import(pathToFileURL(path.join(dist, 'mysql2', 'index.js')).href)).mysql2Driver(),
    select: 'SELECT ? AS x',
    port: 'SELECT @@port AS port',
    farAhead: '0-1-99999999999',
  },
}

const MODES = {
  position: { mode: 'position', maxWaitMs: 100 },
  window: { mode: 'window', windowMs: 2000 },
}

async function runDialect(name, o, lib, testing, log) {
  const d = DIALECTS[name]
  const cluster = await d.start(testing)
  const ports = new Map([[cluster.primary.port, 'primary'], ...cluster.replicas.map((r) => [r.port, r.name])])
  const out = {}
  try {
    for (const [modeName, readYourWrites] of Object.entries(MODES)) {
      const router = lib.createRouter({
        driver: await d.driver(o.dist),
        primary: cluster.primary.url,
        replicas: cluster.replicas.map((r) => r.url),
        readYourWrites,
      })
      router.on('error', () => {})
      await router.ready()
      const tokens = [forge({ w: 1e300 }), forge({ w: Date.now(), p: { default: d.farAhead } })]
      let n = 0
      const round = async (scenario, seconds) => {
        let stop = false
        const lat = []
        const served = {}
        let errors = 0
        const honest = async () => {
          while (!stop) {
            const t = performance.now()
            try {
              await router.withConsistencyToken(undefined, () =>
                router.readOnly(() => router.query(d.select, [n++ & 0xffff])),
              )
              lat.push(performance.now() - t)
            } catch {
              errors++
            }
          }
        }
        const other = async (i) => {
          let k = i
          while (!stop) {
            const token = scenario === 'forged' ? tokens[k++ % tokens.length] : undefined
            try {
              const { rows } = await router.withConsistencyToken(token, () =>
                router.readOnly(() => router.query(d.port)),
              )
              const node = ports.get(Number(rows[0]?.port)) ?? 'unknown'
              served[node] = (served[node] ?? 0) + 1
            } catch {
              errors++
            }
            await sleep(o.paceMs)
          }
        }
        const callers = []
        for (let i = 0; i < o.honest; i++) callers.push(honest())
        if (scenario !== 'alone') for (let i = 0; i < o.clients; i++) callers.push(other(i))
        await sleep(seconds * 1000)
        stop = true
        await Promise.all(callers)
        return { reads: lat.length, p50Ms: pct(lat, 0.5), p99Ms: pct(lat, 0.99), served, errors }
      }
      const scenarios = ['alone', 'plain', 'forged']
      for (const s of scenarios) await round(s, o.warmup)
      const rounds = Object.fromEntries(scenarios.map((s) => [s, []]))
      for (let r = 0; r < o.rounds; r++) {
        for (const s of r % 2 === 0 ? scenarios : [...scenarios].reverse()) {
          const res = await round(s, o.seconds)
          rounds[s].push(res)
          log(
            `   ${name} ${modeName.padEnd(8)} round ${r + 1} ${s.padEnd(6)} honest p50 ${fmt(res.p50Ms, 3)} ms  p99 ${fmt(res.p99Ms, 3)} ms  ` +
              `(${res.reads} reads)  others served ${JSON.stringify(res.served)}${res.errors ? `  ERRORS ${res.errors}` : ''}`,
          )
        }
      }
      const summary = Object.fromEntries(
        scenarios.map((s) => [
          s,
          {
            p50Ms: median(rounds[s].map((x) => x.p50Ms)),
            p99Ms: median(rounds[s].map((x) => x.p99Ms)),
            served: rounds[s].reduce((acc, x) => {
              for (const [k, v] of Object.entries(x.served)) acc[k] = (acc[k] ?? 0) + v
              return acc
            }, {}),
          },
        ]),
      )
      out[modeName] = {
        ...summary,
        forgedVsPlain: summary.forged.p50Ms / summary.plain.p50Ms,
        forgedVsAlone: summary.forged.p50Ms / summary.alone.p50Ms,
        // Median of per-round ratios (the scenarios of one round ran back to back): steadier on a shared machine.
        pairedForgedVsPlain: median(rounds.forged.map((x, i) => x.p50Ms / rounds.plain[i].p50Ms)),
        pairedForgedVsAlone: median(rounds.forged.map((x, i) => x.p50Ms / rounds.alone[i].p50Ms)),
        tokens: router.stats().tokens,
        readYourWritesRedirects: router.stats().clusters[0].readYourWritesRedirects,
      }
      await router.close()
    }
  } finally {
    await cluster.stop()
  }
  return out
}

export function report(result, log) {
  const rows = []
  for (const [dialect, modes] of Object.entries(result.dialects)) {
    for (const [mode, r] of Object.entries(modes)) {
      const f = r.forged.served
      const total = Object.values(f).reduce((a, b) => a + b, 0)
      rows.push([
        dialect,
        mode,
        fmt(r.alone.p50Ms, 3),
        fmt(r.plain.p50Ms, 3),
        fmt(r.forged.p50Ms, 3),
        `${r.forgedVsPlain.toFixed(2)} (paired ${r.pairedForgedVsPlain.toFixed(2)})`,
        `${r.forgedVsAlone.toFixed(2)} (paired ${r.pairedForgedVsAlone.toFixed(2)})`,
        `${fmt((100 * (total - (f.primary ?? 0))) / Math.max(total, 1), 1)}% of ${fmt(total)}`,
      ])
    }
  }
  log(
    table(
      [
        'dialect',
        'mode',
        'p50 alone',
        'p50 plain',
        'p50 forged',
        'forged/plain',
        'forged/alone',
        'forged reads on replicas',
      ],
      rows,
    ),
  )
}

async function main() {
  const o = parse(process.argv.slice(2))
  const lib = await import(pathToFileURL(path.join(o.dist, 'index.js')).href)
  const testing = await import(pathToFileURL(path.join(here, '..', 'dist', 'testing', 'index.js')).href)
  const log = (l) => console.log(l)
  log(
    `forged tokens: ${o.honest} honest token-less readers (closed loop) + ${o.clients} other clients (one read per ${o.paceMs} ms each), ` +
      `${o.rounds} rounds x ${o.seconds} s per scenario; build ${o.dist}`,
  )
  const result = { options: o, dialects: {} }
  for (const name of o.dialects.split(','))
    result.dialects[name] = await runDialect(name, o, lib, testing, log)
  report(result, log)
  return result
}

main().then(
  (result) => {
    if (process.send) process.send({ ok: true, result })
  },
  (err) => {
    console.error(err)
    if (process.send) process.send({ ok: false, error: String(err?.stack ?? err) })
    process.exitCode = 1
  },
)
