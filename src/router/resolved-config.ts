import type { Balancer } from '../balancer/balancer.js'
import type { ShardResolver } from '../sharding/shard-resolver.js'
import type { Driver, NodeRole } from './driver.js'
import type { TargetSessionAttrs } from './target-session-attrs.js'

/** One node after validation: every default filled in. */
export interface ResolvedNode {
  readonly name: string
  readonly url: string
  readonly role: NodeRole
  readonly weight: number
  readonly pool: Readonly<Record<string, unknown>>
  readonly queryTimeoutMs: number
  readonly connectTimeoutMs: number
}

/** Health-check settings after validation. */
export interface ResolvedHealthCheck {
  readonly enabled: boolean
  readonly intervalMs: number
  readonly timeoutMs: number
  readonly failureThreshold: number
  readonly successThreshold: number
  readonly maxBackoffMs: number
  /** How long probes reuse a node's probe connection, in ms; 0 = a fresh connection per probe. */
  readonly probeConnectionMaxAgeMs: number
}

/** Read-your-writes settings after validation. */
export type ResolvedReadYourWrites =
  | { readonly mode: 'off' }
  | { readonly mode: 'window'; readonly windowMs: number }
  | { readonly mode: 'position'; readonly maxWaitMs: number }

/** Token settings after validation. */
export interface ResolvedTokens {
  /** Signing keys: the first signs, all verify; empty = unsigned tokens. */
  readonly keys: readonly string[]
}

/** One cluster (the only one, `default`, or a shard) after validation. */
export interface ResolvedCluster {
  /** `default` for an unsharded router, else the shard name. */
  readonly name: string
  /** The configured primary; `undefined` when roles are discovered. */
  readonly primary: ResolvedNode | undefined
  /** The configured replicas; every node when roles are discovered. */
  readonly replicas: readonly ResolvedNode[]
  /** Roles come from the probes (`nodes: [...]`). */
  readonly discovery: boolean
  /** Makes this cluster's balancer. */
  readonly balancer: () => Balancer
  /** 0 = lag check off. */
  readonly maxReplicationLagMs: number
  readonly fallbackToPrimary: boolean
  /** What nodes added at runtime inherit (pool options, timeouts). */
  readonly defaults: {
    readonly pool: Readonly<Record<string, unknown>>
    readonly queryTimeoutMs: number
    readonly connectTimeoutMs: number
  }
}

/** Sharding settings after validation. */
export interface ResolvedSharding {
  readonly resolver: ShardResolver
  /** Shard names in configuration order (part of the positional strategies' mapping). */
  readonly shardNames: readonly string[]
  /** Shard of statements with no shard in scope; `undefined` = such statements fail. */
  readonly defaultShard: string | undefined
}

/** The validated, copied and frozen router configuration. */
export interface ResolvedConfig {
  readonly driver: Driver
  /** Every cluster: one (`default`) unless sharded. */
  readonly clusters: readonly ResolvedCluster[]
  /** Whether the router is sharded (`shards` given). */
  readonly sharded: boolean
  /** Sharding settings (with `shards`). */
  readonly sharding: ResolvedSharding | undefined
  /** The router-level balancer factory (shards may override it). */
  readonly balancer: () => Balancer
  readonly healthCheck: ResolvedHealthCheck
  /** 0 = lag check off. */
  readonly maxReplicationLagMs: number
  readonly fallbackToPrimary: boolean
  readonly readYourWrites: ResolvedReadYourWrites
  readonly tokens: ResolvedTokens
  readonly retryReads: boolean
  /** The statement classifier (`classify` option), if on. */
  readonly classify: ((sql: string) => 'read' | 'write') | undefined
  /** The `target_session_attrs` of a multi-host `url` (the default scope of `router.pool()`); `undefined` when not given. */
  readonly targetSessionAttrs: TargetSessionAttrs | undefined
  /** Passwords found in the configured URLs (and the token secrets), to redact from any text the router prints. */
  readonly secrets: readonly string[]
}
