/**
 * What read-your-writes costs (run by `bench/run.mjs --only position,position-mysql`), against a
 * PostgreSQL primary + 2 streaming replicas (`ryw-*`, pgDriver) or a MariaDB primary + 2 GTID
 * replicas (`ryw-my-*`, mysql2Driver, `?` placeholders), each variant in its own child process like
 * the throughput ones. Every variant is a router (default options, health checks on) that differs
 * only in `readYourWrites`; `sessions` callers run in a closed loop, each operation timed on its own.
 *
 * Write path, one operation = one session with one write:
 *   `router.session(() => router.query('INSERT INTO t (v) VALUES ($1)', [i]))`
 *  - ryw-w-off:       readYourWrites false
 *  - ryw-w-position:  { mode: 'position' }: PostgreSQL: the write only takes a stamp (the primary's
 *                     position is read when a read of the session needs it, which never happens
 *                     here); MariaDB: the position comes with the INSERT's reply (`last_gtid`
 *                     session tracking). No extra round trip either way.
 *
 * Read path, one session = one INSERT (not timed), then `readsPerSession` reads, each timed:
 *   `router.readOnly(() => router.query('SELECT $1::int AS x', [k]))`
 *  - ryw-r-off:       readYourWrites false: the reads go to the replicas (and may miss the write)
 *  - ryw-r-position:  { mode: 'position' } (the default, maxWaitMs 0): a replica known to have
 *                     replayed the token, else the primary at once (the replica's replay position
 *                     is then read in the background, one read per replica shared by all sessions)
 *  - ryw-r-position-wait: { mode: 'position', maxWaitMs }: a replica known to have replayed the
 *                     token, else one asked (`pg_last_wal_replay_lsn()` polled every 5 ms /
 *                     `MASTER_GTID_WAIT`, up to maxWaitMs) on the connection that then reads, else the primary
 *  - ryw-r-window:    { mode: 'window', windowMs: 2000 }: every read of the session goes to the
 *                     primary (all of them fall inside the window)
 *  - ryw-r-mix:       readYourWrites false, the session's first half of the reads in a `primary`
 *                     scope, the rest `readOnly`: about the node mix `position` ends up with (its
 *                     first reads after the write on the primary, the later ones on replicas),
 *                     with no read-your-writes work; R1 against R4 is what `position` costs
 *                     beyond moving reads between nodes (not exactly: R4's primary reads run
 *                     on the primary's write pool and skip the read-only guard)
 * Read throughput counts reads only, over the whole loop (the one write per session included).
 */
import { createRouter } from '../../dist/index.js'
import { mysql2Driver } from '../../dist/mysql2/index.js'
import { pgDriver } from '../../dist/pg/index.js'

export const RYW_TABLE_SQL = 'CREATE TABLE IF NOT EXISTS t (id bigserial PRIMARY KEY, v int)'
export const RYW_MYSQL_TABLE_SQL =
  'CREATE TABLE IF NOT EXISTS t (id BIGINT AUTO_INCREMENT PRIMARY KEY, v INT)'
const SQL = {
  pg: { insert: 'INSERT INTO t (v) VALUES ($1)', select: 'SELECT $1::int AS x' },
  mysql: { insert: 'INSERT INTO t (v) VALUES (?)', select: 'SELECT ? AS x' },
}
const IDLE_MS = 60_000
/** `readYourWrites.maxWaitMs` of the position variant. */
export const RYW_MAX_WAIT_MS = 50

export const RYW_VARIANTS = Object.freeze({
  'ryw-w-off': 'W0 pg write in a session, readYourWrites off',
  'ryw-w-position': 'W1 pg write in a session, position (stamp only)',
  'ryw-r-off': 'R0 pg reads after a write in a session, off',
  'ryw-r-position': 'R1 pg reads after a write, position (default: maxWaitMs 0)',
  'ryw-r-position-wait': `R3 pg reads after a write, position (maxWaitMs ${RYW_MAX_WAIT_MS})`,
  'ryw-r-window': 'R2 pg reads after a write, window (-> primary)',
  'ryw-r-mix': 'R4 pg reads after a write, off, first half in primary scope',
})

/** The MariaDB variants (mysql2Driver). */
export const RYW_MYSQL_VARIANTS = Object.freeze({
  'ryw-my-w-off': 'W0 mariadb write in a session, off',
  'ryw-my-w-position': 'W1 mariadb write in a session, position (reply GTID)',
  'ryw-my-r-off': 'R0 mariadb reads after a write, off',
  'ryw-my-r-position': 'R1 mariadb reads after a write, position (default: maxWaitMs 0)',
  'ryw-my-r-position-wait': `R3 mariadb reads after a write, position (maxWaitMs ${RYW_MAX_WAIT_MS})`,
})

/** The variant each is compared with. */
export const RYW_BASE = Object.freeze({
  'ryw-w-off': 'ryw-w-off',
  'ryw-w-position': 'ryw-w-off',
  'ryw-r-off': 'ryw-r-off',
  'ryw-r-position': 'ryw-r-off',
  'ryw-r-position-wait': 'ryw-r-off',
  'ryw-r-window': 'ryw-r-off',
  'ryw-r-mix': 'ryw-r-off',
  'ryw-my-w-off': 'ryw-my-w-off',
  'ryw-my-w-position': 'ryw-my-w-off',
  'ryw-my-r-off': 'ryw-my-r-off',
  'ryw-my-r-position': 'ryw-my-r-off',
  'ryw-my-r-position-wait': 'ryw-my-r-off',
})

