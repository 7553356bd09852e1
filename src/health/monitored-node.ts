import type { LagTracker } from '../consistency/lag-tracker.js'
import type { DriverNodeOptions, DriverProber, NodeRole, ProbeResult } from '../driver/probe-contract.js'
import type { NodeState } from './node-health.js'

/**
 * What the health monitor needs of a node (a `RouterNode` implements it): what it reads to decide
 * when to probe, and the intent methods through which probe outcomes and passive health change
 * the node's state. The monitor decides, the node keeps its state.
 */
export interface MonitoredNode {
  readonly name: string
  /** The role the router uses the node in. */
  readonly role: NodeRole
  readonly state: NodeState
  readonly trusted: boolean
  readonly probing: boolean
  readonly drained: boolean
  readonly awaitingProbe: boolean
  readonly nextProbeAt: number
  readonly probes: number
  readonly hungProbes: number
  readonly replicating: boolean
  /** Whether the lag policy excludes it. */
  readonly lagging: boolean
  readonly prober: DriverProber | undefined
  /** Told when a statement passes `queryTimeoutMs` (set with `onStatementTimeout`). */
  readonly timeoutListener: (() => void) | undefined
  /** The options for a probe connection. */
  probeOptions(timeoutMs: number): DriverNodeOptions
  probeStarted(): void
  /** Records a successful probe; returns whether the node was awaiting its first good probe. */
  probeSucceeded(result: ProbeResult, ms: number): boolean
  probeFailed(ms: number, hung: boolean): void
  /** The probe ended; the next one is due at `at`. */
  probeEnded(at: number): void
  keepProber(prober: DriverProber): DriverProber
  closeProber(): void
  /** Returns whether trust changed. */
  setTrusted(trusted: boolean): boolean
  /** Returns whether the lag exclusion changed. */
  recordLag(lagMs: number | undefined, replicating: boolean, maxLagMs: number): boolean
  /** Returns the new health state if it changed. */
  recordSuccess(): NodeState | undefined
  /** Returns the new health state if it changed. */
  recordFailure(reason: string, err: unknown): NodeState | undefined
  onStatementTimeout(listener: () => void): void
  /** Fails all work on the node (it went down); returns how much. */
  abortAll(): number
}

/** What the health monitor needs of a cluster (a `Cluster` implements it). */
export interface MonitoredCluster<N extends MonitoredNode = MonitoredNode> {
  readonly name: string
  readonly nodes: readonly N[]
  /** The primary's positions and the replicas' lag. */
  readonly lag: LagTracker
  readonly maxReplicationLagMs: number
  /** With discovery, re-elects the primary from reported roles; returns whether it changed. */
  reconcileRoles(): boolean
  /** Rebuilds the candidate list (after a change of health, trust or lag). */
  rebuild(): void
}

/** What the health monitor needs of the driver: probes. */
export interface ProbeDriver {
  probe(node: DriverNodeOptions, signal: AbortSignal): Promise<ProbeResult>
  createProber?(node: DriverNodeOptions, options: { maxAgeMs: number }): DriverProber
}

/** The health-check settings the monitor runs by (the resolved `healthCheck` option). */
export interface HealthSettings {
  readonly enabled: boolean
  readonly intervalMs: number
  readonly timeoutMs: number
  readonly maxBackoffMs: number
  readonly probeConnectionMaxAgeMs: number
}

/** The fields of every event about one node. */
interface NodeEvent {
  readonly cluster: string
  readonly node: string
  readonly role: NodeRole
}

/**
 * Where the health monitor reports transitions: the router's event emitter (each overload is one
 * of its events, checked where the router hands it over).
 */
export interface HealthEvents {
  emit(event: 'node:up', payload: NodeEvent & { readonly previous: NodeState }): void
  emit(event: 'node:suspect', payload: NodeEvent & { readonly reason: string }): void
  emit(
    event: 'node:down',
    payload: NodeEvent & { readonly reason: string; readonly source: 'probe' | 'query' },
  ): void
  emit(event: 'node:role-mismatch', payload: NodeEvent & { readonly actual: NodeRole }): void
  emit(event: 'node:role-ok', payload: NodeEvent): void
  emit(
    event: 'node:lagging',
    payload: NodeEvent & { readonly lagMs: number | undefined; readonly maxLagMs: number },
  ): void
  emit(event: 'node:caught-up', payload: NodeEvent & { readonly lagMs: number | undefined }): void
}
