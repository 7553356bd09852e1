import type { TokenStats } from '../consistency/token-audit.js'
import type { NodeState } from '../health/node-health.js'
import type { Cluster } from './cluster.js'
import type { NodeRole } from './driver.js'
import type { RouterNode } from './router-node.js'

/** A snapshot of one node, as returned by `router.stats()`. Holds no password. */
export interface NodeStats {
  /** Node name. */
  readonly name: string
  /** Cluster (shard) name; `default` for an unsharded router. */
  readonly cluster: string
  /** Configured role. */
  readonly role: NodeRole
  /** Health state. */
  readonly state: NodeState
  /** False while the node reports a role other than its configured one. */
  readonly trusted: boolean
  /** For replicas: whether reads may go to it now (up, trusted, fresh, weight > 0); for the primary: whether it takes writes. */
  readonly usable: boolean
  /** Why the node is not usable (`down`, `lagging`, `not-replicating`, `role-mismatch`, `drained`, `unknown-role`, `not-probed-yet`: no probe of it has succeeded yet), if it is not. */
  readonly unusableReason: string | undefined
  /** Replication lag in ms (replicas; undefined until measured). */
  readonly lagMs: number | undefined
  /** Queries and checked-out connections running now. */
  readonly inFlight: number
  /** Statements served (successfully). */
  readonly queries: number
  /** Statements that failed on this node (any error). */
  readonly errors: number
  /** Smoothed query latency, ms. */
  readonly latencyMs: number
  /** Duration of the last probe, ms. */
  readonly lastProbeMs: number | undefined
  /** Health probes of this node finished so far (succeeded or failed). */
  readonly probes: number
  /** The last failure's message (passwords redacted). */
  readonly lastError: string | undefined
  /** Configured weight. */
  readonly weight: number
  /** Connection URL with the password redacted. */
  readonly url: string
  /** Pool occupancy. */
  readonly pool: { readonly total: number; readonly idle: number; readonly waiting: number }
}

/** A snapshot of one cluster (shard). */
export interface ClusterStats {
  readonly name: string
  /** Whether reads are falling back (no usable replica). */
  readonly fallingBack: boolean
  /** The current primary's name (`undefined` while roles are being discovered). */
  readonly primary: string | undefined
  /** Names of the replicas reads go to now. */
  readonly candidates: readonly string[]
  /** The balancer's name. */
  readonly balancer: string
  /**
   * Reads of sessions that wrote, sent to the primary for read-your-writes (cumulative, both
   * modes): one per read statement, and one per read connection (a read-only transaction, a
   * `router.pool()` checkout in a `readOnly` scope).
   */
  readonly readYourWritesRedirects: number
}

/** What `router.stats()` returns. */
export interface RouterStats {
  readonly clusters: readonly ClusterStats[]
  readonly nodes: readonly NodeStats[]
  /** Consistency tokens received and rejected (cumulative). */
  readonly tokens: TokenStats
}

function nodeStats(cluster: Cluster, node: RouterNode): NodeStats {
  let reason: string | undefined
  if (node !== cluster.primary) reason = cluster.unusableReason(node)
  else if (node.state === 'down') reason = 'down'
  else if (!node.trusted) reason = 'role-mismatch'
  return {
    name: node.name,
    cluster: node.cluster,
    role: node.role,
    state: node.state,
    trusted: node.trusted,
    usable: reason === undefined,
    unusableReason: reason,
    lagMs: node.lagMs,
    inFlight: node.inFlight,
    queries: node.queries,
    errors: node.errors,
    latencyMs: Math.round(node.latencyMs * 1000) / 1000,
    lastProbeMs: node.lastProbeMs,
    probes: node.probes,
    lastError: node.lastError,
    weight: node.weight,
    url: node.redactedUrl,
    pool: node.counts(),
  }
}

/** Builds the stats snapshot of some clusters (and the router's token counts). */
export function statsOf(clusters: readonly Cluster[], tokens: TokenStats): RouterStats {
  return {
    clusters: clusters.map((c) => ({
      name: c.name,
      fallingBack: c.fallingBack,
      primary: c.primary?.name,
      candidates: c.candidates.map((n) => n.name),
      balancer: c.balancer.name,
      readYourWritesRedirects: c.readYourWritesRedirects,
    })),
    nodes: clusters.flatMap((c) => c.nodes.map((n) => nodeStats(c, n))),
    tokens,
  }
}
