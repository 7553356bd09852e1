import type { DriverProber, ProbeResult } from '../driver/probe-contract.js'
import { redactSecrets, redactUrl } from '../util/redact.js'
import type {
  HealthEvents,
  HealthSettings,
  MonitoredCluster,
  MonitoredNode,
  ProbeDriver,
} from './monitored-node.js'
import type { NodeState } from './node-health.js'

/** What the health monitor is configured with (the router's resolved config satisfies it). */
export interface MonitorConfig {
  readonly healthCheck: HealthSettings
  readonly driver: ProbeDriver
  /** Values redacted from error messages (passwords). */
  readonly secrets: readonly string[]
}

type Cluster = MonitoredCluster
type RouterNode = MonitoredNode

/** Probe failure raised when the hard deadline passes. */
class ProbeTimeoutError extends Error {
  constructor(ms: number) {
    super(`probe timed out after ${ms} ms`)
    this.name = 'ProbeTimeoutError'
  }
}

/**
 * A failed probe that took at least this share of the deadline hung (a frozen server, a dead
 * network path) rather than failed fast (refused, reset, credentials rejected at once).
 */
const HUNG_SHARE = 0.75

/**
 * A probe deadline timer that fires this share of the deadline (or more) after it was due shows
 * an event-loop stall of this process, not a slow node: the probe gets one more deadline.
 */
const STALL_SHARE = 0.5

/**
 * Probes every node on a timer and applies outcomes — of probes and of real queries — to the nodes'
 * state machines, emitting one event per state change, aborting the work of nodes marked down and
 * rebuilding the clusters' candidate lists. Probes run in parallel, each under one hard deadline
 * that covers connecting; a throwing probe never stops the loop. A down node whose probes fail
 * fast (refused, reset, rejected credentials) is re-probed every interval, so it is back within
 * one interval of accepting connections; only one whose probes hang is re-probed with capped
 * exponential backoff. The timer is `unref()`'d.
 */
export class HealthMonitor {
  readonly #clusters: readonly Cluster[]
  readonly #config: MonitorConfig
  readonly #driver: ProbeDriver
  readonly #events: HealthEvents
  readonly #probes = new Set<AbortController>()
  /** Called after every finished probe (and by `stop()`). */
  readonly #probeListeners = new Set<() => void>()
  #timer: NodeJS.Timeout | undefined
  #closed = false
  #ready: Promise<void> | undefined

  constructor(clusters: readonly Cluster[], config: MonitorConfig, events: HealthEvents) {
    this.#clusters = clusters
    this.#config = config
    this.#driver = config.driver
    this.#events = events
    for (const cluster of clusters) for (const node of cluster.nodes) this.#listenToTimeouts(cluster, node)
  }

  /**
   * Probes a node soon — now, unless a probe of it is already running — because one of its
   * statements passed `queryTimeoutMs`. A timeout is evidence about the statement, not the node,
   * so it changes nothing by itself; a node that is really frozen fails this probe (and is marked
   * down after `failureThreshold` failed ones) instead of waiting for its next turn. Runs with
   * health checks off too. Never rejects.
   */
  probeSoon(cluster: Cluster, node: RouterNode): void {
    if (this.#closed || node.probing || node.drained) return
    void this.probeNode(cluster, node)
  }

  /** Makes a node's statement timeouts call {@link probeSoon} (nodes added later: at the next round). */
  #listenToTimeouts(cluster: Cluster, node: RouterNode): void {
    if (node.timeoutListener === undefined) node.onStatementTimeout(() => this.probeSoon(cluster, node))
  }

