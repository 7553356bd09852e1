import type { Balancer, BalancerName } from '../balancer/balancer.js'
import type { ShardLookup } from '../sharding/lookup-resolver.js'
import type { ShardRange } from '../sharding/range-resolver.js'
import type { ShardingStrategyName, ShardKey, ShardResolver } from '../sharding/shard-resolver.js'
import type { AnyDriver, Driver } from './driver.js'

/**
 * One database endpoint. A plain string is shorthand for `{ url }`.
 *
 * @example
 * ```ts
 * { name: 'r1', url: 'postgres://app@10.0.0.2:5432/app', weight: 2, pool: { max: 20 } }
 * ```
 */
export interface NodeConfig {
  /** Unique name shown in stats and events. Default: `primary` for the primary, `replica1`, `replica2`... for replicas. */
  name?: string
  /** Connection URL, e.g. `postgres://user:password@host:5432/db` or `mysql://user:password@host:3306/db`. Required. */
  url: string
  /** Share of reads for `weighted-round-robin` (and `random`), >= 0; 0 drains the node. Default: 1. */
  weight?: number
  /** Options passed to the driver's pool for this node, merged over the router-level `pool`. Default: `{}`. */
  pool?: Record<string, unknown>
  /** Bound of one statement on this node, in ms; cancelled on the server when it passes (`QueryTimeoutError`). Default: the router's `queryTimeoutMs`. */
  queryTimeoutMs?: number
  /** Bound of opening one connection to this node, in ms. Default: the router's `connectTimeoutMs`. */
  connectTimeoutMs?: number
}

/** Active health checking. */
export interface HealthCheckConfig {
  /** Time between two probes of an up node, in ms. Default: 1000. */
  intervalMs?: number
  /** Hard deadline of one probe, connecting included, in ms; must be below `intervalMs`. Default: 500. */
  timeoutMs?: number
  /** Consecutive failures (probes or connection errors of real queries) that mark a node down. Default: 2. */
  failureThreshold?: number
  /** Consecutive successful probes that bring a down node back. Default: 1. */
  successThreshold?: number
  /** Cap of the exponential backoff between probes of a down node, in ms. Default: 10 × `intervalMs`. */
  maxBackoffMs?: number
  /**
   * Probes reuse one connection per node for up to this long, in ms, then open a fresh one (which
   * also checks that the node accepts new connections); a connection that failed is never reused.
   * `0`: a fresh connection for every probe. Default: 60000.
   */
  probeConnectionMaxAgeMs?: number
}

/** Read-your-writes: after a session writes, its reads see the write. */
export type ReadYourWritesConfig =
  | false
  | {
      /** After the session writes, its reads go to the primary for `windowMs`. */
      mode: 'window'
      /** Default: 2000. */
      windowMs?: number
    }
  | {
      /** After the session writes, its reads go only to replicas that replayed the write's position. */
      mode: 'position'
      /**
       * How long a read may wait for a chosen replica to catch up before going to the primary, in
       * ms. Default: 0 (no wait): a read no replica is known to have replayed goes to the primary at
       * once, and the replica's replay position is read in the background (one read per replica
       * at a time and per 10 ms, shared by every session) for the next reads; on PostgreSQL the
       * session's first read after a write goes to the primary while the write's position is read
       * beside it. Above 0 the first read waits for that position, and the read checks the
       * least-lagged replica on the connection that then runs it (one more round trip), waiting up
       * to this long: fewer reads on the primary, slower first reads.
       */
      maxWaitMs?: number
    }

/**
 * Signing of consistency tokens (`router.consistencyToken()`, the HTTP integrations' header or
 * cookie). Unsigned tokens are already validated (a forged one cannot hold reads on the primary
 * beyond what the primary really reached); signed ones cannot be forged or altered at all, which
 * also stops a client from claiming a write it never made (`window` mode).
 *
 * @example
 * ```ts
 * tokens: { secret: process.env.TOKEN_SECRET! }
 * tokens: { secret: [process.env.NEW_SECRET!, process.env.OLD_SECRET!] } // rotation: new signs, both verify
 * ```
 */
export interface TokensConfig {
  /**
   * HMAC-SHA256 key(s), each at least 16 characters (32 random bytes, e.g. base64, recommended).
   * With a list, the first signs and every one verifies, so keys rotate without a flag day:
   * deploy `[old, new]` everywhere, then `[new, old]`, then `[new]`. Once set, unsigned and altered
   * tokens are ignored (an empty session) and counted in `stats().tokens`. Every instance that
   * shares tokens needs the same keys. Required.
   */
  secret: string | readonly string[]
}

