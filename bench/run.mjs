/**
 * routemate benchmarks (`npm run bench` = build + `node bench/run.mjs`; `--help` for options).
 *
 *  1. Read throughput through the router vs hand-written raw `pg` against a real local PostgreSQL
 *     primary + 2 streaming replicas, variants alternated round by round in the same run.
 *  2. The routing decision alone (no database): mitata micro-benchmarks (bench/decision.mjs).
 *  3. Heap allocation per routed query (bench/alloc.mjs, run with --expose-gc).
 *
 * Prints a summary and writes it as JSON to bench/results/latest.json. Speed is quoted as medians
 * and as ratios to the raw driver measured in the same run, never as absolute targets.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startMariaDbCluster, startPgCluster } from '../dist/testing/index.js'
import { parseArgs, selectedParts, USAGE } from './lib/args.mjs'
import { runScript, startWorker } from './lib/child.mjs'
import { MARIADB_VARIANTS } from './lib/mariadb-throughput.mjs'
import { MYSQL_BASE, MYSQL_POINT_TABLE_SQL, MYSQL_SHAPES, MYSQL_VARIANTS } from './lib/mysql-throughput.mjs'
import { PGJS_BASELINES, PGJS_VARIANTS } from './lib/postgresjs-throughput.mjs'
import {
  RYW_BASE,
  RYW_MYSQL_TABLE_SQL,
  RYW_MYSQL_VARIANTS,
  RYW_TABLE_SQL,
  RYW_VARIANTS,
  rywScore,
  rywTarget,
} from './lib/ryw.mjs'
import { fmt, median, pairedRatios, table } from './lib/stats.mjs'
import { census, createVariant, LABELS, VARIANTS } from './lib/throughput.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..')
const TARGET_RATIO = 0.95
const TARGET_DECISION_NS = 300
const TARGET_SHARD_NS = 500

function machine() {
  const cpus = os.cpus()
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    loadavg: os.loadavg().map((l) => Math.round(l * 100) / 100),
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
  }
}

/** A variant run in this process, with the same call interface as a worker. */
function localWorker(name) {
  let variant
  let closed = false
  return {
    pid: process.pid,
    async call(msg) {
      if (msg.cmd === 'init') variant = await createVariant(name, msg.config)
      else if (msg.cmd === 'warmup') return variant.warmup(msg.seconds)
      else if (msg.cmd === 'round') return variant.round(msg.seconds)
      else if (msg.cmd === 'close') {
        const asyncResourcesPerQuery = variant === undefined ? undefined : await census(variant)
        const distribution = variant?.distribution()
        closed = true
        await variant?.close()
        return { distribution, asyncResourcesPerQuery }
      }
      return undefined
    },
    /** After a failure: closes the variant's pools if `close` did not run. */
    async kill() {
      if (!closed && variant !== undefined) {
        closed = true
        await variant.close().catch(() => {})
      }
    },
  }
}

/** The throughput variants to run, checked (before anything runs). */
function variantNames(opts) {
  const names = opts.variants.split(',').map((v) => v.trim())
  for (const n of names)
    if (!(n in VARIANTS))
      throw new Error(`--variants: unknown variant "${n}" (known: ${Object.keys(VARIANTS).join(', ')})`)
  if (names[0] !== 'raw') throw new Error('--variants: the list must start with raw (the baseline)')
  return names
}

/**
 * Runs variants (one worker each, unless --in-process) against one cluster, alternating round by
 * round (A B C..., then ...C B A). `base(name)` names the variant each is compared with.
 */
