/**
 * No leak: a process that used a router exits by itself, without `process.exit()`. Each case runs
 * the built package (`dist/`) in a child `node`; after its last line the child arms an unref()'d
 * timer that prints "outlived" if anything still keeps the process alive when it fires -- an
 * ordering of the child's own timers (a leaked pool's idle timer fires later than it), not a
 * duration measured from outside. Also: `close()` drains in-flight queries, and aborts them after
 * `timeoutMs`.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PgCluster, startPgCluster } from '../../src/testing/index.js'
import { ensureBuilt, REPO_ROOT } from '../support/ensure-built.js'

/** A child that keeps running longer than this is killed (and the test fails). */
const HARD_KILL_MS = 45_000
/**
 * The child's "outlived" timer, armed after its last line. Well below pg's default
 * `idleTimeoutMillis` (10 s), and the routers below use 30 s, so a leaked pool's idle timer fires
 * after it: a leak cannot pass for a clean exit. A process with nothing left to do exits without
 * waiting for an unref()'d timer, however slow the machine.
 */
const OUTLIVE_MS = 3_000
/** Health checks as in the brief: on, every 200 ms. */
const HEALTH = '{ intervalMs: 200, timeoutMs: 150 }'

const distUrl = (file: string): string =>
  JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'dist', file)).href)

/** Prelude of every child script: the built entry points and a `say(event, data)` JSON-line printer. */
const PRELUDE = `
import { createRouter, RouterClosedError } from ${distUrl('index.js')}
import { pgDriver } from ${distUrl('pg/index.js')}
import { startPgCluster } from ${distUrl('testing/index.js')}
// A hung child is SIGTERMed by the test: exit through the 'exit' hook so that a test cluster it
// started is SIGKILLed too. (A signal listener does not keep the event loop alive.)
process.on('SIGTERM', () => process.exit(143))
const say = (event, data = {}) => console.log(JSON.stringify({ event, ...data }))
// The last line of a case: prints it, then "outlived" only if the process is still alive \`ms\` later.
const last = (event, data = {}, ms = ${OUTLIVE_MS}) => {
  say(event, data)
  setTimeout(() => say('outlived', { after: event, ms }), ms).unref()
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const urls = () => ({ primary: process.env.RM_PRIMARY_URL, replica: process.env.RM_REPLICA_URL })
async function someQueries(router) {
  await router.query('CREATE TABLE IF NOT EXISTS exit_probe (id serial PRIMARY KEY, v text)')
  await router.query('INSERT INTO exit_probe (v) VALUES ($1)', ['write'])
  // (not the new table: a replica may not have replayed its CREATE yet)
  await router.readOnly(() => router.query('SELECT count(*) AS n FROM pg_class'))
  await router.transaction(async (tx) => {
    await tx.query('INSERT INTO exit_probe (v) VALUES ($1)', ['tx'])
    await tx.query('SELECT count(*) AS n FROM exit_probe')
  })
}
`

interface ChildEvent {
  /** performance.now() in this process when the line arrived. */
  readonly at: number
  readonly data: Record<string, unknown>
}

interface ChildRun {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** Whether the test had to kill it. */
  readonly killed: boolean
  /** performance.now() when it exited. */
  readonly exitedAt: number
  readonly events: ReadonlyMap<string, ChildEvent>
  readonly stdout: string
  readonly stderr: string
}

let tmpDir: string
let cluster: PgCluster
const running = new Set<ChildProcess>()

/** Runs `body` (after {@link PRELUDE}) as an ESM script in a child `node`, until it exits. */
function runChild(name: string, body: string): Promise<ChildRun> {
  const file = path.join(tmpDir, `${name}.mjs`)
  fs.writeFileSync(file, `${PRELUDE}\n${body}\n`)
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    RM_PRIMARY_URL: cluster.primary.url,
    RM_REPLICA_URL: cluster.replicas[0]?.url,
  }
  delete env.NODE_OPTIONS
  const child = spawn(process.execPath, [file], { cwd: tmpDir, env, stdio: ['ignore', 'pipe', 'pipe'] })
  running.add(child)
  const events = new Map<string, ChildEvent>()
  let stdout = ''
  let stderr = ''
  let partial = ''
  let killed = false
  let exitedAt = Number.NaN
  child.stdout.setEncoding('utf8')
  child.stderr.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => {
    const at = performance.now()
    stdout += chunk
    const lines = (partial + chunk).split('\n')
    partial = lines.pop() ?? ''
    for (const line of lines) {
      try {
        const data = JSON.parse(line) as Record<string, unknown>
        if (typeof data.event === 'string') events.set(data.event, { at, data })
      } catch {
        // not one of our lines
      }
    }
  })
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk
  })
  const term = setTimeout(() => {
    killed = true
    child.kill('SIGTERM')
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref()
  }, HARD_KILL_MS)
  child.on('exit', () => {
    exitedAt = performance.now()
    clearTimeout(term)
  })
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => {
      running.delete(child)
      resolve({ code, signal, killed, exitedAt, events, stdout, stderr })
    })
  })
}