/**
 * How keys map to shards (with `shards`).
 *
 * @example
 * ```ts
 * sharding: { strategy: 'java-hashcode' }                        // Math.floorMod(key.hashCode(), n)
 * sharding: { strategy: 'range', ranges: [{ shard: 's0', to: 1_000_000 }, { shard: 's1', from: 1_000_000 }] }
 * sharding: { strategy: 'lookup', lookup: async (tenant) => directory.get(tenant) }
 * ```
 */
export interface ShardingConfig {
  /** `'hash'` (MurmurHash3 of the key's UTF-8 bytes mod n), `'jump'` (jump consistent hash), `'range'`, `'java-hashcode'`, `'lookup'`, a function `(key, shardNames) => name`, or a `ShardResolver`. Required. */
  strategy:
    | ShardingStrategyName
    | 'lookup'
    | ShardResolver
    | ((key: ShardKey, shardNames: readonly string[]) => string | Promise<string>)
  /** For `'range'`: half-open ranges `[from, to)` per shard. */
  ranges?: readonly ShardRange[]
  /** For `'java-hashcode'`: the Java type of number keys (`'long'` by default, `'int'` or `'auto'`). */
  numberAs?: 'int' | 'long' | 'auto'
  /** For `'lookup'`: a Map, an object or a (sync or async) function from key to shard name. */
  lookup?: ShardLookup
  /** Shard of statements with no shard in scope. Default: none — such statements fail with `ShardKeyRequiredError`. */
  defaultShard?: string
}

/** One shard of a sharded router: a full cluster with optional overrides of the router-level options. */
export interface ShardConfig {
  primary?: string | NodeConfig
  replicas?: ReadonlyArray<string | NodeConfig>
  nodes?: ReadonlyArray<string | NodeConfig>
  balancer?: BalancerName | Balancer | (() => Balancer)
  maxReplicationLagMs?: number
  fallbackToPrimary?: boolean
  pool?: Record<string, unknown>
  queryTimeoutMs?: number
  connectTimeoutMs?: number
}

/**
 * Options of `createRouter`. Every option but `driver` and `primary` (or `nodes`, `url`, `shards`) has a default. `D` is the
 * driver's type, which the router takes (`router.pool()` is a `pg.Pool` with `pgDriver()`).
 *
 * @example
 * ```ts
 * createRouter({ driver: pgDriver(), primary: process.env.PRIMARY_URL!, replicas: [process.env.REPLICA_URL!] })
 * ```
 */
