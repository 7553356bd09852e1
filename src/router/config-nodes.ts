import { ConfigError } from '../errors/config-error.js'
import {
  checkKeys,
  checkMs,
  checkNumber,
  checkObject,
  checkPool,
  describe,
  type PlainObject,
  type PoolChecker,
  quote,
} from './config-checks.js'
import type { Dialect, NodeRole } from './driver.js'
import { expectedUrl, parseNodeUrl } from './node-url.js'
import type { NodeConfig } from './options.js'
import type { ResolvedNode } from './resolved-config.js'

/** The keys of a node object, kept in step with {@link NodeConfig} by the compiler. */
const NODE_KEYS = Object.keys({
  name: 1,
  url: 1,
  weight: 1,
  pool: 1,
  queryTimeoutMs: 1,
  connectTimeoutMs: 1,
} satisfies Record<keyof NodeConfig, 1>)

const NAME = /^[A-Za-z0-9_.:-]{1,64}$/

/** Router-level values a node inherits. */
export interface NodeDefaults {
  readonly pool: Readonly<PlainObject>
  readonly queryTimeoutMs: number
  readonly connectTimeoutMs: number
}

/** The validated nodes of one cluster. */
export interface ResolvedClusterNodes {
  /** The configured primary; `undefined` when roles are discovered (`nodes`). */
  readonly primary: ResolvedNode | undefined
  /** The configured replicas, or every node when roles are discovered. */
  readonly replicas: readonly ResolvedNode[]
  /** Roles come from the probes (`nodes: [...]`). */
  readonly discovery: boolean
}

