/**
 * What a balancer sees of a node: read-only, live values. The same object is passed on every pick
 * (no per-query allocation), so balancers may use it as a key (e.g. in a `WeakMap`).
 */
export interface NodeView {
  /** Node name, unique within the router. */
  readonly name: string
  /** Configured weight (>= 0). Nodes of weight 0 are drained and never reach a balancer. */
  readonly weight: number
  /** Queries (and checked-out connections) currently running on this node. */
  readonly inFlight: number
  /** Smoothed latency of recent queries on this node, in ms (0 until measured). */
  readonly latencyMs: number
}

/**
 * Picks one replica for a read. One instance serves one cluster (shard).
 *
 * The router calls `pick` with the cluster's current candidate list: usable replicas only (up,
 * trusted, fresh enough, weight > 0), never empty. The array is rebuilt (a new frozen array) only
 * when health, lag or topology change, and the balancer is told through `reset`; between two
 * resets the same array is passed on every call. `pick` must be fast (it is on every read's path)
 * and must return an element of `candidates`.
 *
 * @example
 * ```ts
 * const firstAlive: Balancer = { name: 'first', pick: (c) => c[0]! }
 * createRouter({ driver, primary, replicas, balancer: firstAlive })
 * ```
 */
export interface Balancer {
  /** A short name shown in `stats()`. */
  readonly name: string
  /** Picks one of `candidates` (never empty). */
  pick(candidates: readonly NodeView[]): NodeView
  /** Called whenever the candidate list is rebuilt, before the next `pick` with it. */
  reset?(candidates: readonly NodeView[]): void
  /** Called after each query the balancer's pick served: its duration and whether it succeeded. */
  observe?(node: NodeView, durationMs: number, ok: boolean): void
}

/** The built-in balancer names. */
export type BalancerName = 'round-robin' | 'weighted-round-robin' | 'random' | 'least-outstanding'