export interface RouterOptions<D extends AnyDriver = Driver> {
  /** The database driver, e.g. `pgDriver()` from `routemate/pg`. Required. */
  driver: D
  /** The primary (writes, transactions, fallback reads). Required unless `nodes`, `url` or `shards` is given. */
  primary?: string | NodeConfig
  /** Read replicas. Default: `[]` (everything goes to the primary). */
  replicas?: ReadonlyArray<string | NodeConfig>
  /**
   * Instead of `primary` and `replicas`: the cluster's nodes without roles. The probes find which
   * one is the primary (and notice when another is promoted: `primary:changed`). Until a primary
   * is known, writes fail with `PrimaryUnavailableError`. Default names: `node1`, `node2`...
   * Needs the probes: not allowed with `healthCheck: false`.
   */
  nodes?: ReadonlyArray<string | NodeConfig>
  /**
   * Instead of `primary`/`replicas`/`nodes`: one libpq-style multi-host URL listing every server
   * of the cluster, in any order (`postgres://app:pw@db1:5432,db2:5432,db3:5432/app`; `mysql://`
   * and `mariadb://` alike). Each host becomes a node named `host:port` whose role the probes
   * discover, as with `nodes`: the primary is found and followed on promotion, the others serve
   * reads. A host without a port gets the dialect's default port (5432, 3306) or libpq's `port=`
   * parameter (one port, or one per host); IPv6 addresses in brackets; one user info for every
   * host (percent-encode reserved characters in the password); other query parameters (`sslmode`,
   * `application_name`...) apply to every node. `target_session_attrs` (`any`, `read-write`,
   * `primary`, `read-only`, `prefer-standby`, `standby`) sets the default scope of
   * `router.pool()` (see the `TargetSessionAttrs` type); `router.query` is not affected. The router's
   * `pool`, `queryTimeoutMs` and `connectTimeoutMs` apply to every node, each with weight 1
   * (`router.setWeight('db2:5432', 2)` changes one); for per-node settings use `nodes`. Not with
   * `shards`; needs the probes (not with `healthCheck: false`).
   *
   * @example
   * ```ts
   * createRouter({ driver: pgDriver(), url: 'postgres://app:pw@db1,db2,db3/app?target_session_attrs=prefer-standby' })
   * ```
   */
  url?: string
  /**
   * A sharded router: named clusters, each its own primary and replicas (or `nodes`), with
   * optional per-shard `balancer`, `maxReplicationLagMs`, `fallbackToPrimary`, `pool`,
   * `queryTimeoutMs`, `connectTimeoutMs`. Node names default to `SHARD.primary`,
   * `SHARD.replica1`... Requires `sharding`.
   */
  shards?: Readonly<Record<string, ShardConfig>>
  /** How keys map to shards; required with `shards`. */
  sharding?: ShardingConfig
  /** How reads are spread over replicas: a built-in name, a `Balancer`, or a factory of one (one instance per cluster). Default: `'round-robin'`. */
  balancer?: BalancerName | Balancer | (() => Balancer)
  /** Active health checks, or `false` to turn them off (passive detection stays on). Defaults: see {@link HealthCheckConfig}. */
  healthCheck?: HealthCheckConfig | false
  /**
   * Replicas further behind the primary than this (ms) are not used for reads. `0` turns the limit
   * off; a replica whose probe reports replication stopped (`replicating: false`) is excluded
   * whatever this says (`node:lagging` with `maxLagMs: 0`). Default: 5000.
   */
  maxReplicationLagMs?: number
  /** Reads go to the primary (read-only) when no replica is usable; when `false` they fail with `NoHealthyReplicaError`. Default: `true`. */
  fallbackToPrimary?: boolean
  /**
   * Read-your-writes per session (`router.session`, `withConsistencyToken`, one session per HTTP
   * request with the HTTP integrations). Default: `{ mode: 'position', maxWaitMs: 0 }`: a
   * session's write costs no round trip (MariaDB/MySQL: its GTID comes with the reply;
   * PostgreSQL: a stamp, the position read lazily and shared, beside the session's first read
   * after the write, which goes to the primary), its reads go to a replica known to have replayed
   * it, else to the primary (no check or wait of their own); statements outside sessions
   * cost nothing. `false` turns it off (sessions then route nothing; the HTTP integrations refuse
   * a token transport).
   */
  readYourWrites?: ReadYourWritesConfig
  /** Signing of consistency tokens. Default: none (unsigned tokens, validated). */
  tokens?: TokensConfig
  /**
   * Statement classifier: outside any scope (or in a session/shard scope without `readOnly` or
   * `primary`), statements proven to be plain reads (SELECT, read-only WITH, SHOW, EXPLAIN
   * without ANALYZE...) go to replicas; anything with a locking clause, a data-modifying CTE,
   * `SELECT ... INTO`, a sequence/lock/session function, a listed `writeFunctions` entry, or
   * anything not understood goes to the primary. Costs about 1 µs per classified statement.
   * Default: `false`.
   */
  classify?: boolean | { writeFunctions?: readonly string[] }
  /**
   * Retry once on another node a read that failed with a connection error: a statement outside
   * transactions, the checkout of a read connection (a read-only transaction, `router.pool()` in a
   * `readOnly` scope), or a read-only transaction's BEGIN on a replica. Statements inside a
   * transaction are never retried; a BEGIN on the primary is retried on a fresh connection whatever
   * this says. Default: `true`.
   */
  retryReads?: boolean
  /**
   * Bound of any single statement, in ms; `0` = none. Default: 0. When it passes, the statement is
   * cancelled on the server (PostgreSQL cancel request, MySQL/MariaDB `KILL QUERY`) and rejects
   * with `QueryTimeoutError` once the server confirmed it (its connection is then reused); if that
   * takes longer than `connectTimeoutMs`, the connection is closed instead. A timeout never counts
   * against the node's health and is never retried: it makes the node be probed at once.
   */
  queryTimeoutMs?: number
  /** Bound of opening one pooled connection, in ms. Default: 5000. */
  connectTimeoutMs?: number
  /** Options passed to every node's driver pool (e.g. `{ max: 10 }` for `pg`). Default: `{}`. */
  pool?: Record<string, unknown>
}