async function alternate({ names, config, opts, log, base = () => names[0] }) {
  const workers = {}
  const rounds = Object.fromEntries(names.map((n) => [n, []]))
  const distribution = {}
  const asyncResources = {}
  const pad = Math.max(...names.map((n) => LABELS[n].length))
  try {
    for (const name of names) {
      workers[name] = opts.inProcess
        ? localWorker(name)
        : startWorker(path.join(here, 'throughput-worker.mjs'), [name])
      await workers[name].call({ cmd: 'init', name, config })
    }
    for (const name of names) {
      const w = await workers[name].call({ cmd: 'warmup', seconds: opts.warmup })
      log(`   warm-up ${LABELS[name].padEnd(pad)} ${fmt(w.qps).padStart(8)} q/s`)
    }
    for (let r = 0; r < opts.rounds; r++) {
      // A B C D E, then E D C B A: B runs next to A every round, and slow drift cancels out
      const order = r % 2 === 0 ? names : [...names].reverse()
      for (const name of order) {
        const res = await workers[name].call({ cmd: 'round', seconds: opts.seconds })
        rounds[name].push(res)
        const lat =
          res.p50Ms === undefined ? '' : `  p50 ${fmt(res.p50Ms, 3)} ms  p99 ${fmt(res.p99Ms, 3)} ms`
        log(
          `   round ${r + 1} ${LABELS[name].padEnd(pad)} ${fmt(res.qps).padStart(8)} q/s  ` +
            `client CPU ${fmt(res.cpuUsPerQuery, 1).padStart(5)} us/query${lat}${res.errors ? `  ERRORS ${res.errors}: ${res.firstError}` : ''}`,
        )
      }
    }
    for (const name of names) {
      const closed = await workers[name].call({ cmd: 'close' })
      distribution[name] = closed.distribution
      if (closed.asyncResourcesPerQuery !== undefined) asyncResources[name] = closed.asyncResourcesPerQuery
    }
  } finally {
    for (const w of Object.values(workers)) await w.kill()
  }

  const pick = (name, key) => rounds[name].map((x) => x[key])
  const summary = {}
  for (const name of names) {
    const b = base(name)
    const q = pick(name, 'qps')
    const paired = pairedRatios(rounds[name], rounds[b])
    const s = {
      label: LABELS[name],
      baseline: b,
      medianQps: median(q),
      minQps: Math.min(...q),
      maxQps: Math.max(...q),
      ratioOfMedians: median(q) / median(pick(b, 'qps')),
      medianPairedRatio: median(paired),
      medianClientCpuUsPerQuery: median(pick(name, 'cpuUsPerQuery')),
      errors: rounds[name].reduce((sum, x) => sum + x.errors, 0),
    }
    if (rounds[name][0]?.p50Ms !== undefined) {
      s.medianP50Ms = median(pick(name, 'p50Ms'))
      s.medianP99Ms = median(pick(name, 'p99Ms'))
      s.p50Ratio = s.medianP50Ms / median(pick(b, 'p50Ms'))
      s.p99Ratio = s.medianP99Ms / median(pick(b, 'p99Ms'))
      s.medianPairedP50Ratio = median(rounds[name].map((x, i) => x.p50Ms / rounds[b][i].p50Ms))
    }
    summary[name] = s
  }
  return { rounds, summary, distribution, asyncResourcesPerQuery: asyncResources }
}

/** One PostgreSQL cluster (primary + 2 replicas) shared by the pg and position parts. */
function pgClusterOnce(log) {
  let started
  return {
    get: () => {
      started ??= (async () => {
        const t0 = Date.now()
        const c = await startPgCluster({ replicas: 2, settings: { max_connections: 200 } })
        log(
          `   PostgreSQL cluster up in ${Date.now() - t0} ms (ports ${c.nodes.map((n) => n.port).join(', ')})`,
        )
        return c
      })()
      return started
    },
    stop: async () => {
      if (started !== undefined) await (await started.catch(() => undefined))?.stop()
    },
  }
}

async function throughput(opts, log, pgCluster) {
  const names = variantNames(opts)
  log(`\n## 1. Read throughput vs raw pg (PostgreSQL primary + 2 replicas on loopback)`)
  log(
    `   ${opts.concurrency} concurrent callers, pool max ${opts.max} per replica, ${opts.rounds} rounds x ${opts.seconds} s, ` +
      `warm-up ${opts.warmup} s, ${opts.inProcess ? 'all variants in this process' : 'one child process per variant'}`,
  )
  const cluster = await pgCluster.get()
  const config = {
    primary: cluster.primary.url,
    replicas: cluster.replicas.map((r) => r.url),
    concurrency: opts.concurrency,
    max: opts.max,
  }
  return alternate({ names, config, opts, log })
}

