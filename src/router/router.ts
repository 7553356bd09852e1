import { AsyncLocalStorage } from 'node:async_hooks'
import { Session } from '../consistency/session.js'
import { TokenAudit } from '../consistency/token-audit.js'
import { TokenCodec } from '../consistency/token-codec.js'
import { HealthMonitor } from '../health/health-monitor.js'
import type { ShardKey } from '../sharding/shard-resolver.js'
import { awaitReady, type ReadyOptions } from './await-ready.js'
import { Cluster } from './cluster.js'
import { resolveConfig } from './config.js'
import { Dispatch } from './dispatch.js'
import type { AnyDriver, Driver, DriverExtrasOf, DriverPoolOf, DriverSqlOf, QueryResult } from './driver.js'
import { RouterEmitter, type RouterEventListener, type RouterEventName } from './events.js'
import { routerFacadeHost } from './facade-host.js'
import type { NodeConfig, RouterOptions } from './options.js'
import { ReadPath } from './read-path.js'
import type { ResolvedConfig } from './resolved-config.js'
import type { RouterCore } from './router-core.js'
import type { QueryListener } from './router-node.js'
import { callInScope, type Scope, withSession } from './scope.js'
import {
  type AllShardsOptions,
  type AllShardsResult,
  type QueryAllShardsOptions,
  type ShardHandle,
  ShardOps,
} from './sharding-ops.js'
import type { Statement } from './statement.js'
import { type RouterStats, statsOf } from './stats.js'
import { type DrainOptions, RouterTopology } from './topology.js'
import type { Transaction } from './transaction-context.js'
import { type TransactionOptions, TransactionRunner } from './transactions.js'
import { runOnPrimary } from './write-path.js'

export type { ReadyOptions } from './await-ready.js'
export type { AllShardsOptions, AllShardsResult, QueryAllShardsOptions, ShardHandle } from './sharding-ops.js'
export type { TransactionOptions } from './transactions.js'

/** Options of `router.close`. */
export interface CloseOptions {
  /** How long to wait for in-flight queries before aborting them, in ms. Default: 5000. */
  timeoutMs?: number
}

/**
 * The routing scope of the caller (`undefined` outside every scope) of a router: for integrations
 * that must carry a caller's scope across a library's own scheduling (see `routemate/prisma`).
 * Internal: not exported from the package.
 */
export let currentScopeOf: (router: Router<AnyDriver>) => Scope | undefined

/**
 * Routes each query to the right database: writes and transactions to the primary, reads in a
 * `readOnly` scope to a healthy, fresh-enough replica. Made by {@link createRouter}.
 *
 * `D` is the driver's type, taken from the `driver` option: `router.pool()` has the driver's pool
 * type (`pg.Pool` with `pgDriver()`, a mysql2 pool with `mysql2Driver()`) and `router.query`
 * results its result fields (`fields`, `command`; `insertId`, `affectedRows`). A plain `Router`
 * (any driver) is what decorators, middleware and the NestJS module take.
 *
 * @example
 * ```ts
 * import type { PgDriver } from 'routemate/pg'
 * const router: Router<PgDriver> = createRouter({ driver: pgDriver(), primary: PRIMARY_URL })
 * const db = drizzle({ client: router.pool() })                     // a pg.Pool
 * ```
 */
export class Router<D extends AnyDriver = Driver> {
  readonly #config: ResolvedConfig
  readonly #driver: Driver
  readonly #events = new RouterEmitter()
  readonly #als = new AsyncLocalStorage<Scope>()

