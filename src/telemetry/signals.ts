import type { NodeState } from '../health/node-health.js'
import type { RouterStats } from '../router/stats.js'
import type { TelemetryRouter } from './telemetry-router.js'

/**
 * The metrics both helpers publish (OpenTelemetry and Prometheus), defined once: names, units,
 * descriptions, and how router events and `stats()` turn into samples. Each helper maps the short
 * label names below to its own naming (`routemate.node` / `node`).
 */

/** Short label names; OpenTelemetry attribute names are `routemate.<name>`. */
export type LabelName =
  | 'cluster'
  | 'node'
  | 'role'
  | 'outcome'
  | 'state'
  | 'to_primary'
  | 'target_node'
  | 'context'
  | 'connection_state'
  | 'change'

/** Label values of one sample. */
export type Labels = Readonly<Partial<Record<LabelName, string>>>

/** One metric: its name after the prefix (dotted), kind, unit (UCUM, OpenTelemetry style) and help. */
export interface MetricDef {
  readonly name: string
  readonly kind: 'counter' | 'histogram' | 'gauge'
  readonly unit: string
  readonly description: string
}

const def = (name: string, kind: MetricDef['kind'], unit: string, description: string): MetricDef =>
  Object.freeze({ name, kind, unit, description })

/** Every metric, by id. */
export const METRICS = Object.freeze({
  queries: def('queries', 'counter', '{statement}', 'Statements run on a node, by outcome (ok or error).'),
  duration: def('query.duration', 'histogram', 'ms', 'Time a statement took on a node (checkout excluded).'),
  fallbacks: def(
    'fallbacks',
    'counter',
    '{fallback}',
    'Times a cluster ran out of usable replicas (reads then go to the primary, or fail if to_primary is false).',
  ),
  retries: def(
    'retries',
    'counter',
    '{retry}',
    'Reads retried on another node after a connection error (node failed, target_node took over).',
  ),
  stateChanges: def(
    'node.state_changes',
    'counter',
    '{change}',
    'Node health transitions, by the state entered.',
  ),
  lagExclusions: def(
    'node.lag_exclusions',
    'counter',
    '{exclusion}',
    'Times a replica was excluded from reads for replication lag or stopped replication.',
  ),
  roleMismatches: def(
    'node.role_mismatches',
    'counter',
    '{mismatch}',
    'Times a node reported another role than configured (untrusted until it matches again).',
  ),
  topologyChanges: def(
    'node.topology_changes',
    'counter',
    '{change}',
    'Nodes added, drained or removed at runtime, by change.',
  ),
  primaryChanges: def('primary.changes', 'counter', '{change}', 'Times the primary of a cluster changed.'),
  errors: def('errors', 'counter', '{error}', 'Background failures reported as error events, by context.'),
  rywRedirects: def(
    'read_your_writes.redirects',
    'counter',
    '{statement}',
    'Reads of a session that wrote, sent to the primary for read-your-writes.',
  ),
  nodeState: def('node.state', 'gauge', '1', '1 for the health state a node is in, 0 for the others.'),
  nodeUsable: def('node.usable', 'gauge', '1', '1 while a node takes queries (replica: up, trusted, fresh).'),
  inFlight: def(
    'node.in_flight',
    'gauge',
    '{statement}',
    'Statements and checked-out connections on a node now.',
  ),
  lag: def('node.lag', 'gauge', 'ms', 'Replication lag of a replica (absent until measured).'),
  connections: def('pool.connections', 'gauge', '{connection}', 'Pooled connections of a node, by state.'),
  pending: def(
    'pool.pending_requests',
    'gauge',
    '{request}',
    'Connection checkouts waiting for a connection.',
  ),
  fallingBack: def('cluster.falling_back', 'gauge', '1', '1 while no replica of a cluster is usable.'),
})

/** Upper bounds (ms) of the latency histogram's buckets: 0.5 ms to 10 s. */
export const DURATION_BUCKETS_MS: readonly number[] = Object.freeze([
  0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000,
])

/** The health states, in the order the state gauge reports them. */
export const NODE_STATES: readonly NodeState[] = Object.freeze(['up', 'suspect', 'down'])