async function postgresJsThroughput(opts, log, pgCluster) {
  const names = Object.keys(PGJS_VARIANTS)
  log(`\n## 1b. Read throughput vs raw postgres.js (PostgreSQL primary + 2 replicas on loopback)`)
  log(
    `   ${opts.concurrency} concurrent callers, max ${opts.max} per replica, ${opts.rounds} rounds x ${opts.seconds} s, ` +
      `warm-up ${opts.warmup} s, ${opts.inProcess ? 'all variants in this process' : 'one child process per variant'}`,
  )
  const cluster = await pgCluster.get()
  const config = {
    primary: cluster.primary.url,
    replicas: cluster.replicas.map((r) => r.url),
    concurrency: opts.concurrency,
    max: opts.max,
  }
  return alternate({ names, config, opts, log, base: (name) => PGJS_BASELINES[name] })
}

/** One MariaDB cluster (primary + 2 GTID replicas) shared by the mysql2 and position-mysql parts. */
function mariaClusterOnce(log) {
  let started
  return {
    get: () => {
      started ??= (async () => {
        const t0 = Date.now()
        const start = () => startMariaDbCluster({ replicas: 2, settings: { max_connections: 200 } })
        // mariadb-install-db fails now and then on a loaded machine: one more try before giving up
        const c = await start().catch((err) => {
          log(
            `   MariaDB cluster failed to start (${String(err?.message ?? err).split('\n')[0]}), retrying once`,
          )
          return start()
        })
        log(`   MariaDB cluster up in ${Date.now() - t0} ms (ports ${c.nodes.map((n) => n.port).join(', ')})`)
        return c
      })()
      return started
    },
    stop: async () => {
      if (started !== undefined) await (await started.catch(() => undefined))?.stop()
    },
  }
}

/** The mysql2 variants to run (`--mysql-variants`), checked (before anything runs). */
function mysqlVariantNames(opts) {
  const names = opts.mysqlVariants.split(',').map((v) => v.trim())
  for (const n of names) {
    if (!(n in MYSQL_VARIANTS))
      throw new Error(
        `--mysql-variants: unknown variant "${n}" (known: ${Object.keys(MYSQL_VARIANTS).join(', ')})`,
      )
    if (!names.includes(MYSQL_BASE[n]))
      throw new Error(`--mysql-variants: "${n}" is compared with "${MYSQL_BASE[n]}": list it too`)
  }
  if (!(opts.mysqlShape in MYSQL_SHAPES))
    throw new Error(
      `--mysql-shape: unknown shape "${opts.mysqlShape}" (known: ${Object.keys(MYSQL_SHAPES).join(', ')})`,
    )
  return names
}

async function mysqlThroughput(opts, log, mariaCluster) {
  const names = mysqlVariantNames(opts)
  const shape = MYSQL_SHAPES[opts.mysqlShape]
  log(`\n## 4. Read throughput vs raw mysql2 (MariaDB primary + 2 GTID replicas on loopback)`)
  log(
    `   ${opts.concurrency} concurrent callers, connectionLimit ${opts.max} per replica, ${opts.rounds} rounds x ${opts.seconds} s, ` +
      `warm-up ${opts.warmup} s, ${opts.inProcess ? 'all variants in this process' : 'one child process per variant'}`,
  )
  log(`   statement (${opts.mysqlShape}): ${shape.sql}`)
  const cluster = await mariaCluster.get()
  if (opts.mysqlShape === 'point') {
    for (const sql of MYSQL_POINT_TABLE_SQL) await cluster.query('primary', sql)
    await cluster.waitForReplication()
  }
  const config = {
    primary: cluster.primary.url,
    replicas: cluster.replicas.map((r) => r.url),
    concurrency: opts.concurrency,
    max: opts.max,
    mysqlShape: opts.mysqlShape,
  }
  return alternate({ names, config, opts, log, base: (n) => MYSQL_BASE[n] })
}

async function readYourWritesMysql(opts, log, mariaCluster) {
  const names = Object.keys(RYW_MYSQL_VARIANTS)
  log(`\n## 5b. What read-your-writes costs (MariaDB primary + 2 GTID replicas on loopback)`)
  log(
    `   ${opts.sessions} concurrent sessions, ${opts.readsPerSession} reads per session on the read path, connectionLimit ${opts.max} per node, ` +
      `${opts.rounds} rounds x ${opts.seconds} s, warm-up ${opts.warmup} s`,
  )
  const cluster = await mariaCluster.get()
  await cluster.query('primary', RYW_MYSQL_TABLE_SQL)
  const config = {
    primary: cluster.primary.url,
    replicas: cluster.replicas.map((r) => r.url),
    sessions: opts.sessions,
    readsPerSession: opts.readsPerSession,
    max: opts.max,
  }
  return alternate({ names, config, opts, log, base: (n) => RYW_BASE[n] })
}

