import { ConfigError } from '../errors/config-error.js'
import { RouterClosedError } from '../errors/router-closed-error.js'
import { ShardKeyRequiredError } from '../errors/shard-key-required-error.js'
import { UnknownNodeError } from '../errors/unknown-node-error.js'
import { UnknownShardError } from '../errors/unknown-shard-error.js'
import type { HealthMonitor } from '../health/health-monitor.js'
import type { Cluster } from './cluster.js'
import type { PoolChecker } from './config-checks.js'
import { NodeRegistry, resolveNode } from './config-nodes.js'
import type { Dialect } from './driver.js'
import type { RouterEmitter } from './events.js'
import { parseNodeUrl } from './node-url.js'
import type { NodeConfig } from './options.js'
import type { RouterNode } from './router-node.js'

/** Options of `router.drain` and `router.removeReplica`. */
export interface DrainOptions {
  /** How long in-flight queries (and transactions) may run before they are aborted, in ms. Default: 5000. */
  timeoutMs?: number
}

/** What topology changes need: the clusters, config checks, probes and events. Built by the router. */
export interface TopologyDeps {
  readonly clusters: readonly Cluster[]
  /** The clusters by name (shard name; `default` when unsharded). */
  readonly byName: ReadonlyMap<string, Cluster>
  /** The cluster of a call that names no shard (`undefined` in a sharded router without `defaultShard`). */
  readonly defaultCluster: Cluster | undefined
  /** The shard names, for an `UnknownShardError`. */
  readonly shardNames: readonly string[]
  readonly dialect: Dialect
  /** The driver's check of `pool` options, if it has one. */
  readonly checkPoolOptions?: PoolChecker | undefined
  /** Probes an added node (the health monitor's `probeNode`). */
  readonly monitor: Pick<HealthMonitor, 'probeNode'>
  readonly events: RouterEmitter
  /** Whether the router was closed. */
  readonly lifecycle: { readonly closed: boolean }
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
    deps.checkPoolOptions,
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
  return node.drain(
    options.timeoutMs ?? 5000,
    () => cluster.rebuild(),
    (aborted) =>
      deps.events.emit('node:drained', { cluster: cluster.name, node: node.name, role: node.role, aborted }),
  )
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
    throw new ConfigError('weight', `expected a finite number >= 0, got ${String(weight)}`)
  }
  node.setWeight(weight)
  cluster.rebuild()
  cluster.balancer.reset?.(cluster.candidates)
}

/**
 * A router's runtime topology changes (`addReplica`, `drain`, `removeReplica`, `setWeight`):
 * finds the cluster or node named, then calls the functions above. One per router.
 */
export class RouterTopology {
  readonly #deps: TopologyDeps

  constructor(deps: TopologyDeps) {
    this.#deps = deps
  }

  /**
   * Adds a replica to `shard`'s cluster (the default cluster without one); resolves with its
   * name after its first probe. Never throws: every error is a rejection.
   */
  addReplica(node: string | NodeConfig, shard: string | undefined): Promise<string> {
    const deps = this.#deps
    if (deps.lifecycle.closed) return Promise.reject(new RouterClosedError())
    const cluster = shard === undefined ? deps.defaultCluster : deps.byName.get(shard)
    if (cluster === undefined) {
      return Promise.reject(
        shard === undefined ? new ShardKeyRequiredError() : new UnknownShardError(shard, deps.shardNames),
      )
    }
    try {
      return addReplica(this.#deps, cluster, node)
    } catch (err) {
      return Promise.reject(err)
    }
  }

  /** Drains the replica named `name` (see `drain`); `UnknownNodeError` for an unknown name. */
  drain(name: string, options: DrainOptions | undefined): Promise<void> {
    const { cluster, node } = this.#node(name)
    return drain(this.#deps, cluster, node, options)
  }

  /** Drains, then removes the replica named `name` (see `removeReplica`); `UnknownNodeError` for an unknown name. */
  removeReplica(name: string, options: DrainOptions | undefined): Promise<void> {
    const { cluster, node } = this.#node(name)
    return removeReplica(this.#deps, cluster, node, options)
  }

  /** Sets the weight of the node named `name` (see `setWeight`); `UnknownNodeError` for an unknown name, `ConfigError` for a bad weight. */
  setWeight(name: string, weight: number): void {
    const { cluster, node } = this.#node(name)
    setWeight(cluster, node, weight)
  }

  /** The node named `name` and its cluster; `UnknownNodeError` if there is none. */
  #node(name: string): { cluster: Cluster; node: RouterNode } {
    const found = findNode(this.#deps.clusters, name)
    if (found === undefined) {
      throw new UnknownNodeError(
        name,
        this.#deps.clusters.flatMap((c) => c.nodes.map((n) => n.name)),
      )
    }
    return found
  }
}
