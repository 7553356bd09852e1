import type { ResolvedConfig } from '../router/resolved-config.js'
import type { NodeStats, RouterStats } from '../router/stats.js'

/** One node in `routemate status --json`. Absent values are `null`. */
export interface StatusNode {
  /** Cluster (shard) name; `default` when unsharded. */
  readonly cluster: string
  readonly name: string
  /** Connection URL, password redacted. */
  readonly url: string
  /** The role the file gives the node; `any` when roles are discovered (`nodes`). */
  readonly expectedRole: 'primary' | 'replica' | 'any'
  /** The role the node reports; `unknown` when it could not be probed. */
  readonly actualRole: 'primary' | 'replica' | 'unknown'
  readonly state: 'up' | 'suspect' | 'down'
  /** False when the node reports another role than the one it is used in. */
  readonly trusted: boolean
  /** Whether the router would use it now (reads for a replica, writes for the primary). */
  readonly usable: boolean
  /** Why not usable: `down`, `lagging`, `not-replicating`, `role-mismatch`, `drained`, `unknown-role`. */
  readonly unusableReason: string | null
  /** Duration of the probe, ms. */
  readonly latencyMs: number | null
  /**
   * Replication lag, ms: how far the replica's replay is behind its primary's position (0: caught
   * up). `null` for a primary, and for a replica whose lag cannot be known (it or its primary is
   * down, or no position could be read).
   */
  readonly lagMs: number | null
  /** The probe's failure, password redacted. */
  readonly error: string | null
}

/** One cluster in `routemate status --json`. */
export interface StatusCluster {
  readonly name: string
  /** Name of the primary; `null` when none was found (roles discovered). */
  readonly primary: string | null
  /** Whether the primary is up and reports being the primary. */
  readonly primaryOk: boolean
  /** Whether reads fall back to the primary (no usable replica). */
  readonly fallingBack: boolean
  /** Replicas reads would go to now. */
  readonly candidates: readonly string[]
}

/** The document `routemate status --json` prints (stable field names; `version` bumps on a breaking change). */
export interface StatusReport {
  readonly version: 1
  /** The config file as shown in messages. */
  readonly config: string
  readonly dialect: 'postgres' | 'mysql'
  /** True when every cluster's primary is up and trusted (exit status 0). */
  readonly ok: boolean
  /** ISO time of the probe. */
  readonly checkedAt: string
  /** Why `ok` is false: a primary down, untrusted or not found. */
  readonly errors: readonly string[]
  /** Replicas down, untrusted, lagging or drained. */
  readonly warnings: readonly string[]
  readonly clusters: readonly StatusCluster[]
  readonly nodes: readonly StatusNode[]
}

/**
 * Builds the status report from the stats after one probe round. Redacts every message with
 * `redact` (the config's secrets).
 */
export function buildStatusReport(
  stats: RouterStats,
  resolved: ResolvedConfig,
  config: string,
  redact: (text: string) => string,
  checkedAt: Date = new Date(),
): StatusReport {
  const discovery = new Map(resolved.clusters.map((c) => [c.name, c.discovery]))
  const sharded = resolved.sharded
  const label = (cluster: string) => (sharded ? `${cluster}: ` : '')
  const errors: string[] = []
  const warnings: string[] = []
  const nodes = stats.nodes.map((n) => toStatusNode(n, discovery.get(n.cluster) === true, redact))
  const clusters = stats.clusters.map((c): StatusCluster => {
    const primary = c.primary === undefined ? undefined : nodes.find((n) => n.name === c.primary)
    const primaryOk = primary !== undefined && primary.state === 'up' && primary.trusted
    if (primary === undefined) {
      errors.push(`${label(c.name)}no primary found: no node reports being the primary`)
    } else if (!primaryOk) {
      errors.push(`${label(c.name)}primary "${primary.name}" ${problem(primary)}`)
    }
    return {
      name: c.name,
      primary: c.primary ?? null,
      primaryOk,
      fallingBack: c.fallingBack,
      candidates: c.candidates,
    }
  })
  for (const n of nodes) {
    const isPrimary = clusters.some((c) => c.name === n.cluster && c.primary === n.name)
    if (!isPrimary && !n.usable) warnings.push(`${label(n.cluster)}replica "${n.name}" ${problem(n)}`)
  }
  return {
    version: 1,
    config,
    dialect: resolved.driver.dialect,
    ok: errors.length === 0,
    checkedAt: checkedAt.toISOString(),
    errors,
    warnings,
    clusters,
    nodes,
  }
}

function toStatusNode(n: NodeStats, discovery: boolean, redact: (text: string) => string): StatusNode {
  const reachable = n.state === 'up'
  let actualRole: StatusNode['actualRole'] = 'unknown'
  if (reachable && n.unusableReason !== 'unknown-role') {
    actualRole = n.trusted ? n.role : n.role === 'primary' ? 'replica' : 'primary'
  }
  return {
    cluster: n.cluster,
    name: n.name,
    url: redact(n.url),
    expectedRole: discovery ? 'any' : n.role,
    actualRole,
    state: n.state,
    trusted: n.trusted,
    usable: n.usable,
    unusableReason: n.unusableReason ?? null,
    latencyMs: n.lastProbeMs ?? null,
    lagMs: n.role === 'replica' && n.lagMs !== undefined ? Math.round(n.lagMs) : null,
    error: reachable || n.lastError === undefined ? null : redact(n.lastError),
  }
}

function problem(n: StatusNode): string {
  if (n.state !== 'up') return `is down${n.error ? `: ${n.error}` : ''}`
  switch (n.unusableReason) {
    case 'role-mismatch':
      return `is not trusted: it reports being a ${n.actualRole}`
    case 'lagging':
      return `is lagging${n.lagMs === null ? '' : ` (${n.lagMs} ms behind)`}`
    case 'not-replicating':
      return 'is not replicating'
    case 'drained':
      return 'is drained (weight 0)'
    case 'unknown-role':
      return 'did not report a role'
    default:
      return `is not usable (${n.unusableReason ?? 'unknown'})`
  }
}