/** The event `name` of a run; fails with the child's output when it never printed it. */
function eventOf(run: ChildRun, name: string): ChildEvent {
  const e = run.events.get(name)
  if (e === undefined)
    throw new Error(
      `child never printed "${name}" (exit ${run.code}/${run.signal})\n${run.stdout}\n${run.stderr}`,
    )
  return e
}

/**
 * Asserts a clean exit, by itself, after event `after` (printed with `last()`), before the child's
 * own "outlived" timer fired; returns how long it lived after that line (ms, for lower bounds).
 */
function expectExitedBySelf(run: ChildRun, after: string): number {
  const ms = run.exitedAt - eventOf(run, after).at
  const detail = `exit ${run.code}/${run.signal} ${Math.round(ms)} ms after "${after}"\n${run.stderr}`
  expect(run.killed, `killed after ${HARD_KILL_MS} ms: ${detail}`).toBe(false)
  expect(run.code, detail).toBe(0)
  expect(run.events.get('outlived')?.data, `still alive when its timer fired: ${detail}`).toBeUndefined()
  return ms
}

beforeAll(async () => {
  ensureBuilt()
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'routemate-exit-'))
  cluster = await startPgCluster({ replicas: 1 })
}, 180_000)

afterAll(async () => {
  for (const child of running) child.kill('SIGKILL')
  await cluster?.stop()
  if (tmpDir !== undefined) fs.rmSync(tmpDir, { recursive: true, force: true })
}, 60_000)

