import { afterEach, describe, expect, it, vi } from 'vitest'
import { Cluster } from '../router/cluster.js'
import { resolveConfig } from '../router/config.js'
import type { Driver, DriverPool, ProbeResult } from '../router/driver.js'
import { RouterEmitter } from '../router/events.js'
import { HealthMonitor } from './health-monitor.js'

function record(probes: Record<string, number[]>, name: string): void {
  const list = probes[name] ?? []
  list.push(Date.now())
  probes[name] = list
}

/** A fake driver whose probes succeed or fail as the test says; records probe times per node. */
function fakeDriver(up: Record<string, boolean>, probes: Record<string, number[]>): Driver {
  const pool: DriverPool = {
    acquire: async () => ({}),
    release: () => {},
    destroy: () => {},
    end: async () => {},
    counts: () => ({ total: 0, idle: 0, waiting: 0 }),
  }
  return {
    dialect: 'postgres',
    name: 'fake',
    createPool: () => pool,
    execute: async () => ({ rows: [], rowCount: 0 }),
    probe: async (node): Promise<ProbeResult> => {
      record(probes, node.name)
      if (!up[node.name]) throw new Error('connect ECONNREFUSED')
      return { role: node.name === 'primary' ? 'primary' : 'replica', position: '0/1' }
    },
    positionReached: () => true,
    positionAfterWrite: async () => '0/1',
    waitForPosition: async () => '0/1',
    beginSql: () => 'BEGIN',
    savepointSql: (n) => `SAVEPOINT ${n}`,
    classify: () => 'connection',
  }
}

function setup(up: Record<string, boolean>, healthCheck: Record<string, number> | false) {
  const probes: Record<string, number[]> = {}
  const config = resolveConfig({
    driver: fakeDriver(up, probes),
    primary: 'postgres://db1/app',
    replicas: [{ name: 'r1', url: 'postgres://db2/app' }],
    healthCheck,
  })
  const events = new RouterEmitter()
  const seen: string[] = []
  for (const name of ['node:down', 'node:up', 'node:suspect'] as const) {
    events.on(name, (e) => seen.push(`${name} ${e.node}`))
  }
  const cluster = new Cluster(config.clusters[0]!, config.driver, config.healthCheck, events)
  const monitor = new HealthMonitor([cluster], config, events)
  return { probes, monitor, cluster, seen, driver: config.driver, events }
}

