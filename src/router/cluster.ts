import type { Balancer, NodeView } from '../balancer/balancer.js'
import { LagTracker } from '../consistency/lag-tracker.js'
import { PrimaryPosition } from '../consistency/primary-position.js'
import type { Driver } from './driver.js'
import type { RouterEmitter } from './events.js'
import type { ResolvedCluster, ResolvedHealthCheck, ResolvedNode } from './resolved-config.js'
import { type QueryListener, RouterNode } from './router-node.js'

const EMPTY: readonly RouterNode[] = Object.freeze([])

/**
 * One primary and its replicas (a shard is a named cluster). Keeps the list of usable replicas as
 * a frozen array that is rebuilt only when a node's health, trust, lag, role or weight changes
 * (copy-on-write), so that a read's routing is one array read plus one balancer pick. With
 * `discovery`, roles come from the probes and the primary can change (`primary:changed`).
 */
export class Cluster {
  readonly name: string
  /** Every node of the cluster, in configuration order (replaced, never mutated, on topology changes). */
  nodes: readonly RouterNode[]
  /** The current primary: configured, or discovered (`undefined` until a probe finds one). */
  primary: RouterNode | undefined
  /** The current replicas (every node but the primary). */
  replicas: readonly RouterNode[]
  readonly discovery: boolean
  readonly balancer: Balancer
  readonly lag: LagTracker
  /** How far the primary is known to have got (probes, own writes, samples): checks token positions. */
  readonly primaryPosition: PrimaryPosition
  readonly maxReplicationLagMs: number
  readonly fallbackToPrimary: boolean
  /** Usable replicas, rebuilt on change; never mutated in place. */
  candidates: readonly RouterNode[] = EMPTY
  /** Reads of sessions that wrote, sent to the primary for read-your-writes (cumulative). */
  readYourWritesRedirects = 0
  /** Whether reads are currently falling back (no usable replica while replicas exist). */
  fallingBack = false
  /**
   * Whether the first probe of some replica is still running (at startup, after `addReplica`):
   * until it has finished, reads that find no candidate wait for it instead of falling back.
   */
  firstProbesPending = false
  readonly #events: RouterEmitter
  readonly #make: (n: ResolvedNode) => RouterNode
  readonly #driver: Driver
  /** What runtime-added nodes inherit. */
  readonly defaults: ResolvedCluster['defaults']

  constructor(
    config: ResolvedCluster,
    driver: Driver,
    health: ResolvedHealthCheck,
    events: RouterEmitter,
    listeners: QueryListener[] = [],
  ) {
    this.name = config.name
    this.#events = events
    this.discovery = config.discovery
    this.defaults = config.defaults
    this.maxReplicationLagMs = config.maxReplicationLagMs
    this.fallbackToPrimary = config.fallbackToPrimary
    this.#make = (n: ResolvedNode) =>
      new RouterNode(
        driver,
        n,
        config.name,
        health,
        (error: unknown) => events.emit('error', { error, context: 'pooled connection error', node: n.name }),
        listeners,
      )
    const make = this.#make
    this.primary = config.primary === undefined ? undefined : make(config.primary)
    const replicas = config.replicas.map(make)
    this.replicas = Object.freeze(replicas)
    this.nodes = Object.freeze(this.primary === undefined ? replicas : [this.primary, ...replicas])
    // With health checks, no node is trusted before a probe of it succeeds: replicas get no reads
    // until then; the primary still takes writes (see `runOnPrimary` for its connect failures).
    if (health.enabled) for (const n of this.nodes) n.awaitProbe()
    this.balancer = config.balancer()
    this.#driver = driver
    this.lag = new LagTracker((a, b) => driver.positionReached(a, b))
    this.primaryPosition = new PrimaryPosition(
      (a, b) => driver.positionReached(a, b),
      this.lag,
      () => this.#readPrimaryPosition(),
    )
    this.rebuild()
  }