/** Acceptance of issue 16: writes in position mode >= 0.95 of off, reads right after a write >= 0.90. */
export const RYW_TARGETS = Object.freeze({ write: 0.95, read: 0.9 })

/**
 * The target of variant `name` (`RYW_TARGETS.write` or `.read`), `undefined` for a variant without
 * one: only the default `position` variants have targets.
 */
export function rywTarget(name) {
  if (!name.endsWith('-position')) return undefined
  return name.includes('-w-') ? RYW_TARGETS.write : RYW_TARGETS.read
}

/** What a run's summary `s` of a variant is held to its target by: the lower of its two throughput ratios. */
export function rywScore(s) {
  return Math.min(s.ratioOfMedians, s.medianPairedRatio)
}

const noop = () => {}

/** A growable list of latencies in ms. */
class Samples {
  constructor() {
    this.a = new Float64Array(1 << 16)
    this.n = 0
  }
  push(v) {
    if (this.n === this.a.length) {
      const b = new Float64Array(this.a.length * 2)
      b.set(this.a)
      this.a = b
    }
    this.a[this.n++] = v
  }
  /** Percentile `p` (0..1), nearest rank. */
  pct(p) {
    if (this.n === 0) return Number.NaN
    const s = this.a.slice(0, this.n).sort()
    return s[Math.min(this.n - 1, Math.max(0, Math.ceil(p * this.n) - 1))]
  }
}

function rywConfig(name) {
  if (name.endsWith('-off') || name.endsWith('-mix')) return false
  if (name.endsWith('-position-wait')) return { mode: 'position', maxWaitMs: RYW_MAX_WAIT_MS }
  if (name.endsWith('-position')) return { mode: 'position' }
  return { mode: 'window', windowMs: 2000 }
}

export async function createRywVariant(name, { primary, replicas, sessions, readsPerSession, max }) {
  const mysql = name.startsWith('ryw-my-')
  const { insert: INSERT, select: SELECT } = mysql ? SQL.mysql : SQL.pg
  const router = createRouter({
    driver: mysql ? mysql2Driver() : pgDriver(),
    primary,
    replicas,
    pool: mysql
      ? { connectionLimit: max, maxIdle: max, idleTimeout: IDLE_MS }
      : { max, idleTimeoutMillis: IDLE_MS },
    readYourWrites: rywConfig(name),
  })
  router.on('error', noop)
  await router.ready()
  const unusable = router.stats().nodes.filter((n) => !n.usable)
  if (unusable.length > 0)
    throw new Error(`router not ready: ${unusable.map((n) => `${n.name}: ${n.unusableReason}`).join(', ')}`)
  const writePath = name.startsWith('ryw-w-') || name.startsWith('ryw-my-w-')
  /** Reads of a session sent to the primary by scope (`ryw-r-mix`): the first half. */
  const onPrimary = name.endsWith('-mix') ? Math.floor(readsPerSession / 2) : 0
  const read = (k) => router.query(SELECT, [k])

  /** `sessions` callers for `seconds`; returns ops/s, latency percentiles, client CPU per op. */
  const round = async (seconds) => {
    let stop = false
    let count = 0
    let errors = 0
    let firstError
    let i = 0
    const lat = new Samples()
    const timer = setTimeout(() => {
      stop = true
    }, seconds * 1000)
    const fail = (err) => {
      errors++
      firstError ??= err
      if (errors > 100) stop = true
    }
    const writer = async () => {
      while (!stop) {
        const t = performance.now()
        try {
          await router.session(() => router.query(INSERT, [i++ & 0x3fffffff]))
          lat.push(performance.now() - t)
          count++
        } catch (err) {
          fail(err)
        }
      }
    }
    const reader = async () => {
      while (!stop) {
        try {
          await router.session(async () => {
            await router.query(INSERT, [i++ & 0x3fffffff])
            for (let k = 0; k < readsPerSession && !stop; k++) {
              const t = performance.now()
              await (k < onPrimary ? router.primary(() => read(k)) : router.readOnly(() => read(k)))
              lat.push(performance.now() - t)
              count++
            }
          })
        } catch (err) {
          fail(err)
        }
      }
    }
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    const callers = []
    for (let c = 0; c < sessions; c++) callers.push(writePath ? writer() : reader())
    await Promise.all(callers)
    const ms = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    clearTimeout(timer)
    if (firstError !== undefined && count === 0) throw firstError
    return {
      count,
      errors,
      firstError: firstError === undefined ? undefined : String(firstError?.message ?? firstError),
      ms,
      qps: (count / ms) * 1000,
      cpuUsPerQuery: (cpu.user + cpu.system) / Math.max(count, 1),
      p50Ms: lat.pct(0.5),
      p99Ms: lat.pct(0.99),
    }
  }
  return {
    name,
    census: false,
    warmup: round,
    round,
    distribution: () => {
      const st = router.stats()
      return {
        ...Object.fromEntries(st.nodes.map((n) => [n.name, n.queries])),
        readYourWritesRedirects: st.clusters.reduce((s, c) => s + c.readYourWritesRedirects, 0),
      }
    },
    close: () => router.close(),
  }
}