/** Joins a path prefix and a key: `('', 'primary')` → `primary`, `('shards.s0', 'primary')` → `shards.s0.primary`. */
function at(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}.${key}`
}

/**
 * Validates one cluster's nodes: either `primary` (+ `replicas`) or `nodes` (roles discovered by
 * the probes). URLs must suit the driver's dialect, names must be unique across the router
 * (defaults `primary`, `replica1`... or `node1`..., prefixed by `namePrefix` in a shard), no server
 * may be configured twice, node settings are merged over the router-level ones. Each node is
 * copied and frozen.
 *
 * @example
 * ```ts
 * resolveClusterNodes({ primary: 'postgres://app@db1/app', replicas: ['postgres://app@db2/app'] }, '', '', 'postgres', defaults, new NodeRegistry()).replicas[0].name // 'replica1'
 * ```
 */
export function resolveClusterNodes(
  spec: { primary?: unknown; replicas?: unknown; nodes?: unknown },
  prefix: string,
  namePrefix: string,
  dialect: Dialect,
  defaults: NodeDefaults,
  registry: NodeRegistry,
  checkPoolOptions?: PoolChecker,
): ResolvedClusterNodes {
  if (spec.nodes !== undefined) {
    for (const key of ['primary', 'replicas'] as const) {
      if (spec[key] !== undefined) {
        throw new ConfigError(
          at(prefix, key),
          'not allowed with "nodes": give either nodes (roles discovered by the probes) or primary and replicas',
        )
      }
    }
    const list = spec.nodes
    if (!Array.isArray(list) || list.length === 0) {
      throw new ConfigError(
        at(prefix, 'nodes'),
        `expected a non-empty array of URLs or node objects, got ${describe(list)}`,
      )
    }
    const nodes = list.map((n, i) =>
      resolveNode(
        n,
        `${at(prefix, 'nodes')}[${i}]`,
        `${namePrefix}node${i + 1}`,
        'replica',
        dialect,
        defaults,
        registry,
        checkPoolOptions,
      ),
    )
    return { primary: undefined, replicas: Object.freeze(nodes), discovery: true }
  }
  if (spec.primary === undefined) {
    throw new ConfigError(
      at(prefix, 'primary'),
      `required; expected ${expectedUrl(dialect)} or a node object { url, ... } (or "nodes" to discover roles)`,
    )
  }
  const primary = resolveNode(
    spec.primary,
    at(prefix, 'primary'),
    `${namePrefix}primary`,
    'primary',
    dialect,
    defaults,
    registry,
    checkPoolOptions,
  )
  const replicas: ResolvedNode[] = []
  const list = spec.replicas
  if (list !== undefined) {
    if (!Array.isArray(list)) {
      throw new ConfigError(
        at(prefix, 'replicas'),
        `expected an array of URLs or node objects, got ${describe(list)}`,
      )
    }
    for (let i = 0; i < list.length; i++) {
      const path = `${at(prefix, 'replicas')}[${i}]`
      replicas.push(
        resolveNode(
          list[i],
          path,
          `${namePrefix}replica${i + 1}`,
          'replica',
          dialect,
          defaults,
          registry,
          checkPoolOptions,
        ),
      )
    }
  }
  return { primary, replicas: Object.freeze(replicas), discovery: false }
}

/**
 * Validates one node (a URL string or a node object) into a frozen `ResolvedNode`, registering its
 * name and server in `registry` (duplicates throw `ConfigError` naming both paths).
 */
export function resolveNode(
  value: unknown,
  path: string,
  defaultName: string,
  role: NodeRole,
  dialect: Dialect,
  defaults: NodeDefaults,
  registry: NodeRegistry,
  checkPoolOptions?: PoolChecker,
): ResolvedNode {
  let config: PlainObject = {}
  let urlPath = path
  if (typeof value === 'string') {
    config = { url: value }
  } else {
    config = checkObject(
      value,
      path,
      `${expectedUrl(dialect)} or a node object { url, name?, weight?, pool?, ... }`,
    )
    checkKeys(config, path, NODE_KEYS)
    urlPath = `${path}.url`
  }
  const url = parseNodeUrl(config.url, urlPath, dialect)
  const explicit = config.name !== undefined
  const name = explicit ? checkName(config.name, `${path}.name`) : defaultName
  registry.addName(name, path, explicit)
  registry.addServer(url.server, path, urlPath)
  for (const secret of url.secrets) registry.secrets.add(secret)

  const weight = checkNumber(config.weight, `${path}.weight`, { min: 0, default: 1 })
  const pool = { ...defaults.pool, ...checkPool(config.pool, `${path}.pool`, checkPoolOptions) }
  // A password given in pool options is a secret too: redacted from error messages and events.
  for (const [key, value] of Object.entries(pool))
    if (/password/i.test(key) && typeof value === 'string' && value !== '') registry.secrets.add(value)
  const queryTimeoutMs = checkMs(
    config.queryTimeoutMs,
    `${path}.queryTimeoutMs`,
    0,
    false,
    defaults.queryTimeoutMs,
  )
  const connectTimeoutMs = checkMs(
    config.connectTimeoutMs,
    `${path}.connectTimeoutMs`,
    0,
    true,
    defaults.connectTimeoutMs,
  )
  return Object.freeze({
    name,
    url: url.text,
    role,
    weight,
    pool: Object.freeze(pool),
    queryTimeoutMs,
    connectTimeoutMs,
  })
}

function checkName(value: unknown, path: string): string {
  if (typeof value === 'string' && NAME.test(value)) return value
  throw new ConfigError(
    path,
    `expected a name of 1 to 64 characters from [A-Za-z0-9_.:-], got ${describe(value)}`,
  )
}

/** Tracks names and servers already taken (across shards), to report duplicates with both paths; collects passwords. */
export class NodeRegistry {
  readonly #names = new Map<string, { path: string; explicit: boolean }>()
  readonly #servers = new Map<string, string>()
  readonly secrets = new Set<string>()

  addName(name: string, path: string, explicit: boolean): void {
    const earlier = this.#names.get(name)
    if (earlier === undefined) {
      this.#names.set(name, { path, explicit })
      return
    }
    // At least one of the two was named explicitly (default names never clash): blame that one.
    if (explicit) {
      const owner = earlier.explicit ? `used by ${earlier.path}.name` : `the default name of ${earlier.path}`
      throw new ConfigError(`${path}.name`, `duplicate name ${quote(name)}, already ${owner}`)
    }
    throw new ConfigError(
      `${earlier.path}.name`,
      `duplicate name ${quote(name)}: it is also the default name of ${path}; choose another name`,
    )
  }

  addServer(server: string, path: string, urlPath: string): void {
    const earlier = this.#servers.get(server)
    if (earlier !== undefined) {
      throw new ConfigError(
        urlPath,
        `same server as ${earlier} (${server}); each node must be a distinct server`,
      )
    }
    this.#servers.set(server, path)
  }
}