  /**
   * Starts probing: one round now, then every `intervalMs`. Resolves when the first round is done.
   * With health checks off, only nodes that need it are probed: those marked down by passive
   * detection (so they come back) and added ones not probed yet; `ready()` resolves at once.
   */
  start(): Promise<void> {
    if (this.#ready !== undefined) return this.#ready
    const hc = this.#config.healthCheck
    this.#ready = hc.enabled ? this.#round() : Promise.resolve()
    this.#timer = setInterval(() => {
      void this.#round()
    }, hc.intervalMs)
    this.#timer.unref()
    return this.#ready
  }

  /** Stops the timer and abandons running probes. */
  stop(): void {
    this.#closed = true
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    for (const ac of this.#probes) ac.abort()
    this.#probes.clear()
    for (const cluster of this.#clusters) for (const node of cluster.nodes) node.closeProber()
    this.#notifyProbed()
  }

  /** Calls `listener` after every finished probe of any node, and once more on `stop()`; returns the unsubscribe function. */
  onProbe(listener: () => void): () => void {
    this.#probeListeners.add(listener)
    return () => {
      this.#probeListeners.delete(listener)
    }
  }

  #notifyProbed(): void {
    for (const l of [...this.#probeListeners]) {
      try {
        l()
      } catch {
        // a waiter never disturbs the loop
      }
    }
  }

  /** Probes every due node once, in parallel. Never rejects. */
  async #round(): Promise<void> {
    if (this.#closed) return
    const now = Date.now()
    const all = this.#config.healthCheck.enabled
    const work: Promise<boolean>[] = []
    for (const cluster of this.#clusters) {
      for (const node of cluster.nodes) {
        this.#listenToTimeouts(cluster, node)
        if (node.probing || node.drained || now < node.nextProbeAt) continue
        if (!all && node.state !== 'down' && !node.awaitingProbe) continue
        work.push(this.probeNode(cluster, node))
      }
    }
    await Promise.all(work)
  }

  /** Probes one node now and applies the outcome; resolves to whether the probe succeeded. Never rejects. */
  async probeNode(cluster: Cluster, node: RouterNode): Promise<boolean> {
    const hc = this.#config.healthCheck
    node.probeStarted()
    const started = Date.now()
    const ac = new AbortController()
    this.#probes.add(ac)
    let timer: NodeJS.Timeout | undefined
    let settled = false
    let ok = false
    try {
      const deadline = new Promise<never>((_, reject) => {
        const expire = (): void => {
          if (settled) return
          reject(new ProbeTimeoutError(hc.timeoutMs)) // first: the race reports the deadline, not the abort
          ac.abort()
        }
        timer = setTimeout(() => {
          // A timeout is about the node, not about this process: when the event loop was stalled
          // (CPU starvation, a long GC, a synchronous burst of work), the timer fires late and the
          // node's reply may already sit unread in the socket. Give the poll phase one turn to
          // deliver it (setImmediate runs after pending I/O); and when the timer fired much later
          // than due, the stall ate the node's time: grant it one more full deadline from now.
          const late = Date.now() - started - hc.timeoutMs
          setImmediate(() => {
            if (settled) return
            if (late < hc.timeoutMs * STALL_SHARE) return expire()
            timer = setTimeout(() => setImmediate(expire), hc.timeoutMs)
            timer.unref()
          })
        }, hc.timeoutMs)
        timer.unref()
      })
      const probe =
        this.#proberOf(node)?.probe(ac.signal) ??
        this.#driver.probe(node.probeOptions(hc.timeoutMs), ac.signal)
      probe.catch(() => {}) // settled later by the deadline race; never unhandled
      const result = await Promise.race([probe, deadline])
      if (this.#closed) return false
      this.#applyProbe(cluster, node, result, Date.now() - started)
      ok = true
    } catch (err) {
      if (this.#closed) return false
      const ms = Date.now() - started
      node.probeFailed(ms, err instanceof ProbeTimeoutError || ms >= hc.timeoutMs * HUNG_SHARE)
      this.recordFailure(cluster, node, err, 'probe')
      if (node.awaitingProbe && node.probes === 1) cluster.rebuild() // its first probe is done: fallback can be decided
    } finally {
      settled = true
      if (timer !== undefined) clearTimeout(timer)
      this.#probes.delete(ac)
      // Backoff only for a down node whose probes hang: one that refuses at once costs nothing to
      // probe, and is back within one interval of accepting connections.
      const delay =
        node.state === 'down' && node.hungProbes > 0
          ? Math.min(hc.intervalMs * 2 ** Math.min(node.hungProbes - 1, 20), hc.maxBackoffMs)
          : hc.intervalMs
      node.probeEnded(started + delay - hc.intervalMs / 2)
      if (!this.#closed) this.#notifyProbed()
    }
    return ok
  }

  /** The node's prober that keeps a connection, when the driver has one and reuse is on. */
  #proberOf(node: RouterNode): DriverProber | undefined {
    const maxAgeMs = this.#config.healthCheck.probeConnectionMaxAgeMs
    if (maxAgeMs === 0 || this.#driver.createProber === undefined) return undefined
    return (
      node.prober ??
      node.keepProber(
        this.#driver.createProber(node.probeOptions(this.#config.healthCheck.timeoutMs), { maxAgeMs }),
      )
    )
  }

  /** Records a failure (a failed probe, or a connection error of a real query). */
  recordFailure(cluster: Cluster, node: RouterNode, err: unknown, source: 'probe' | 'query'): void {
    if (this.#closed) return // work aborted by close() says nothing about the node
    const reason = this.redact(err)
    const next = node.recordFailure(reason, err)
    if (next !== undefined) this.#transition(cluster, node, next, reason, source)
  }

  /** An error's message with any configured password and URL user info redacted. */
  redact(err: unknown): string {
    const msg = err instanceof Error ? err.message || err.name : String(err)
    return redactUrl(redactSecrets(msg, this.#config.secrets))
  }

  /** Applies a successful probe (taking `ms`): role discovery, trust, positions and lag, then health. */
  #applyProbe(cluster: Cluster, node: RouterNode, result: ProbeResult, ms: number): void {
    const now = Date.now()
    const first = node.probeSucceeded(result, ms) // usable from its first good probe on
    let changed = cluster.reconcileRoles()
    if (first) changed = true
    // Role check: a node that reports another role than the one it is used in is not trusted.
    const trusted = result.role === node.role
    if (node.setTrusted(trusted)) {
      changed = true
      const base = { cluster: cluster.name, node: node.name, role: node.role }
      if (trusted) this.#events.emit('node:role-ok', base)
      else this.#events.emit('node:role-mismatch', { ...base, actual: result.role })
    }
    // Positions and lag.
    if (node.role === 'primary') {
      if (trusted && result.position !== undefined) cluster.lag.recordPrimary(now, result.position)
    } else {
      changed = this.#applyLag(cluster, node, result, now) || changed
    }
    const prev = node.state
    const next = node.recordSuccess()
    if (next !== undefined) this.#transition(cluster, node, next, '', 'probe', prev)
    else if (changed) cluster.rebuild()
  }

  /** Updates a replica's lag and lag exclusion; returns whether the exclusion changed. */
  #applyLag(cluster: Cluster, node: RouterNode, result: ProbeResult, now: number): boolean {
    const max = cluster.maxReplicationLagMs
    let lag: number | undefined
    if (result.position !== undefined) lag = cluster.lag.lagOf(result.position, now)
    if (lag === undefined) lag = result.reportedLagMs
    if (!node.recordLag(lag, result.replicating !== false, max)) return false
    const base = { cluster: cluster.name, node: node.name, role: node.role }
    if (node.lagging) this.#events.emit('node:lagging', { ...base, lagMs: lag, maxLagMs: max })
    else this.#events.emit('node:caught-up', { ...base, lagMs: lag })
    return true
  }

  #transition(
    cluster: Cluster,
    node: RouterNode,
    next: NodeState,
    reason: string,
    source: 'probe' | 'query',
    prev?: NodeState,
  ): void {
    const base = { cluster: cluster.name, node: node.name, role: node.role }
    if (next === 'down') {
      node.abortAll()
      cluster.reconcileRoles()
      this.#events.emit('node:down', { ...base, reason, source })
    } else if (next === 'suspect') {
      this.#events.emit('node:suspect', { ...base, reason })
    } else {
      this.#events.emit('node:up', { ...base, previous: prev ?? 'suspect' })
      cluster.reconcileRoles()
    }
    cluster.rebuild()
  }
}