  /**
   * The current primary's position, read on a connection of its read-only pool (idle unless reads
   * fall back to the primary, so the read does not queue behind writes; kept between samples);
   * `undefined` without a usable primary.
   */
  async #readPrimaryPosition(): Promise<string | undefined> {
    const p = this.primary
    if (p === undefined || !p.available) return undefined
    const conn = await p.acquire(true)
    let ok = false
    try {
      const position = await this.#driver.positionAfterWrite(conn)
      ok = true
      return position
    } finally {
      p.release(conn, !ok)
    }
  }

  /**
   * Why a replica is not usable, or `undefined` when it is. `not-probed-yet`: no probe of it has
   * succeeded yet (its `state` and `lastError` say whether one failed).
   */
  unusableReason(node: RouterNode): string | undefined {
    if (node.drained) return 'drained'
    if (node.awaitingProbe) return 'not-probed-yet'
    if (node.state === 'down') return 'down'
    if (this.discovery && node.reportedRole === undefined) return 'unknown-role'
    if (!node.trusted) return 'role-mismatch'
    if (node.weight <= 0) return 'drained'
    if (node.lagging) return node.replicating ? 'lagging' : 'not-replicating'
    return undefined
  }

  /** Rebuilds the candidate list if membership changed, telling the balancer and emitting fallback events. */
  rebuild(): void {
    // A balancer that observes hears of every statement its picks (the replicas) serve.
    const observer = this.balancer.observe !== undefined ? this.balancer : undefined
    for (const n of this.nodes) n.setObserver(n === this.primary ? undefined : observer)
    const next: RouterNode[] = []
    for (const r of this.replicas) if (this.unusableReason(r) === undefined) next.push(r)
    const prev = this.candidates
    const same = prev.length === next.length && prev.every((n, i) => n === next[i])
    if (!same) {
      this.candidates = Object.freeze(next)
      this.balancer.reset?.(this.candidates as readonly NodeView[])
    }
    let pending = false
    for (const r of this.replicas) if (r.awaitingProbe && r.probes === 0 && !r.drained) pending = true
    this.firstProbesPending = pending
    // While a replica's first probe is still running (at startup, after addReplica), whether the
    // cluster falls back is not known yet: decided once it has finished.
    if (this.replicas.length === 0 || pending) return
    const empty = this.candidates.length === 0
    if (empty && !this.fallingBack) {
      this.fallingBack = true
      const replicas: Record<string, string> = {}
      for (const r of this.replicas) replicas[r.name] = this.unusableReason(r) ?? 'usable'
      this.#events.emit('fallback', { cluster: this.name, toPrimary: this.fallbackToPrimary, replicas })
    } else if (!empty && this.fallingBack) {
      this.fallingBack = false
      this.#events.emit('fallback:end', { cluster: this.name })
    }
  }

  /**
   * With discovery: makes the node that reports itself primary the primary when the current one
   * is unknown, down, or no longer reports primary. Several candidates (split brain) change
   * nothing. Returns whether the primary changed.
   */
  reconcileRoles(): boolean {
    if (!this.discovery) return false
    const cur = this.primary
    if (cur !== undefined && cur.state !== 'down' && cur.reportedRole === 'primary') return false
    let next: RouterNode | undefined
    for (const n of this.nodes) {
      if (n === cur || n.state === 'down' || n.reportedRole !== 'primary') continue
      if (next !== undefined) return false // ambiguous: keep what we have
      next = n
    }
    if (next === undefined) return false
    this.primary = next
    for (const n of this.nodes) n.assignRole(n === next ? 'primary' : 'replica')
    this.replicas = Object.freeze(this.nodes.filter((n) => n !== next))
    this.lag.clear()
    this.primaryPosition.clear()
    this.#events.emit('primary:changed', { cluster: this.name, from: cur?.name, to: next.name })
    this.rebuild()
    return true
  }

  /** Adds a replica at runtime (already validated); it is used once probes find it healthy. */
  addReplica(config: ResolvedNode): RouterNode {
    const node = this.#make(config)
    node.awaitProbe()
    if (this.discovery) node.assignRole('replica')
    this.replicas = Object.freeze([...this.replicas, node])
    this.nodes = Object.freeze([...this.nodes, node])
    this.rebuild()
    return node
  }

  /** Forgets a (drained) replica. */
  removeReplica(node: RouterNode): void {
    this.replicas = Object.freeze(this.replicas.filter((n) => n !== node))
    this.nodes = Object.freeze(this.nodes.filter((n) => n !== node))
    this.rebuild()
  }

  /** Picks a usable replica other than `exclude` (for a retry), or `undefined`. */
  pickOther(exclude: RouterNode): RouterNode | undefined {
    const c = this.candidates
    if (c.length === 0) return undefined
    if (c.length === 1) return c[0] === exclude ? undefined : c[0]
    const picked = this.balancer.pick(c) as RouterNode
    if (picked !== exclude) return picked
    for (const n of c) if (n !== exclude) return n
    return undefined
  }
}