describe('process exit', () => {
  it('exits by itself after router.close() and cluster.stop(), no process.exit()', async () => {
    const run = await runChild(
      'close-and-stop',
      `
const cluster = await startPgCluster({ replicas: 1 })
const router = createRouter({
  driver: pgDriver(),
  primary: cluster.primary.url,
  replicas: [cluster.replicas[0].url],
  healthCheck: ${HEALTH},
  pool: { idleTimeoutMillis: 30_000 }, // a leaked pool would hold the process 30 s, not 10
})
await router.ready()
await someQueries(router)
say('queried', { states: router.stats().nodes.map((n) => n.state) })
await router.close()
await cluster.stop()
last('closed')
`,
    )
    expect(eventOf(run, 'queried').data.states).toEqual(['up', 'up'])
    expectExitedBySelf(run, 'closed')
  }, 120_000)

  it('exits by itself without close() when the router ran no query (health-check timers are unref()d)', async () => {
    const run = await runChild(
      'no-close-no-query',
      `
const { primary, replica } = urls()
const router = createRouter({ driver: pgDriver(), primary, replicas: [replica], healthCheck: ${HEALTH} })
await router.ready()
await sleep(600) // a few probe rounds
last('idle', { states: router.stats().nodes.map((n) => n.state) })
`,
    )
    expect(eventOf(run, 'idle').data.states).toEqual(['up', 'up'])
    expectExitedBySelf(run, 'idle')
  }, 60_000)

  it("without close() after queries, lives until pg's idle pooled connections time out, then exits", async () => {
    // pg.Pool keeps idle connections (ref'd sockets) for idleTimeoutMillis (10 s by default):
    // only close() -- or pool: { allowExitOnIdle: true } -- lets the process exit at once.
    const idleMs = 1_000
    const run = await runChild(
      'no-close-after-queries',
      `
const { primary, replica } = urls()
const router = createRouter({
  driver: pgDriver(),
  primary,
  replicas: [replica],
  healthCheck: ${HEALTH},
  pool: { idleTimeoutMillis: ${idleMs} },
})
await router.ready()
await someQueries(router)
last('queried', {}, ${5 * idleMs}) // before pg's default 10 s: the configured 1 s applies
`,
    )
    const ms = expectExitedBySelf(run, 'queried')
    expect(ms).toBeGreaterThan(idleMs / 2) // a lower bound: it did wait for the idle connections
  }, 60_000)

  it('close() lets 16 in-flight queries finish, rejects new ones, and the process exits by itself', async () => {
    const run = await runChild(
      'close-drains',
      `
const { primary, replica } = urls()
const router = createRouter({ driver: pgDriver(), primary, replicas: [replica], healthCheck: ${HEALTH} })
await router.ready()
const t0 = performance.now()
let lastSettled = 0
const queries = Array.from({ length: 16 }, (_, i) => {
  const run = () => router.query('SELECT pg_sleep(0.3) AS slept')
  const p = i % 2 === 0 ? run() : router.readOnly(run)
  return p.finally(() => { lastSettled = Math.max(lastSettled, performance.now() - t0) })
})
const inFlight = router.stats().nodes.reduce((s, n) => s + n.inFlight, 0)
const closing = router.close()
const late = await router.query('SELECT 1').then(() => 'resolved', (e) => e instanceof RouterClosedError ? 'RouterClosedError' : String(e))
await closing
const closeMs = performance.now() - t0
const results = await Promise.allSettled(queries)
say('drained', {
  inFlight,
  late,
  closeMs,
  lastSettled,
  fulfilled: results.filter((r) => r.status === 'fulfilled').length,
  errors: results.filter((r) => r.status === 'rejected').map((r) => String(r.reason)),
  nodes: router.stats().nodes.map((n) => ({ name: n.name, queries: n.queries, inFlight: n.inFlight })),
})
last('closed')
`,
    )
    const d = eventOf(run, 'drained').data as {
      inFlight: number
      late: string
      closeMs: number
      lastSettled: number
      fulfilled: number
      errors: string[]
      nodes: Array<{ name: string; queries: number; inFlight: number }>
    }
    expect(d.inFlight).toBe(16)
    expect(d.late).toBe('RouterClosedError')
    expect(d.errors).toEqual([])
    expect(d.fulfilled).toBe(16)
    // close() resolved only after the last query settled (an ordering), and they took their 300 ms.
    expect(d.closeMs).toBeGreaterThanOrEqual(d.lastSettled)
    expect(d.closeMs).toBeGreaterThanOrEqual(250)
    // 8 on the primary, 8 on the replica (the probes are not counted as queries)
    expect(d.nodes.map((n) => [n.queries, n.inFlight])).toEqual([
      [8, 0],
      [8, 0],
    ])
    expectExitedBySelf(run, 'closed')
  }, 60_000)

  it('close({ timeoutMs: 100 }) aborts queries still running (pg_sleep(5) never completes); the process exits', async () => {
    const run = await runChild(
      'close-aborts',
      `
const { primary, replica } = urls()
const router = createRouter({ driver: pgDriver(), primary, replicas: [replica], healthCheck: ${HEALTH} })
const retries = []
router.on('retry', (e) => retries.push(e))
await router.ready()
const t0 = performance.now()
const settled = (p) => p.then(() => 'resolved', (e) => ({ name: e?.name, message: String(e?.message ?? e) }))
const onPrimary = settled(router.query('SELECT pg_sleep(5)'))
const onReplica = settled(router.readOnly(() => router.query('SELECT pg_sleep(5)')))
await sleep(50) // both are running on the servers
await router.close({ timeoutMs: 100 })
const closeMs = performance.now() - t0
const outcomes = await Promise.all([onPrimary, onReplica])
say('aborted', { closeMs, settledMs: performance.now() - t0, outcomes, retries })
last('closed')
`,
    )
    const a = eventOf(run, 'aborted').data as {
      closeMs: number
      settledMs: number
      outcomes: Array<string | { name: string; message: string }>
      retries: unknown[]
    }
    // An aborted read must not be retried elsewhere once the router is closed (it would open a
    // pool that close() never ends, and keep the process alive).
    expect(a.retries, 'read retried after close()').toEqual([])
    expect(a.closeMs).toBeGreaterThanOrEqual(100) // it waited its timeoutMs first
    // Aborted, not waited for: a pg_sleep(5) that ran to its end would have resolved.
    for (const o of a.outcomes) expect(o, JSON.stringify(a.outcomes)).not.toBe('resolved')
    expect(a.settledMs).toBeGreaterThanOrEqual(a.closeMs)
    expectExitedBySelf(run, 'closed')
  }, 60_000)
})
