/**
 * How fast a restarted node serves again, on real clusters, with the DEFAULT health options
 * (`intervalMs` 1000): a replica restarted under read load, and the primary restarted under
 * write load. "Accepts connections" is when a raw client of the test first connects and runs
 * `SELECT 1`; "serves" is the first routed read (write) on it after that. The bound is counted in
 * probe rounds — probes of another, healthy node, one per interval — not in wall-clock time: the
 * node must serve again within 2 rounds, although it was down long enough (3 failed probes) for
 * an exponential backoff to have grown to 4 intervals. The measured times are printed.
 */
import mysql from 'mysql2/promise'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRouter, type Router } from '../../src/index.js'
import {
  type DialectCase,
  dialects,
  nodeByPort,
  sleep,
  stateOf,
  type TestCluster,
  waitFor,
} from './support/dialects.js'

/** Whether a raw client of the test can connect to `url` and run `SELECT 1` now. */
async function acceptsConnections(d: DialectCase, url: string): Promise<boolean> {
  if (d.name === 'postgres') {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 300 })
    c.on('error', () => {})
    try {
      await c.connect()
      await c.query('SELECT 1')
      return true
    } catch {
      return false
    } finally {
      await c.end().catch(() => {})
    }
  }
  let c: mysql.Connection | undefined
  try {
    c = await mysql.createConnection({ uri: url, connectTimeout: 300 })
    c.on('error', () => {})
    await c.query('SELECT 1')
    return true
  } catch {
    return false
  } finally {
    c?.destroy()
  }
}

/** A moment, with the probe count of the node used as the clock. */
interface Mark {
  at: number
  rounds: number
}

/** Probes of `node` finished so far. */
function probesOf(router: Router, node: string): number {
  return router.stats().nodes.find((n) => n.name === node)?.probes ?? 0
}

/**
 * Restarts `name` while polling it with a raw client every 10 ms; resolves to the moment it first
 * accepted connections (the clock read from `clockNode`'s probes).
 */
async function restartAndMarkAccept(
  d: DialectCase,
  cluster: TestCluster,
  router: Router,
  name: string,
  url: string,
  clockNode: string,
): Promise<Mark> {
  let accepted: Mark | undefined
  const restarted = cluster.restart(name)
  const deadline = Date.now() + 60_000
  while (accepted === undefined && Date.now() < deadline) {
    if (await acceptsConnections(d, url)) accepted = { at: Date.now(), rounds: probesOf(router, clockNode) }
    else await sleep(10)
  }
  await restarted
  if (accepted === undefined) throw new Error(`${name} never accepted connections`)
  return accepted
}

describe.each(dialects)('re-admission with default health options ($name)', (d: DialectCase) => {
  let cluster: TestCluster
  let who: (port: unknown) => string

  beforeAll(async () => {
    cluster = await d.start(2)
    who = nodeByPort(cluster)
    for (const sql of d.setup('readmit')) await onPrimary(sql)
  })

  afterAll(async () => {
    await cluster?.stop()
  })

  /** Runs one statement on the primary through a short-lived router. */
  async function onPrimary(sql: string): Promise<void> {
    const r = createRouter({ driver: d.driver(), primary: cluster.primary.url, healthCheck: false })
    try {
      await r.query(sql)
    } finally {
      await r.close()
    }
  }

  /** A router over the cluster with every health option at its default. */
  function defaultRouter(): Router {
    return createRouter({
      driver: d.driver(),
      primary: { name: 'primary', url: cluster.primary.url },
      replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
    })
  }

  it('a replica restarted under 16 readers serves again within 2 probe rounds of accepting connections', async () => {
    const router = defaultRouter()
    let running = true
    let restarting = false
    let back: Mark | undefined
    let reads = 0
    const loops = Array.from({ length: 16 }, async () => {
      while (running) {
        try {
          const { rows } = await router.readOnly(() => router.query<{ port: number }>(d.whoAmI))
          reads++
          if (restarting && back === undefined && who(rows[0]?.port) === 'replica1')
            back = { at: Date.now(), rounds: probesOf(router, 'primary') }
        } catch {
          await new Promise(setImmediate) // failures here are the failover suite's business
        }
      }
    })
    try {
      await router.ready()
      await sleep(500)
      await cluster.kill('replica1')
      await waitFor(() => stateOf(router, 'replica1') === 'down', 10_000, 'replica1 down')
      // Down long enough for a backoff to grow: 3 failed probes (an exponential backoff would
      // now wait 4 intervals before the next one).
      const p0 = probesOf(router, 'replica1')
      await waitFor(() => probesOf(router, 'replica1') >= p0 + 3, 20_000, '3 failed probes of replica1')
      restarting = true
      const accepted = await restartAndMarkAccept(
        d,
        cluster,
        router,
        'replica1',
        cluster.replicas[0]!.url,
        'primary',
      )
      await waitFor(() => back !== undefined, 30_000, 'a read served by replica1 again')
      const served = back as Mark
      console.log(
        `[${d.name}] replica restarted under 16 readers (default health options): serves ` +
          `${served.at - accepted.at} ms after accepting connections, ${served.rounds - accepted.rounds} probe round(s) ` +
          `(${reads} reads)`,
      )
      expect(served.rounds - accepted.rounds).toBeLessThanOrEqual(2)
    } finally {
      running = false
      await Promise.all(loops)
      await router.close()
    }
    await cluster.waitForReplication()
  })

  it('the primary restarted under 4 writers takes writes again within 2 probe rounds of accepting connections', async () => {
    const router = defaultRouter()
    let running = true
    let restarting = false
    let back: Mark | undefined
    let writes = 0
    const insert = `INSERT INTO readmit (v) VALUES (${d.param(1)})`
    const loops = Array.from({ length: 4 }, async () => {
      while (running) {
        try {
          await router.query(insert, ['w'])
          writes++
          if (restarting && back === undefined)
            back = { at: Date.now(), rounds: probesOf(router, 'replica1') }
        } catch {
          await sleep(5) // a write refused without I/O must not spin
        }
      }
    })
    try {
      await router.ready()
      await sleep(500)
      await cluster.kill('primary')
      await waitFor(() => stateOf(router, 'primary') === 'down', 10_000, 'primary down')
      const p0 = probesOf(router, 'primary')
      await waitFor(() => probesOf(router, 'primary') >= p0 + 3, 20_000, '3 failed probes of the primary')
      restarting = true
      const accepted = await restartAndMarkAccept(
        d,
        cluster,
        router,
        'primary',
        cluster.primary.url,
        'replica1',
      )
      await waitFor(() => back !== undefined, 30_000, 'a write on the primary again')
      const served = back as Mark
      console.log(
        `[${d.name}] primary restarted under 4 writers (default health options): takes writes ` +
          `${served.at - accepted.at} ms after accepting connections, ${served.rounds - accepted.rounds} probe round(s) ` +
          `(${writes} writes)`,
      )
      expect(served.rounds - accepted.rounds).toBeLessThanOrEqual(2)
    } finally {
      running = false
      await Promise.all(loops)
      await router.close()
    }
    await cluster.waitForReplication()
  })
})