/** Outcome label of a statement. */
export const outcomeOf = (ok: boolean): 'ok' | 'error' => (ok ? 'ok' : 'error')

/** The counters `subscribeEventCounters` feeds, one per counted kind of event. */
export const EVENT_COUNTERS: readonly MetricDef[] = Object.freeze([
  METRICS.fallbacks,
  METRICS.retries,
  METRICS.stateChanges,
  METRICS.lagExclusions,
  METRICS.roleMismatches,
  METRICS.topologyChanges,
  METRICS.primaryChanges,
  METRICS.errors,
])

/**
 * Subscribes to the events that are counted and calls `count` once per event with the metric and
 * its labels. Returns the unsubscribe function.
 */
export function subscribeEventCounters(
  router: TelemetryRouter,
  count: (metric: MetricDef, labels: Labels) => void,
): () => void {
  const m = METRICS
  const offs = [
    router.on('node:up', (e) => count(m.stateChanges, { ...nodeLabels(e), state: 'up' })),
    router.on('node:suspect', (e) => count(m.stateChanges, { ...nodeLabels(e), state: 'suspect' })),
    router.on('node:down', (e) => count(m.stateChanges, { ...nodeLabels(e), state: 'down' })),
    router.on('node:lagging', (e) => count(m.lagExclusions, nodeLabels(e))),
    router.on('node:role-mismatch', (e) => count(m.roleMismatches, nodeLabels(e))),
    router.on('node:added', (e) => count(m.topologyChanges, { ...nodeLabels(e), change: 'added' })),
    router.on('node:drained', (e) => count(m.topologyChanges, { ...nodeLabels(e), change: 'drained' })),
    router.on('node:removed', (e) => count(m.topologyChanges, { ...nodeLabels(e), change: 'removed' })),
    router.on('fallback', (e) => count(m.fallbacks, { cluster: e.cluster, to_primary: String(e.toPrimary) })),
    router.on('retry', (e) => count(m.retries, { cluster: e.cluster, node: e.from, target_node: e.to })),
    router.on('primary:changed', (e) => count(m.primaryChanges, { cluster: e.cluster })),
    router.on('error', (e) => count(m.errors, { context: e.context })),
  ]
  return () => {
    for (const off of offs) off()
  }
}

function nodeLabels(e: { cluster: string; node: string; role: string }): Labels {
  return { cluster: e.cluster, node: e.node, role: e.role }
}

/** Calls `emit` for every gauge sample of a stats snapshot. */
export function gaugeSamples(
  stats: RouterStats,
  emit: (metric: MetricDef, labels: Labels, value: number) => void,
): void {
  const m = METRICS
  for (const n of stats.nodes) {
    const labels: Labels = { cluster: n.cluster, node: n.name, role: n.role }
    for (const s of NODE_STATES) emit(m.nodeState, { ...labels, state: s }, n.state === s ? 1 : 0)
    emit(m.nodeUsable, labels, n.usable ? 1 : 0)
    emit(m.inFlight, labels, n.inFlight)
    if (n.lagMs !== undefined) emit(m.lag, labels, n.lagMs)
    emit(m.connections, { ...labels, connection_state: 'idle' }, n.pool.idle)
    emit(m.connections, { ...labels, connection_state: 'used' }, Math.max(0, n.pool.total - n.pool.idle))
    emit(m.pending, labels, n.pool.waiting)
  }
  for (const c of stats.clusters) emit(m.fallingBack, { cluster: c.name }, c.fallingBack ? 1 : 0)
}

/**
 * Read-your-writes redirects per cluster, from `stats().clusters[i].readYourWritesRedirects`
 * (a cumulative count the core exposes once it has the hook); nothing while the core lacks it.
 */
export function rywRedirectSamples(stats: RouterStats, emit: (labels: Labels, value: number) => void): void {
  for (const c of stats.clusters) {
    const v = (c as { readonly readYourWritesRedirects?: unknown }).readYourWritesRedirects
    if (typeof v === 'number') emit({ cluster: c.name }, v)
  }
}
