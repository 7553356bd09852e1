import { ConfigError } from '../errors/config-error.js'
import type { PoolChecker } from './config-checks.js'
import {
  type NodeDefaults,
  type NodeRegistry,
  type ResolvedClusterNodes,
  resolveNode,
} from './config-nodes.js'
import type { Dialect } from './driver.js'
import { parseMultiHostUrl } from './multi-host-url.js'
import type { TargetSessionAttrs } from './target-session-attrs.js'

/** The nodes of a multi-host `url`, and its `target_session_attrs`. */
export interface ResolvedUrlNodes {
  readonly nodes: ResolvedClusterNodes
  readonly targetSessionAttrs: TargetSessionAttrs | undefined
}

/**
 * Validates the `url` option of an unsharded router: a multi-host URL becomes the cluster's nodes
 * with roles discovered by the probes (as `nodes: [...]`), one per host, named `host:port`, each
 * with the router-level pool options, timeouts and weight 1. `primary`, `replicas` or `nodes`
 * beside it are a `ConfigError` naming that option.
 *
 * @example
 * ```ts
 * resolveUrlNodes({ url: 'postgres://app@db1,db2/app' }, 'postgres', defaults, new NodeRegistry()).nodes.replicas.map((n) => n.name)
 * // ['db1:5432', 'db2:5432']
 * ```
 */
export function resolveUrlNodes(
  options: { url?: unknown; primary?: unknown; replicas?: unknown; nodes?: unknown },
  dialect: Dialect,
  defaults: NodeDefaults,
  registry: NodeRegistry,
  checkPoolOptions?: PoolChecker,
): ResolvedUrlNodes {
  for (const key of ['primary', 'replicas', 'nodes'] as const) {
    if (options[key] !== undefined) {
      throw new ConfigError(
        key,
        'not allowed with "url": give either url (every host of a multi-host URL, roles discovered by the probes) or primary and replicas, or nodes',
      )
    }
  }
  const parsed = parseMultiHostUrl(options.url, 'url', dialect)
  const replicas = parsed.nodes.map((node) =>
    resolveNode(node.url, 'url', node.name, 'replica', dialect, defaults, registry, checkPoolOptions),
  )
  return {
    nodes: Object.freeze({ primary: undefined, replicas: Object.freeze(replicas), discovery: true }),
    targetSessionAttrs: parsed.targetSessionAttrs,
  }
}