async function mariadbThroughput(opts, log, mariaCluster) {
  const names = Object.keys(MARIADB_VARIANTS)
  log(
    `\n## 4b. Read throughput vs the raw mariadb connector pool (MariaDB primary + 2 GTID replicas on loopback)`,
  )
  log(
    `   ${opts.concurrency} concurrent callers, connectionLimit ${opts.max} per replica, ${opts.rounds} rounds x ${opts.seconds} s, ` +
      `warm-up ${opts.warmup} s, ${opts.inProcess ? 'all variants in this process' : 'one child process per variant'}`,
  )
  const cluster = await mariaCluster.get()
  const config = {
    primary: cluster.primary.url,
    replicas: cluster.replicas.map((r) => r.url),
    concurrency: opts.concurrency,
    max: opts.max,
  }
  return alternate({ names, config, opts, log })
}

async function readYourWrites(opts, log, pgCluster) {
  const names = Object.keys(RYW_VARIANTS)
  log(`\n## 5. What read-your-writes costs (PostgreSQL primary + 2 replicas on loopback)`)
  log(
    `   ${opts.sessions} concurrent sessions, ${opts.readsPerSession} reads per session on the read path, pool max ${opts.max} per node, ` +
      `${opts.rounds} rounds x ${opts.seconds} s, warm-up ${opts.warmup} s`,
  )
  const cluster = await pgCluster.get()
  await cluster.query('primary', RYW_TABLE_SQL)
  const config = {
    primary: cluster.primary.url,
    replicas: cluster.replicas.map((r) => r.url),
    sessions: opts.sessions,
    readsPerSession: opts.readsPerSession,
    max: opts.max,
  }
  return alternate({ names, config, opts, log, base: (n) => RYW_BASE[n] })
}