  static {
    currentScopeOf = (router) => router.#als.getStore()
  }
  readonly #queryListeners: QueryListener[] = []
  readonly #clusters: readonly Cluster[]
  /** The cluster of statements with no shard in scope (the only one when unsharded). */
  readonly #default: Cluster | undefined
  readonly #monitor: HealthMonitor
  readonly #ready: Promise<void>
  /** What the modules below share of this router. */
  readonly #core: RouterCore
  readonly #reads: ReadPath
  /** Statement routing by scope (`query`, `readOnly`, `primary`). */
  readonly #dispatch: Dispatch
  readonly #transactions: TransactionRunner
  readonly #shards: ShardOps
  readonly #topology: RouterTopology
  readonly #tokenAudit: TokenAudit
  readonly #tokens: TokenCodec
  /** Whether `close()` was called: written by `close()` only, read by the modules (a plain field: `query` checks it). */
  readonly #lifecycle: { closed: boolean } = { closed: false }
  #closing: Promise<void> | undefined
  #facade: unknown

  constructor(options: RouterOptions<D>) {
    this.#config = resolveConfig(options as RouterOptions)
    const config = this.#config
    this.#driver = config.driver
    this.#clusters = Object.freeze(
      config.clusters.map(
        (c) => new Cluster(c, config.driver, config.healthCheck, this.#events, this.#queryListeners),
      ),
    )
    const byName = new Map(this.#clusters.map((c) => [c.name, c]))
    const defaultShard = config.sharding?.defaultShard
    this.#default = config.sharded
      ? defaultShard === undefined
        ? undefined
        : byName.get(defaultShard)
      : this.#clusters[0]
    this.#monitor = new HealthMonitor(this.#clusters, config, this.#events)
    const lifecycle = this.#lifecycle
    this.#core = {
      config,
      driver: config.driver,
      events: this.#events,
      als: this.#als,
      monitor: this.#monitor,
      clusters: this.#clusters,
      byName,
      defaultCluster: this.#default,
      get closed() {
        return lifecycle.closed
      },
    }
    this.#reads = new ReadPath(this.#core)
    const core = this.#core
    this.#dispatch = new Dispatch(
      this.#als,
      this.#default,
      this.#reads,
      (cluster, scope, sql, params, map) => runOnPrimary(core, cluster, scope, sql, params, map),
      config.classify,
      lifecycle,
    )
    this.#transactions = new TransactionRunner(this.#core, this.#reads)
    this.#shards = new ShardOps({
      als: this.#als,
      byName,
      sharding: config.sharding,
      dispatch: this.#dispatch,
      transactions: this.#transactions,
    })
    this.#topology = new RouterTopology({
      clusters: this.#clusters,
      byName,
      defaultCluster: this.#default,
      shardNames: this.#shards.names,
      dialect: config.driver.dialect,
      checkPoolOptions: config.driver.checkPoolOptions?.bind(config.driver),
      monitor: this.#monitor,
      events: this.#events,
      lifecycle,
    })
    this.#tokenAudit = new TokenAudit((report) => this.#events.emit('token:rejected', report))
    this.#tokens = new TokenCodec({
      mode: config.readYourWrites.mode,
      keys: config.tokens.keys,
      clusters: new Map(this.#clusters.map((c) => [c.name, c.primaryPosition])),
      reached: (a, b) => config.driver.positionReached(a, b),
      audit: this.#tokenAudit,
    })
    this.#ready = this.#monitor.start()
  }

  /**
   * Waits for the first health probes.
   *
   * `ready()` resolves once the first probe of every configured node has finished — succeeded,
   * failed, or given up at `healthCheck.timeoutMs` — so about `healthCheck.timeoutMs` after
   * `createRouter` at most. It never rejects: it resolves even when no node is reachable (then
   * writes fail with `PrimaryUnavailableError`, and `stats()` says why). Replicas whose first probe
   * succeeded take reads from then on; until a node's first probe succeeds it gets no reads.
   * With `healthCheck: false` there are no startup probes and it resolves at once.
   *
   * `ready({ timeoutMs })` fails fast at startup: it also waits, up to `timeoutMs`, until the
   * primary of every cluster has passed a probe, and rejects with `RouterNotReadyError` (every
   * node's state and last error, URLs redacted) if one has not by then. With `healthCheck: false`
   * it probes the primaries itself.
   */
  ready(options?: ReadyOptions): Promise<void> {
    if (options === undefined) return this.#ready
    return awaitReady(this.#core, this.#ready, options)
  }

  /**
   * Runs one statement, routed by the current scope: inside a transaction on its connection; in a
   * `readOnly` scope on a replica; otherwise on the primary. Resolves to `{ rows, rowCount, ... }`.
   */
  query<Row = Record<string, unknown>>(
    sql: Statement,
    params?: readonly unknown[],
  ): Promise<QueryResult<Row> & DriverExtrasOf<D>> {
    return this.#dispatch.query(sql, params) as Promise<QueryResult<Row> & DriverExtrasOf<D>>
  }

  /** Runs `fn` in a read-only scope: its reads go to replicas; a write throws `ReadOnlyViolationError`. */
  readOnly<T>(fn: () => T): T {
    return this.#dispatch.readOnly(fn)
  }

  /** Runs `fn` in a primary scope: everything inside, reads included, goes to the primary. */
  primary<T>(fn: () => T): T {
    return this.#dispatch.primary(fn)
  }

  /**
   * Runs `fn` in a read-your-writes session (usually one request or one user): after the session
   * writes, its reads see the write (see the `readYourWrites` option). Nested in another session,
   * it joins it.
   */
  session<T>(fn: () => T): T {
    const parent = this.#als.getStore()
    if (parent?.session !== undefined) return fn()
    return this.#als.run(withSession(parent, new Session()), callInScope<T>, fn)
  }

  /**
   * The current session's consistency token: an opaque, URL-safe string to carry in a cookie or a
   * header, so a later request (on any instance) resumes it with `withConsistencyToken`. Signed
   * with `tokens.secret` when set. Until a resumed session writes, the token it was resumed from.
   * `undefined` outside a session.
   */
  consistencyToken(): string | undefined {
    const session = this.#als.getStore()?.session
    return session === undefined ? undefined : this.#tokens.encode(session)
  }

  /**
   * Runs `fn` in a session resumed from a token made by `consistencyToken()` (by this or another
   * instance). Tokens are never trusted: a missing, invalid, oversized or (with `tokens.secret`)
   * unsigned or altered one starts an empty session; a write time in the future and positions
   * the primary has not reached are dropped (checked before the session's first read); every
   * rejection is counted in `stats().tokens` and reported by `token:rejected`. A token can make
   * reads fresher, never hold them on the primary beyond what the primary really reached, never
   * misroute a write.
   */
  withConsistencyToken<T>(token: string | undefined | null, fn: () => T): T {
    const scope = withSession(this.#als.getStore(), this.#tokens.decode(token))
    return this.#als.run(scope, callInScope<T>, fn)
  }

  /**
   * The router's read-your-writes mode (`readYourWrites` option): `'position'` (the default),
   * `'window'`, or `'off'` (`readYourWrites: false`: sessions and their tokens route nothing).
   */
  get readYourWritesMode(): 'off' | 'window' | 'position' {
    return this.#config.readYourWrites.mode
  }

  /**
   * Runs `fn` in a transaction on one connection and commits (or rolls back if it throws).
   * Nested inside another transaction it becomes a savepoint on the same connection: the outermost
   * transaction always wins. A read-only transaction runs `BEGIN READ ONLY` on one replica.
   */
  transaction<T>(
    fn: (tx: Transaction<DriverExtrasOf<D>>) => Promise<T> | T,
    options: TransactionOptions = {},
  ): Promise<T> {
    return this.#transactions.run(fn as (tx: Transaction) => Promise<T> | T, options)
  }

  // ---- sharding (sharding-ops.ts) -------------------------------------------------------------

  /** The names of the shards (`['default']` for an unsharded router), in configuration order. */
  get shardNames(): readonly string[] {
    return this.#shards.names
  }

  /**
   * Resolves to the name of the shard a key maps to: a promise, since a `lookup` resolver may be
   * async (rejects for a key the strategy cannot place, `UnknownShardError` for a name that is
   * not a shard, a `TypeError` on an unsharded router).
   */
  shardFor(key: ShardKey): Promise<string> {
    return this.#shards.shardFor(key)
  }

  /**
   * Runs `fn` in the scope of the shard `key` maps to: every router call inside (queries,
   * `readOnly`, `transaction`, `router.pool()`) goes to that shard's cluster. Nests with the
   * other scopes; inside a transaction, naming another shard throws `CrossShardError`.
   */
  withShard<T>(key: ShardKey, fn: () => Promise<T> | T): Promise<T> {
    return this.#shards.withShard(key, fn)
  }

  /** The router's query API bound to one shard, by name (`UnknownShardError` if there is none). */
  shard(name: string): ShardHandle<DriverExtrasOf<D>> {
    return this.#shards.shard(name) as ShardHandle<DriverExtrasOf<D>>
  }

  /**
   * Runs `fn` once per shard, in parallel (up to `concurrency`), each inside its shard's scope —
   * `router.query`, `router.pool()` and ORMs over it reach that shard, as inside `withShard` —
   * and resolves to the results by shard name. Rejects with a `ShardQueryError` naming the first
   * shard that failed.
   */
  forEachShard<T>(
    fn: (shard: ShardHandle<DriverExtrasOf<D>>) => Promise<T> | T,
    options: AllShardsOptions = {},
  ): Promise<Record<string, T>> {
    return this.#shards.forEachShard(fn as (shard: ShardHandle) => Promise<T> | T, options)
  }

  /**
   * Runs one statement on every shard (routed by the current scope: in a `readOnly` scope, on
   * each shard's replicas) and returns every row tagged with its shard. A shard that fails
   * rejects the whole call (`onError: 'fail'`, the default) or is reported beside the other
   * shards' rows (`'partial'`).
   */
  queryAllShards<Row = Record<string, unknown>>(
    sql: Statement,
    params?: readonly unknown[],
    options: QueryAllShardsOptions = {},
  ): Promise<AllShardsResult<Row>> {
    return this.#shards.queryAllShards<Row>(sql, params, options)
  }

  // ---- runtime topology (topology.ts) ---------------------------------------------------------

  /**
   * Adds a replica at runtime (to `options.shard` in a sharded router). Validated like a
   * configured one (`ConfigError`); resolves with its name after its first probe.
   */
  addReplica(node: string | NodeConfig, options: { shard?: string } = {}): Promise<string> {
    return this.#topology.addReplica(node, options.shard)
  }

  /**
   * Drains a replica: it takes no new queries; in-flight queries and transactions finish (up to
   * `timeoutMs`, then they are aborted); then its pools close, exactly once. It stays in
   * `stats()` as `drained`.
   */
  async drain(name: string, options?: DrainOptions): Promise<void> {
    return this.#topology.drain(name, options)
  }

  /** Drains a replica (see `drain`), then removes it from the router. */
  async removeReplica(name: string, options?: DrainOptions): Promise<void> {
    return this.#topology.removeReplica(name, options)
  }

  /** Changes a node's weight at runtime (used by `weighted-round-robin`, `random`, `least-outstanding`; 0 takes it out of balancing). */
  setWeight(name: string, weight: number): void {
    this.#topology.setWeight(name, weight)
  }

  /**
   * Calls `listener` after every statement a node runs (its node, role, cluster, duration and
   * outcome) — the hook for metrics and tracing. Costs nothing while no listener is registered.
   * Returns the unsubscribe function.
   */
  onQuery(listener: QueryListener): () => void {
    this.#queryListeners.push(listener)
    return () => {
      const i = this.#queryListeners.indexOf(listener)
      if (i >= 0) this.#queryListeners.splice(i, 1)
    }
  }

  /** Subscribes to a router event; returns the unsubscribe function. */
  on<E extends RouterEventName>(event: E, listener: RouterEventListener<E>): () => void {
    return this.#events.on(event, listener)
  }

  /** A snapshot of every node: role, state, lag, in-flight, counts, latency. Passwords redacted. */
  stats(): RouterStats {
    return statsOf(this.#clusters, this.#tokenAudit.stats())
  }

  /**
   * A pool look-alike of the driver's own (a `pg.Pool` for `routemate/pg`) whose `query` and
   * `connect` are routed by the caller's scope, for ORMs and query builders. The same object on
   * every call; its `end()` closes the router. Typed as the driver's pool (`pg.Pool`,
   * `Mysql2RouterPool`) — whatever the context expects, so a mistake is a compile error. `P` is for
   * a router typed as a plain `Router` (any driver, pool type `unknown`): `router.pool<pg.Pool>()`
   * (as in 0.1); a router typed by its driver ignores it.
   */
  pool<P = DriverPoolOf<D>>(): unknown extends DriverPoolOf<D> ? P : DriverPoolOf<D> {
    if (this.#facade === undefined) {
      if (this.#driver.facade === undefined)
        throw new TypeError(`driver "${this.#driver.name}" has no pool facade`)
      this.#facade = this.#driver.facade(routerFacadeHost(this.#core, this.#reads, this, this.#dispatch))
    }
    return this.#facade as unknown extends DriverPoolOf<D> ? P : DriverPoolOf<D>
  }

  /**
   * The router as a postgres.js `sql` (with `postgresDriver()` from `routemate/postgres`): tagged
   * queries, `sql.unsafe`, `sql.begin` (a `router.transaction`) and `sql.reserve`, each routed by
   * the caller's scope, for `drizzle(router.sql())` (drizzle-orm/postgres-js) and
   * kysely-postgres-js. The same object as `router.pool()`. Typed `never` (and throwing a
   * `TypeError`) for a driver without one.
   *
   * @example
   * ```ts
   * const sql = router.sql()
   * const [user] = await router.readOnly(() => sql`select * from users where id = ${id}`)
   * ```
   */
  sql(): DriverSqlOf<D> {
    const facade = this.#driver.facade === undefined ? undefined : (this.pool() as unknown)
    if (typeof facade !== 'function')
      throw new TypeError(
        `router.sql() needs a driver whose pool facade is a tagged-template sql (postgresDriver() from routemate/postgres); driver "${this.#driver.name}" has none`,
      )
    return facade as DriverSqlOf<D>
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.#lifecycle.closed
  }

  /**
   * Stops health checks, lets in-flight queries finish (up to `timeoutMs`, then aborts them) and
   * ends every pool. Idempotent: later calls return the same promise.
   */
  close(options: CloseOptions = {}): Promise<void> {
    if (this.#closing !== undefined) return this.#closing
    this.#lifecycle.closed = true
    this.#monitor.stop()
    const timeoutMs = options.timeoutMs ?? 5000
    this.#closing = (async () => {
      const nodes = this.#clusters.flatMap((c) => c.nodes)
      const deadline = Date.now() + timeoutMs
      while (nodes.some((n) => n.inFlight > 0) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 10))
      }
      for (const n of nodes) n.abortAll()
      await Promise.all(nodes.map((n) => n.end()))
    })()
    return this.#closing
  }
}

/**
 * Creates a router. Validates the options at once (throwing `ConfigError` naming the bad option),
 * opens no connection until the first query or probe, and starts health checks. The router is
 * typed by its driver: `router.pool()` is a `pg.Pool` with `pgDriver()`.
 *
 * @example
 * ```ts
 * import { createRouter } from 'routemate'
 * import { pgDriver } from 'routemate/pg'
 * const router = createRouter({ driver: pgDriver(), primary: PRIMARY_URL, replicas: [R1_URL, R2_URL] })
 * await router.ready()
 * const { rows } = await router.readOnly(() => router.query('SELECT * FROM users WHERE id = $1', [1]))
 * ```
 */
export function createRouter<D extends AnyDriver = Driver>(options: RouterOptions<D>): Router<D> {
  return new Router<D>(options)
}