describe('HealthMonitor (fake driver, fake timers)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('re-probes a down node whose probes fail fast every interval, like an up node: no backoff', async () => {
    vi.useFakeTimers({ now: 0 })
    const up = { primary: true, r1: false }
    const { probes, monitor, seen } = setup(up, {
      intervalMs: 100,
      timeoutMs: 50,
      failureThreshold: 2,
      maxBackoffMs: 800,
    })
    await monitor.start()
    await vi.advanceTimersByTimeAsync(5000)
    monitor.stop()
    const gaps = (probes.r1 ?? []).slice(1).map((t, i) => t - (probes.r1 as number[])[i]!)
    expect(gaps.length).toBeGreaterThanOrEqual(45)
    expect(new Set(gaps)).toEqual(new Set([100])) // refused at once: probing it costs nothing
    const primaryGaps = (probes.primary ?? []).slice(1).map((t, i) => t - (probes.primary as number[])[i]!)
    expect(new Set(primaryGaps)).toEqual(new Set([100]))
    expect(seen).toEqual(['node:suspect r1', 'node:down r1'])
  })

  it('re-probes a down node whose probes hang with capped exponential backoff', async () => {
    vi.useFakeTimers({ now: 0 })
    const up = { primary: true, r1: true }
    const { probes, monitor, seen, driver } = setup(up, {
      intervalMs: 100,
      timeoutMs: 50,
      failureThreshold: 2,
      maxBackoffMs: 800,
    })
    const probe = driver.probe.bind(driver)
    driver.probe = (node, signal) => {
      if (node.name !== 'r1') return probe(node, signal)
      record(probes, node.name)
      return new Promise(() => {}) // a frozen server: the deadline fails it
    }
    void monitor.start()
    await vi.advanceTimersByTimeAsync(5000)
    monitor.stop()
    const gaps = (probes.r1 ?? []).slice(1).map((t, i) => t - (probes.r1 as number[])[i]!)
    // suspect after the 1st timeout (next probe one interval later), down after the 2nd, then the
    // gap doubles: 200, 400, 800, capped at maxBackoffMs
    expect(gaps.slice(0, 5)).toEqual([100, 200, 400, 800, 800])
    expect(new Set(gaps.slice(5))).toEqual(new Set([800]))
    expect(seen).toEqual(['node:suspect r1', 'node:down r1'])
  })

  it('a probe that fails only after most of its deadline counts as hung; one that fails early does not', async () => {
    vi.useFakeTimers({ now: 0 })
    const up = { primary: true, r1: true }
    const { probes, monitor, driver, cluster } = setup(up, {
      intervalMs: 100,
      timeoutMs: 80,
      failureThreshold: 1,
      maxBackoffMs: 1600,
    })
    let failAfterMs = 70 // of an 80 ms deadline: hung
    const probe = driver.probe.bind(driver)
    driver.probe = (node, signal) => {
      if (node.name !== 'r1') return probe(node, signal)
      record(probes, node.name)
      return new Promise((_, reject) =>
        setTimeout(() => reject(new Error('Connection terminated due to connection timeout')), failAfterMs),
      )
    }
    void monitor.start()
    await vi.advanceTimersByTimeAsync(1600)
    const r1 = cluster.replicas[0]!
    expect(r1.state).toBe('down')
    expect(r1.hungProbes).toBeGreaterThanOrEqual(3)
    const slow = (probes.r1 ?? []).slice(1).map((t, i) => t - (probes.r1 as number[])[i]!)
    expect(slow.slice(0, 3)).toEqual([100, 200, 400])
    failAfterMs = 5 // now it fails early (refused): back to one probe per interval
    await vi.advanceTimersByTimeAsync(2000) // the backed-off probe comes, fails fast
    const from = (probes.r1 ?? []).length
    await vi.advanceTimersByTimeAsync(1000)
    monitor.stop()
    const times = (probes.r1 ?? []).slice(from - 1)
    const fast = times.slice(1).map((t, i) => t - times[i]!)
    expect(fast.length).toBeGreaterThanOrEqual(9)
    expect(new Set(fast)).toEqual(new Set([100]))
    expect(r1.hungProbes).toBe(0)
  })

  it('needs successThreshold consecutive successes to re-admit, one event per change', async () => {
    vi.useFakeTimers({ now: 0 })
    const up = { primary: true, r1: false }
    const { monitor, cluster, seen } = setup(up, {
      intervalMs: 100,
      timeoutMs: 50,
      failureThreshold: 1,
      successThreshold: 3,
      maxBackoffMs: 100,
    })
    await monitor.start()
    await vi.advanceTimersByTimeAsync(1000)
    expect(cluster.candidates).toEqual([])
    up.r1 = true
    await vi.advanceTimersByTimeAsync(250) // two successful probes: not yet
    expect(cluster.candidates).toEqual([])
    await vi.advanceTimersByTimeAsync(100) // the third
    expect(cluster.candidates.map((n) => n.name)).toEqual(['r1'])
    monitor.stop()
    expect(seen).toEqual(['node:down r1', 'node:up r1'])
  })

  it('a probe that never settles fails at the deadline and the loop goes on', async () => {
    vi.useFakeTimers({ now: 0 })
    const probes: Record<string, number[]> = {}
    const driver = fakeDriver({ primary: true, r1: true }, probes)
    driver.probe = (node) => {
      record(probes, node.name)
      return new Promise(() => {}) // a frozen server
    }
    const config = resolveConfig({
      driver,
      primary: 'postgres://db1/app',
      replicas: ['postgres://db2/app'],
      healthCheck: { intervalMs: 100, timeoutMs: 30, failureThreshold: 2, maxBackoffMs: 100 },
    })
    const events = new RouterEmitter()
    const cluster = new Cluster(config.clusters[0]!, config.driver, config.healthCheck, events)
    const monitor = new HealthMonitor([cluster], config, events)
    void monitor.start()
    await vi.advanceTimersByTimeAsync(1000)
    monitor.stop()
    expect(cluster.primary?.state).toBe('down')
    expect((probes.primary ?? []).length).toBeGreaterThanOrEqual(8)
  })

  it('an event-loop stall of this process is no probe timeout: a reply that arrived during the stall counts, a frozen node still fails', async () => {
    // Real timers: the stall is a synchronous busy loop longer than the deadline, during which the
    // node "replies" (the reply is delivered after the timers phase, like a socket read).
    const busy = (ms: number): void => {
      const end = Date.now() + ms
      while (Date.now() < end) {
        // a synchronous burst of work (CPU starvation, a long GC)
      }
    }
    const probes: Record<string, number[]> = {}
    const driver = fakeDriver({ primary: true, r1: true }, probes)
    let frozen = false
    driver.probe = (node) => {
      record(probes, node.name)
      if (frozen) return new Promise(() => {})
      return new Promise((resolve) => {
        setTimeout(
          () => setImmediate(() => resolve({ role: node.name === 'primary' ? 'primary' : 'replica' })),
          5,
        )
      })
    }
    const config = resolveConfig({
      driver,
      primary: 'postgres://db1/app',
      replicas: [{ name: 'r1', url: 'postgres://db2/app' }],
      healthCheck: { intervalMs: 10_000, timeoutMs: 40, failureThreshold: 1 },
    })
    const events = new RouterEmitter()
    const cluster = new Cluster(config.clusters[0]!, config.driver, config.healthCheck, events)
    const monitor = new HealthMonitor([cluster], config, events)
    const r1 = cluster.nodes.find((n) => n.name === 'r1')!
    try {
      const answered = monitor.probeNode(cluster, r1)
      busy(150) // both the reply (due at 5 ms) and the deadline (due at 40 ms) are overdue now
      expect(await answered).toBe(true)
      expect(r1.state).not.toBe('down')
      frozen = true
      const hung = monitor.probeNode(cluster, r1)
      busy(150)
      expect(await hung).toBe(false) // one more deadline, then it fails: a stall never hides a hang
      expect(r1.state).toBe('down')
    } finally {
      monitor.stop()
    }
  })

  it('with healthCheck: false, probes no healthy node, yet brings back a node marked down by real queries', async () => {
    vi.useFakeTimers({ now: 0 })
    const up = { primary: true, r1: true }
    const { probes, monitor, cluster, seen } = setup(up, false)
    await monitor.start()
    await vi.advanceTimersByTimeAsync(3000)
    expect(probes).toEqual({})
    const r1 = cluster.replicas[0]!
    monitor.recordFailure(cluster, r1, new Error('read ECONNRESET'), 'query')
    monitor.recordFailure(cluster, r1, new Error('read ECONNRESET'), 'query')
    expect(r1.state).toBe('down')
    expect(cluster.candidates).toEqual([])
    await vi.advanceTimersByTimeAsync(1500)
    monitor.stop()
    expect(Object.keys(probes)).toEqual(['r1'])
    expect(r1.state).toBe('up')
    expect(cluster.candidates).toEqual([r1])
    expect(seen).toEqual(['node:suspect r1', 'node:down r1', 'node:up r1'])
  })

  it('a replica added at runtime is no candidate until a probe of it succeeds', async () => {
    const up: Record<string, boolean> = { primary: true, r1: true, r2: false }
    const { monitor, cluster } = setup(up, { intervalMs: 100, timeoutMs: 50 })
    await monitor.start()
    const other = resolveConfig({
      driver: fakeDriver(up, {}),
      primary: 'postgres://db1/app',
      replicas: [{ name: 'r2', url: 'postgres://db3/app' }],
    })
    const r2 = cluster.addReplica(other.clusters[0]!.replicas[0]!)
    expect(cluster.candidates).not.toContain(r2)
    expect(cluster.unusableReason(r2)).toBe('not-probed-yet')
    await monitor.probeNode(cluster, r2)
    expect(cluster.candidates).not.toContain(r2) // the probe failed: still not used
    expect(cluster.unusableReason(r2)).toBe('not-probed-yet')
    up.r2 = true
    await monitor.probeNode(cluster, r2)
    monitor.stop()
    expect(cluster.candidates).toContain(r2)
    expect(cluster.unusableReason(r2)).toBeUndefined()
  })

  it('at startup, a replica is no candidate before its first successful probe, and no fallback is announced while first probes run', async () => {
    vi.useFakeTimers({ now: 0 })
    const up = { primary: true, r1: true }
    const { monitor, cluster, driver, events } = setup(up, { intervalMs: 100, timeoutMs: 50 })
    const fallbacks: string[] = []
    events.on('fallback', () => fallbacks.push('fallback'))
    events.on('fallback:end', () => fallbacks.push('fallback:end'))
    const probe = driver.probe.bind(driver)
    driver.probe = (node, signal) =>
      new Promise((resolve, reject) => setTimeout(() => probe(node, signal).then(resolve, reject), 40))
    const r1 = cluster.replicas[0]!
    expect(cluster.candidates).toEqual([])
    expect(cluster.unusableReason(r1)).toBe('not-probed-yet')
    expect(cluster.primary?.available).toBe(true) // writes are still attempted before the first probe
    const ready = monitor.start()
    await vi.advanceTimersByTimeAsync(30)
    expect(cluster.candidates).toEqual([])
    await vi.advanceTimersByTimeAsync(15)
    await ready
    expect(cluster.candidates).toEqual([r1])
    expect(r1.probes).toBe(1)
    expect(cluster.fallingBack).toBe(false)
    monitor.stop()
    expect(fallbacks).toEqual([])
  })

  it('at startup, a replica whose first probe fails gets no reads; the fallback is announced once its first probe is done', async () => {
    vi.useFakeTimers({ now: 0 })
    const up = { primary: true, r1: false }
    const { monitor, cluster, events } = setup(up, { intervalMs: 100, timeoutMs: 50 })
    const fallbacks: unknown[] = []
    events.on('fallback', (e) => fallbacks.push(e))
    events.on('fallback:end', (e) => fallbacks.push(e))
    await monitor.start()
    const r1 = cluster.replicas[0]!
    expect(cluster.candidates).toEqual([])
    expect(r1.state).toBe('suspect')
    expect(cluster.unusableReason(r1)).toBe('not-probed-yet')
    expect(fallbacks).toEqual([{ cluster: 'default', toPrimary: true, replicas: { r1: 'not-probed-yet' } }])
    up.r1 = true
    await vi.advanceTimersByTimeAsync(100)
    monitor.stop()
    expect(cluster.candidates).toEqual([r1])
    expect(fallbacks.slice(1)).toEqual([{ cluster: 'default' }])
  })

  it('with healthCheck: false, configured replicas are candidates at once (nothing probes them)', async () => {
    vi.useFakeTimers({ now: 0 })
    const { monitor, cluster, probes } = setup({ primary: true, r1: true }, false)
    expect(cluster.candidates).toEqual([cluster.replicas[0]])
    await monitor.start()
    await vi.advanceTimersByTimeAsync(1000)
    monitor.stop()
    expect(probes).toEqual({})
  })

  it('onProbe listeners hear every finished probe, and stop()', async () => {
    vi.useFakeTimers({ now: 0 })
    const { monitor } = setup({ primary: true, r1: false }, { intervalMs: 100, timeoutMs: 50 })
    let heard = 0
    const off = monitor.onProbe(() => heard++)
    await monitor.start()
    expect(heard).toBe(2)
    await vi.advanceTimersByTimeAsync(100)
    expect(heard).toBe(4)
    off()
    await vi.advanceTimersByTimeAsync(100)
    expect(heard).toBe(4)
    const again = monitor.onProbe(() => heard++)
    monitor.stop()
    again()
    expect(heard).toBe(5)
  })
})