function report(result, log) {
  const m = result.machine
  log(`\n# routemate benchmark summary`)
  log(`machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB, node ${m.node} (V8 ${m.v8}), ${m.platform}`)
  log(
    `load average at start: ${m.loadavg.join(' ')}, at end: ${result.loadavgEnd.join(' ')}; ` +
      `nice ${result.options.priority === '' ? 0 : result.options.priority}; date: ${result.date}`,
  )

  const t = result.throughput
  if (t !== undefined) {
    const o = result.options
    log(
      `\n## Read throughput (queries/s; ${o.concurrency} callers, pool max ${o.max}/replica, ${o.rounds} x ${o.seconds} s)`,
    )
    const rows = Object.entries(t.summary).map(([, s]) => [
      s.label,
      fmt(s.medianQps),
      `${fmt(s.minQps)}..${fmt(s.maxQps)}`,
      s.ratioOfMedians.toFixed(3),
      s.medianPairedRatio.toFixed(3),
      fmt(s.medianClientCpuUsPerQuery, 1),
    ])
    log(table(['variant', 'median q/s', 'range', 'ratio vs A', 'paired ratio', 'client CPU us/q'], rows))
    const b = t.summary.router
    if (b !== undefined)
      log(
        `B/A = ${b.ratioOfMedians.toFixed(3)} (ratio of medians), ${b.medianPairedRatio.toFixed(3)} (median of per-round ratios); ` +
          `target >= ${TARGET_RATIO}: ${b.ratioOfMedians >= TARGET_RATIO ? 'MET' : 'NOT MET'}`,
      )
    log(`queries per node: ${JSON.stringify(t.distribution)}`)
    log(`async resources created per query (async_hooks census, deterministic):`)
    for (const [name, counts] of Object.entries(t.asyncResourcesPerQuery ?? {}))
      log(
        `  ${LABELS[name].padEnd(58)} ${Object.entries(counts ?? {})
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      )
  }

  const d = result.decision?.summary
  if (d !== undefined) {
    const c = result.decision.cpu
    log(
      `\n## Routing decision, no database (ns per call: mitata p50 on the wall clock; CPU time where measured)`,
    )
    const row = (label, wallNs, cpuNs) => [label, fmt(wallNs, 1), cpuNs === undefined ? '' : fmt(cpuNs, 0)]
    log(
      table(
        ['measure', 'wall p50', 'CPU'],
        [
          row('AsyncLocalStorage.getStore()', d.getStoreNs),
          row('RoundRobinBalancer.pick (2 candidates)', d.pickNs),
          row('synthetic decision: getStore + isEvidentWrite + pick', d.decisionSyntheticNs),
          row('fake driver direct (acquire+execute+release), ALS off', d.directAlsOffNs),
          row('fake driver direct, ALS on (baseline below)', d.directNs, c.directNs),
          row('router.query() in a readOnly scope, fake driver', d.queryInScopeNs, c.queryInScopeNs),
          row('router.readOnly(() => router.query()), fake driver', d.readOnlyQueryNs, c.readOnlyQueryNs),
          row('router.query() unscoped (primary), fake driver', d.queryUnscopedNs),
          row(
            '= router overhead per query, in scope (query - direct)',
            d.routerOverheadInScopeNs,
            c.routerOverheadInScopeNs,
          ),
          row(
            '= router overhead per query, readOnly per query',
            d.routerOverheadReadOnlyNs,
            c.routerOverheadReadOnlyNs,
          ),
          row('= ALS promise-hook tax on the direct call (on - off)', d.alsPromiseHookTaxNs),
        ],
      ),
    )
    log(
      `decision target < ${TARGET_DECISION_NS} ns: synthetic decision ${d.decisionSyntheticNs < TARGET_DECISION_NS ? 'MET' : 'NOT MET'}; ` +
        `whole router overhead per query ${c.routerOverheadInScopeNs < TARGET_DECISION_NS ? 'MET' : 'NOT MET'}`,
    )
  }

  const pj = result.postgresJs
  if (pj !== undefined) {
    const o = result.options
    log(
      `\n## postgres.js read throughput (queries/s; PostgreSQL, ${o.concurrency} callers, max ${o.max}/replica, ${o.rounds} x ${o.seconds} s)`,
    )
    const rows = Object.values(pj.summary).map((s) => [
      s.label,
      fmt(s.medianQps),
      `${fmt(s.minQps)}..${fmt(s.maxQps)}`,
      s.ratioOfMedians.toFixed(3),
      s.medianPairedRatio.toFixed(3),
      fmt(s.medianClientCpuUsPerQuery, 1),
    ])
    log(table(['variant', 'median q/s', 'range', 'ratio vs base', 'paired ratio', 'client CPU us/q'], rows))
    log('(base: A for B and E, C for D: the same statement on the wire)')
    for (const [key, tag] of [
      ['pgjs-router', 'B/A (router.sql)'],
      ['pgjs-router-query', 'D/C (router.query)'],
      ['pgjs-raw-als', 'E/A (raw + ALS, no router)'],
    ]) {
      const b = pj.summary[key]
      if (b === undefined) continue
      log(
        `postgres.js ${tag} = ${b.ratioOfMedians.toFixed(3)} (ratio of medians), ${b.medianPairedRatio.toFixed(3)} (median of per-round ratios)` +
          (key === 'pgjs-raw-als'
            ? ''
            : `; target >= ${TARGET_RATIO}: ${b.ratioOfMedians >= TARGET_RATIO ? 'MET' : 'NOT MET'}`),
      )
    }
    const rq = pj.summary['pgjs-router-query']
    const raw = pj.summary['pgjs-raw']
    if (rq !== undefined && raw !== undefined)
      log(`postgres.js D/A (router.query vs raw tagged sql) = ${(rq.medianQps / raw.medianQps).toFixed(3)}`)
    log(`queries per node: ${JSON.stringify(pj.distribution)}`)
    log(`async resources created per query (async_hooks census, deterministic):`)
    for (const [name, counts] of Object.entries(pj.asyncResourcesPerQuery ?? {}))
      log(
        `  ${(PGJS_VARIANTS[name] ?? name).padEnd(74)} ${Object.entries(counts ?? {})
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      )
  }

  const my = result.mysql2
  if (my !== undefined) {
    const o = result.options
    log(
      `\n## mysql2 read throughput (queries/s; MariaDB, ${o.mysqlShape}, ${o.concurrency} callers, connectionLimit ${o.max}/replica, ${o.rounds} x ${o.seconds} s)`,
    )
    const rows = Object.values(my.summary).map((s) => [
      s.label,
      fmt(s.medianQps),
      `${fmt(s.minQps)}..${fmt(s.maxQps)}`,
      s.baseline,
      s.ratioOfMedians.toFixed(3),
      s.medianPairedRatio.toFixed(3),
      fmt(s.medianClientCpuUsPerQuery, 1),
    ])
    log(table(['variant', 'median q/s', 'range', 'vs', 'ratio', 'paired ratio', 'client CPU us/q'], rows))
    // The target: the router at least as fast (against raw) as mysql2's own PoolCluster, same protocol.
    for (const [router, cluster] of [
      ['mysql-router', 'mysql-cluster'],
      ['mysql-router-pool', 'mysql-cluster'],
      ['mysql-router-execute', 'mysql-cluster-execute'],
    ]) {
      const r = my.summary[router]
      const c = my.summary[cluster]
      if (r === undefined) continue
      const against = c === undefined ? TARGET_RATIO : c.ratioOfMedians
      log(
        `${router}: ${r.ratioOfMedians.toFixed(3)} of ${r.baseline} (ratio of medians), ${r.medianPairedRatio.toFixed(3)} (paired); ` +
          `${c === undefined ? `target >= ${TARGET_RATIO}` : `${cluster} ${c.ratioOfMedians.toFixed(3)} (paired ${c.medianPairedRatio.toFixed(3)})`}: ` +
          `${r.ratioOfMedians >= against ? 'MET' : 'NOT MET'}`,
      )
    }
    log(`queries per node: ${JSON.stringify(my.distribution)}`)
    log(`async resources created per query (async_hooks census, deterministic):`)
    for (const [name, counts] of Object.entries(my.asyncResourcesPerQuery ?? {}))
      log(
        `  ${LABELS[name].padEnd(58)} ${Object.entries(counts ?? {})
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      )
  }

  const ma = result.mariadb
  if (ma !== undefined) {
    const o = result.options
    log(
      `\n## mariadb connector read throughput (queries/s; MariaDB, ${o.concurrency} callers, connectionLimit ${o.max}/replica, ${o.rounds} x ${o.seconds} s)`,
    )
    const rows = Object.values(ma.summary).map((s) => [
      s.label,
      fmt(s.medianQps),
      `${fmt(s.minQps)}..${fmt(s.maxQps)}`,
      s.ratioOfMedians.toFixed(3),
      s.medianPairedRatio.toFixed(3),
      fmt(s.medianClientCpuUsPerQuery, 1),
    ])
    log(table(['variant', 'median q/s', 'range', 'ratio vs A', 'paired ratio', 'client CPU us/q'], rows))
    for (const [key, letter] of [
      ['mariadb-router', 'B'],
      ['mariadb-router-pool', 'C'],
    ]) {
      const b = ma.summary[key]
      if (b !== undefined)
        log(
          `mariadb ${letter}/A = ${b.ratioOfMedians.toFixed(3)} (ratio of medians), ${b.medianPairedRatio.toFixed(3)} (median of per-round ratios); ` +
            `target >= ${TARGET_RATIO}: ${b.ratioOfMedians >= TARGET_RATIO ? 'MET' : 'NOT MET'}`,
        )
    }
    log(`queries per node: ${JSON.stringify(ma.distribution)}`)
    log(`async resources created per query (async_hooks census, deterministic):`)
    for (const [name, counts] of Object.entries(ma.asyncResourcesPerQuery ?? {}))
      log(
        `  ${LABELS[name].padEnd(58)} ${Object.entries(counts ?? {})
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      )
  }

  const forged = result.forgedTokens
  if (forged !== undefined) {
    log(
      `\n## Forged tokens (honest token-less readers' p50: forged clients vs the same clients sending no token)`,
    )
    for (const [dialect, modes] of Object.entries(forged.dialects))
      for (const [mode, r] of Object.entries(modes))
        log(
          `${dialect} ${mode}: p50 ${fmt(r.plain.p50Ms, 3)} -> ${fmt(r.forged.p50Ms, 3)} ms, ratio ${r.forgedVsPlain.toFixed(2)} ` +
            `(paired ${r.pairedForgedVsPlain.toFixed(2)}); forged reads on the primary: ${r.forged.served.primary ?? 0}`,
        )
  }

  for (const [ryw, dialect] of [
    [result.readYourWrites, 'PostgreSQL'],
    [result.readYourWritesMysql, 'MariaDB'],
  ]) {
    if (ryw === undefined) continue
    const o = result.options
    log(
      `\n## Read-your-writes cost (${dialect}; ${o.sessions} sessions, ${o.readsPerSession} reads per session, ${o.rounds} x ${o.seconds} s; ` +
        `latency per write (W) or per read (R), ratios vs the same path with readYourWrites off)`,
    )
    const rows = Object.values(ryw.summary).map((s) => [
      s.label,
      fmt(s.medianQps),
      s.ratioOfMedians.toFixed(3),
      s.medianPairedRatio.toFixed(3),
      fmt(s.medianP50Ms, 3),
      fmt(s.medianP99Ms, 3),
      s.p50Ratio.toFixed(3),
      s.p99Ratio.toFixed(3),
      fmt(s.medianClientCpuUsPerQuery, 1),
    ])
    log(
      table(
        [
          'variant',
          'median ops/s',
          'ratio vs off',
          'paired ratio',
          'p50 ms',
          'p99 ms',
          'p50 ratio',
          'p99 ratio',
          'client CPU us/op',
        ],
        rows,
      ),
    )
    log(
      `statements per node (INSERTs included) and reads redirected to the primary: ${JSON.stringify(ryw.distribution)}`,
    )
    const position = ryw.summary['ryw-r-position']
    const mix = ryw.summary['ryw-r-mix']
    if (position !== undefined && mix !== undefined) {
      const paired = median(pairedRatios(ryw.rounds['ryw-r-position'], ryw.rounds['ryw-r-mix']))
      log(
        `R1 against R4 (the same reads, about the same node mix, no read-your-writes work): ` +
          `${(position.medianQps / mix.medianQps).toFixed(3)} (paired ${paired.toFixed(3)})`,
      )
    }
    for (const [name, s] of Object.entries(ryw.summary)) {
      const target = rywTarget(name) // only the default variants (no wait) have one
      if (target === undefined) continue
      const got = rywScore(s)
      // The per-round ratios show the noise a single median hides (rounds run back to back, A B ... then ... B A).
      const perRound = pairedRatios(ryw.rounds[name], ryw.rounds[s.baseline])
        .map((r) => r.toFixed(2))
        .join(' ')
      log(
        `target ${s.label} >= ${target} of off: ${got.toFixed(3)} (lower of the two ratios): ${got >= target ? 'MET' : 'NOT MET'}` +
          ` (per round: ${perRound})`,
      )
    }
  }

  const sh = result.shards
  if (sh !== undefined) {
    log(`\n## Shard resolve + route, no database (ns per call, mitata p50; 16-byte string keys)`)
    log(
      table(
        [
          'strategy',
          'shards',
          'resolve()',
          'resolve + decision (sync)',
          'shardFor() (async)',
          'withShard+query',
          'withShard overhead',
        ],
        sh.summary.map((r) => [
          r.strategy,
          String(r.shards),
          fmt(r.resolveNs, 1),
          fmt(r.resolvePlusDecisionNs, 1),
          fmt(r.shardForNs, 1),
          fmt(r.withShardQueryNs, 1),
          fmt(r.withShardOverheadNs, 1),
        ]),
      ),
    )
    const b = sh.baseline
    log(
      `baseline: unsharded router.query() (primary) ${fmt(b.queryNs, 1)} ns (median over all pairs); synthetic decision alone ` +
        `(getStore + isEvidentWrite + pick) ${fmt(b.decisionNs, 1)} ns; withShard overhead = withShard+query - the unsharded query measured interleaved with it`,
    )
    const worst = Math.max(...sh.summary.map((r) => r.resolvePlusDecisionNs))
    log(
      `target resolve + routing decision < ${TARGET_SHARD_NS} ns: worst ${fmt(worst, 1)} ns: ${worst < TARGET_SHARD_NS ? 'MET' : 'NOT MET'}`,
    )
  }

  const a = result.alloc
  if (a !== undefined) {
    log(`\n## Heap allocation per operation (bytes/op, N = ${a.n})`)
    log(
      table(
        ['operation', 'B/op'],
        a.results.map((r) => [r.label, fmt(r.bytesPerOp, 1)]),
      ),
    )
    const s = a.summary
    log(
      `router.query in a readOnly scope allocates ${fmt(s.routerExtraInScopeBytes, 1)} B/query beyond the direct driver call ` +
        `(${fmt(s.routerExtraReadOnlyBytes, 1)} B with readOnly() per query); the decision itself: ${fmt(s.decisionSyntheticBytes, 1)} B`,
    )
    log(`method: ${a.method}`)
  }
}

