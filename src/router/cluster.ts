import type { Balancer, NodeView } from '../balancer/balancer.js'
import { LagTracker } from '../consistency/lag-tracker.js'
import type { Driver } from './driver.js'
import type { RouterEmitter } from './events.js'
import type { ResolvedConfig, ResolvedNode } from './resolved-config.js'
import { RouterNode } from './router-node.js'

const EMPTY: readonly RouterNode[] = Object.freeze([])

/**
 * One primary and its replicas (a shard is a named cluster). Keeps the list of usable replicas as
 * a frozen array that is rebuilt only when a node's health, trust, lag or weight changes
 * (copy-on-write), so that a read's routing is one array read plus one balancer pick.
 */
export class Cluster {
  readonly name: string
  readonly primary: RouterNode
  readonly replicas: readonly RouterNode[]
  readonly nodes: readonly RouterNode[]
  readonly balancer: Balancer
  readonly lag: LagTracker
  /** Usable replicas, rebuilt on change; never mutated in place. */
  candidates: readonly RouterNode[] = EMPTY
  /** Whether reads are currently falling back (no usable replica while replicas are configured). */
  fallingBack = false
  readonly #config: ResolvedConfig
  readonly #events: RouterEmitter

  constructor(
    name: string,
    primary: ResolvedNode,
    replicas: readonly ResolvedNode[],
    config: ResolvedConfig,
    events: RouterEmitter,
  ) {
    this.name = name
    this.#config = config
    this.#events = events
    const driver = config.driver as Driver
    const make = (n: ResolvedNode) =>
      new RouterNode(driver, n, name, config.healthCheck, (error: unknown) =>
        events.emit('error', { error, context: 'pooled connection error', node: n.name }),
      )
    this.primary = make(primary)
    this.replicas = Object.freeze(replicas.map(make))
    this.nodes = Object.freeze([this.primary, ...this.replicas])
    this.balancer = config.balancer()
    this.lag = new LagTracker((a, b) => driver.positionReached(a, b))
    this.rebuild()
  }

  /** Why a replica is not usable, or `undefined` when it is. */
  static unusableReason(node: RouterNode): string | undefined {
    if (node.state === 'down') return 'down'
    if (!node.trusted) return 'role-mismatch'
    if (node.weight <= 0) return 'drained'
    if (node.lagging) return node.replicating ? 'lagging' : 'not-replicating'
    return undefined
  }

  /** Rebuilds the candidate list if membership changed, telling the balancer and emitting fallback events. */
  rebuild(): void {
    const next: RouterNode[] = []
    for (const r of this.replicas) if (Cluster.unusableReason(r) === undefined) next.push(r)
    const prev = this.candidates
    const same = prev.length === next.length && prev.every((n, i) => n === next[i])
    if (!same) {
      this.candidates = Object.freeze(next)
      this.balancer.reset?.(this.candidates as readonly NodeView[])
    }
    if (this.replicas.length === 0) return
    const empty = this.candidates.length === 0
    if (empty && !this.fallingBack) {
      this.fallingBack = true
      const replicas: Record<string, string> = {}
      for (const r of this.replicas) replicas[r.name] = Cluster.unusableReason(r) ?? 'usable'
      this.#events.emit('fallback', {
        cluster: this.name,
        toPrimary: this.#config.fallbackToPrimary,
        replicas,
      })
    } else if (!empty && this.fallingBack) {
      this.fallingBack = false
      this.#events.emit('fallback:end', { cluster: this.name })
    }
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
