import type { HealthMonitor } from '../health/health-monitor.js'
import type { Cluster } from './cluster.js'
import { NodeRegistry, parseNodeUrl, resolveNode } from './config-nodes.js'
import type { Dialect } from './driver.js'
import type { RouterEmitter } from './events.js'
import type { NodeConfig } from './options.js'
import type { RouterNode } from './router-node.js'

/** Options of `router.drain` and `router.removeReplica`. */
export interface DrainOptions {
  /** How long in-flight queries (and transactions) may run before they are aborted, in ms. Default: 5000. */
  timeoutMs?: number
}

/** What topology changes need from the router. */
export interface TopologyDeps {
  readonly clusters: readonly Cluster[]
  readonly dialect: Dialect
  readonly monitor: HealthMonitor
  readonly events: RouterEmitter
}

/** Finds a node by name across clusters. */
export function findNode(
  clusters: readonly Cluster[],
  name: string,
): { cluster: Cluster; node: RouterNode } | undefined {
  for (const cluster of clusters) {
    for (const node of cluster.nodes) if (node.name === name) return { cluster, node }
  }
  return undefined
}

/**
 * Validates and adds a replica to a cluster at runtime: unique name and server across the
 * router (`ConfigError` otherwise), settings inherited like configured replicas. Resolves after
 * its first probe; it takes reads once healthy.
 */
export async function addReplica(
  deps: TopologyDeps,
  cluster: Cluster,
  value: string | NodeConfig,
): Promise<string> {
  const registry = new NodeRegistry()
  let count = 0
  for (const c of deps.clusters) {
    for (const n of c.nodes) {
      registry.addName(n.name, `(existing node ${n.name})`, true)
      registry.addServer(
        parseNodeUrl(n.options.url, n.name, deps.dialect).server,
        n.name,
        `(existing node ${n.name})`,
      )
      if (c === cluster) count++
    }
  }
  const prefix = cluster.name === 'default' ? '' : `${cluster.name}.`
  let k = count
  while (findNode(deps.clusters, `${prefix}replica${k}`) !== undefined) k++
  const resolved = resolveNode(
    value,
    'replica',
    `${prefix}replica${k}`,
    'replica',
    deps.dialect,
    cluster.defaults,
    registry,
  )
  const node = cluster.addReplica(resolved)
  deps.events.emit('node:added', { cluster: cluster.name, node: node.name, role: node.role })
  await deps.monitor.probeNode(cluster, node)
  return node.name
}

/**
 * Drains a replica: no new queries from now on, in-flight work may finish (up to `timeoutMs`,
 * then it is aborted), then its pools close — exactly once, however often this is called.
 */
export function drain(
  deps: TopologyDeps,
  cluster: Cluster,
  node: RouterNode,
  options: DrainOptions = {},
): Promise<void> {
  if (node === cluster.primary) {
    return Promise.reject(
      new TypeError(
        `"${node.name}" is the primary of cluster "${cluster.name}": it cannot be drained or removed`,
      ),
    )
  }
  if (node.draining !== undefined) return node.draining
  node.drained = true
  cluster.rebuild()
  const timeoutMs = options.timeoutMs ?? 5000
  node.draining = (async () => {
    const deadline = Date.now() + timeoutMs
    while (node.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
    const aborted = node.abortAll()
    await node.end()
    deps.events.emit('node:drained', { cluster: cluster.name, node: node.name, role: node.role, aborted })
  })()
  return node.draining
}

/** Drains a replica, then forgets it. */
export async function removeReplica(
  deps: TopologyDeps,
  cluster: Cluster,
  node: RouterNode,
  options?: DrainOptions,
): Promise<void> {
  await drain(deps, cluster, node, options)
  if (!cluster.nodes.includes(node)) return
  cluster.removeReplica(node)
  deps.events.emit('node:removed', { cluster: cluster.name, node: node.name, role: node.role })
}

/** Changes a replica's weight at runtime (0 drains it from balancing without closing its pool). */
export function setWeight(cluster: Cluster, node: RouterNode, weight: number): void {
  if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) {
    throw new TypeError(`weight: expected a finite number >= 0, got ${String(weight)}`)
  }
  node.weight = weight
  cluster.rebuild()
  cluster.balancer.reset?.(cluster.candidates)
}