async function main() {
  let opts
  try {
    opts = parseArgs(process.argv.slice(2))
    variantNames(opts)
    mysqlVariantNames(opts)
    selectedParts(opts)
  } catch (err) {
    console.error(err.message)
    return 2
  }
  if (opts.help) {
    console.log(USAGE)
    return 0
  }
  const log = (line) => console.log(line)
  // Children (workers, PostgreSQL servers started through pg_ctl) inherit the nice value.
  if (opts.priority !== '') os.setPriority(opts.priority)
  const started = Date.now()
  const result = { date: new Date().toISOString(), machine: machine(), options: opts }
  log(`routemate bench: ${result.machine.cpu}, ${result.machine.cores} cores, node ${result.machine.node}`)

  const parts = selectedParts(opts)
  result.parts = [...parts]
  log(`parts: ${result.parts.join(', ')}`)
  if (parts.has('micro')) {
    log(`\n## 2. Routing decision micro-benchmarks (bench/decision.mjs)`)
    result.decision = await runScript(path.join(here, 'decision.mjs'))
  }
  if (parts.has('alloc')) {
    log(`\n## 3. Heap allocation (bench/alloc.mjs)`)
    result.alloc = await runScript(
      path.join(here, 'alloc.mjs'),
      [],
      ['--expose-gc', '--max-semi-space-size=256', '--min-semi-space-size=256'],
    )
  }
  if (parts.has('shards')) {
    log(`\n## 6. Shard resolve + route micro-benchmarks (bench/shards.mjs)`)
    result.shards = await runScript(path.join(here, 'shards.mjs'))
  }
  const pgCluster = pgClusterOnce(log)
  try {
    if (parts.has('pg')) result.throughput = await throughput(opts, log, pgCluster)
    if (parts.has('postgres')) result.postgresJs = await postgresJsThroughput(opts, log, pgCluster)
    if (parts.has('position')) result.readYourWrites = await readYourWrites(opts, log, pgCluster)
  } finally {
    await pgCluster.stop()
  }
  const mariaCluster = mariaClusterOnce(log)
  try {
    if (parts.has('mysql2')) result.mysql2 = await mysqlThroughput(opts, log, mariaCluster)
    if (parts.has('mariadb')) result.mariadb = await mariadbThroughput(opts, log, mariaCluster)
    if (parts.has('position-mysql'))
      result.readYourWritesMysql = await readYourWritesMysql(opts, log, mariaCluster)
  } finally {
    await mariaCluster.stop()
  }
  if (parts.has('tokens')) {
    log(`\n## 7. Forged consistency tokens vs honest readers (bench/forged-tokens.mjs)`)
    result.forgedTokens = await runScript(path.join(here, 'forged-tokens.mjs'), [
      '--rounds',
      String(opts.rounds),
      '--seconds',
      String(opts.seconds),
    ])
  }

  result.durationS = Math.round((Date.now() - started) / 100) / 10
  result.loadavgEnd = os.loadavg().map((l) => Math.round(l * 100) / 100)
  report(result, log)
  const out = path.resolve(root, opts.out)
  fs.mkdirSync(path.dirname(out), { recursive: true })
  fs.writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`)
  log(`\nwrote ${path.relative(process.cwd(), out)} (${result.durationS} s)`)
  return 0
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (err) => {
    console.error(err)
    process.exitCode = 1
  },
)
