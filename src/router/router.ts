import { AsyncLocalStorage } from 'node:async_hooks'
import { Session } from '../consistency/session.js'
import { CrossShardError } from '../errors/cross-shard-error.js'
import { NoHealthyReplicaError } from '../errors/no-healthy-replica-error.js'
import { PrimaryUnavailableError } from '../errors/primary-unavailable-error.js'
import { ReadOnlyViolationError } from '../errors/read-only-violation-error.js'
import { RouterClosedError } from '../errors/router-closed-error.js'
import { ShardKeyRequiredError } from '../errors/shard-key-required-error.js'
import { ShardQueryError } from '../errors/shard-query-error.js'
import { UnknownShardError } from '../errors/unknown-shard-error.js'
import { HealthMonitor } from '../health/health-monitor.js'
import type { ShardKey } from '../sharding/shard-resolver.js'
import { Cluster } from './cluster.js'
import { resolveConfig } from './config.js'
import type { Driver, IsolationLevel, QueryResult } from './driver.js'
import { RouterEmitter, type RouterEventListener, type RouterEventName } from './events.js'
import type { FacadeHost, ScopedConnection } from './facade-host.js'
import type { NodeConfig, RouterOptions } from './options.js'
import type { ResolvedConfig } from './resolved-config.js'
import type { QueryListener, RouterNode } from './router-node.js'
import { type Scope, withMode } from './scope.js'
import { type ScopedConnectionDeps, scopedConnection } from './scoped-connection.js'
import { isEvidentWrite, leadingKeyword } from './sql-guard.js'
import { classifyError, isNodeFailure, type Statement, textOf, withCallerStack } from './statement.js'
import { type RouterStats, statsOf } from './stats.js'
import * as topology from './topology.js'
import { type Transaction, TransactionContext } from './transaction-context.js'

/** Options of `router.transaction`. */
export interface TransactionOptions {
  /** Run on one replica with `BEGIN READ ONLY`. Default: `true` inside a `readOnly` scope, else `false`. */
  readOnly?: boolean
  /** Isolation level of the transaction. Default: the server's default. */
  isolation?: IsolationLevel
}

/** Options of `router.close`. */
export interface CloseOptions {
  /** How long to wait for in-flight queries before aborting them, in ms. Default: 5000. */
  timeoutMs?: number
}

/**
 * The router's query API bound to one shard (`router.shard(name)`, `forEachShard`).
 *
 * @example
 * ```ts
 * const s1 = router.shard('s1')
 * await s1.readOnly(() => s1.query('SELECT count(*) FROM mails'))
 * ```
 */
export interface ShardHandle {
  /** The shard's name. */
  readonly name: string
  /** `router.query` on this shard. */
  query<Row = Record<string, unknown>>(sql: Statement, params?: readonly unknown[]): Promise<QueryResult<Row>>
  /** `router.readOnly` on this shard. */
  readOnly<T>(fn: () => Promise<T> | T): Promise<T>
  /** `router.primary` on this shard. */
  primary<T>(fn: () => Promise<T> | T): Promise<T>
  /** `router.transaction` on this shard. */
  transaction<T>(fn: (tx: Transaction) => Promise<T> | T, options?: TransactionOptions): Promise<T>
  /** Runs `fn` in this shard's scope (every router call inside goes to this shard). */
  run<T>(fn: () => Promise<T> | T): Promise<T>
}

/** Options of `forEachShard` and `queryAllShards`. */
export interface AllShardsOptions {
  /** How many shards run at once. Default: all of them. */
  concurrency?: number
}

/** Options of `queryAllShards`. */
export interface QueryAllShardsOptions extends AllShardsOptions {
  /** `'fail'` (default): reject with a `ShardQueryError` naming the first shard that failed; `'partial'`: resolve with the other shards' rows and the errors. */
  onError?: 'fail' | 'partial'
}

/** What `queryAllShards` resolves to: every row tagged with its shard, and (with `onError: 'partial'`) the shards that failed. */
export interface AllShardsResult<Row> {
  readonly rows: Array<{ readonly shard: string; readonly row: Row }>
  readonly errors: Array<{ readonly shard: string; readonly error: unknown }>
}

/**
 * Starts a lazy thenable (Drizzle query builders, Prisma's PrismaPromise run only when awaited)
 * inside the current scope: returned unawaited from a scope callback, it would otherwise start
 * at the caller's `await`, after the scope ended.
 */
function startedInScope<T>(value: T): T {
  if (
    value !== null &&
    typeof value === 'object' &&
    !(value instanceof Promise) &&
    typeof (value as { then?: unknown }).then === 'function'
  ) {
    return Promise.resolve(value) as T
  }
  return value
}

/** Calls a scope callback; passed to `AsyncLocalStorage.run` with `fn` as its argument (no closure per scope). */
function callInScope<T>(fn: () => T): T {
  return startedInScope(fn())
}

/** A session's position after a write whose position could not be read: its reads go to the primary. */
const UNKNOWN_POSITION = 'unknown'

/** Leading keywords of statements that do not make a session "have written". */
const READ_KEYWORDS = new Set(['SELECT', 'SHOW', 'EXPLAIN', 'VALUES', 'TABLE', 'DESCRIBE', 'DESC'])

function readOnlyError(node: string, cause?: unknown): ReadOnlyViolationError {
  return cause === undefined
    ? new ReadOnlyViolationError(
        `write statement rejected in a read-only scope (before sending it to "${node}")`,
      )
    : new ReadOnlyViolationError(`write statement rejected by "${node}" in a read-only scope`, { cause })
}

/**
 * Routes each query to the right database: writes and transactions to the primary, reads in a
 * `readOnly` scope to a healthy, fresh-enough replica. Made by {@link createRouter}.
 */
export class Router {
  readonly #config: ResolvedConfig
  readonly #driver: Driver
  readonly #events = new RouterEmitter()
  readonly #als = new AsyncLocalStorage<Scope>()
  readonly #queryListeners: QueryListener[] = []
  /** What the pool facade's scoped connections use of the router (made once, not per checkout). */
  readonly #scopedDeps: ScopedConnectionDeps
  readonly #clusters: readonly Cluster[]
  /** The cluster of statements with no shard in scope (the only one when unsharded). */
  readonly #default: Cluster | undefined
  readonly #byName: ReadonlyMap<string, Cluster>
  readonly #monitor: HealthMonitor
  readonly #ready: Promise<void>
  #closed = false
  #closing: Promise<void> | undefined
  #facade: unknown

  constructor(options: RouterOptions) {
    this.#config = resolveConfig(options)
    const config = this.#config
    this.#driver = config.driver
    this.#scopedDeps = {
      driver: config.driver,
      check: (text, node, readOnly) => {
        if (readOnly && isEvidentWrite(text)) throw readOnlyError(node.name)
      },
      failed: (c, n, err, read) => this.#failed(c, n, err, read),
    }
    this.#clusters = Object.freeze(
      config.clusters.map(
        (c) => new Cluster(c, config.driver, config.healthCheck, this.#events, this.#queryListeners),
      ),
    )
    this.#byName = new Map(this.#clusters.map((c) => [c.name, c]))
    const defaultShard = config.sharding?.defaultShard
    this.#default = config.sharded
      ? defaultShard === undefined
        ? undefined
        : this.#byName.get(defaultShard)
      : this.#clusters[0]
    this.#monitor = new HealthMonitor(this.#clusters, config, this.#events)
    this.#ready = this.#monitor.start()
  }

  /** Resolves once the first health probe of every node is done (at once when health checks are off). */
  ready(): Promise<void> {
    return this.#ready
  }

  /**
   * Runs one statement, routed by the current scope: inside a transaction on its connection; in a
   * `readOnly` scope on a replica; otherwise on the primary. Resolves to `{ rows, rowCount, ... }`.
   */
  query<Row = Record<string, unknown>>(
    sql: Statement,
    params?: readonly unknown[],
  ): Promise<QueryResult<Row>> {
    if (this.#closed) return Promise.reject(new RouterClosedError())
    const scope = this.#als.getStore()
    if (scope?.tx !== undefined) return scope.tx.query<Row>(sql, params)
    const cluster = scope?.cluster ?? this.#default
    if (cluster === undefined) return Promise.reject(this.#noShard())
    if (scope?.mode === 'read') return this.#read(cluster, scope, sql, params) as Promise<QueryResult<Row>>
    const classify = this.#config.classify
    if (classify !== undefined && scope?.mode !== 'primary' && classify(textOf(sql)) === 'read') {
      return this.#read(cluster, withMode(scope, 'read'), sql, params) as Promise<QueryResult<Row>>
    }
    return this.#onPrimary(cluster, scope, sql, params) as Promise<QueryResult<Row>>
  }

  /** Runs `fn` in a read-only scope: its reads go to replicas; a write throws `ReadOnlyViolationError`. */
  readOnly<T>(fn: () => T): T {
    return this.#als.run(withMode(this.#als.getStore(), 'read'), callInScope<T>, fn)
  }

  /** Runs `fn` in a primary scope: everything inside, reads included, goes to the primary. */
  primary<T>(fn: () => T): T {
    return this.#als.run(withMode(this.#als.getStore(), 'primary'), callInScope<T>, fn)
  }

  /**
   * Runs `fn` in a read-your-writes session (usually one request or one user): after the session
   * writes, its reads see the write (see the `readYourWrites` option). Nested in another session,
   * it joins it.
   */
  session<T>(fn: () => T): T {
    const parent = this.#als.getStore()
    if (parent?.session !== undefined) return fn()
    return this.#als.run(this.#withSession(parent, new Session()), callInScope<T>, fn)
  }

  /**
   * The current session's consistency token: an opaque, URL-safe string to carry in a cookie or a
   * header, so a later request (on any instance) resumes it with `withConsistencyToken`.
   * `undefined` outside a session.
   */
  consistencyToken(): string | undefined {
    return this.#als.getStore()?.session?.toToken()
  }

  /**
   * Runs `fn` in a session resumed from a token made by `consistencyToken()`. An invalid or
   * missing token starts an empty session (it can make reads less fresh, never misroute a write).
   */
  withConsistencyToken<T>(token: string | undefined | null, fn: () => T): T {
    const scope = this.#withSession(this.#als.getStore(), Session.fromToken(token))
    return this.#als.run(scope, callInScope<T>, fn)
  }

  /**
   * Runs `fn` in a transaction on one connection and commits (or rolls back if it throws).
   * Nested inside another transaction it becomes a savepoint on the same connection: the outermost
   * transaction always wins. A read-only transaction runs `BEGIN READ ONLY` on one replica.
   */
  async transaction<T>(
    fn: (tx: Transaction) => Promise<T> | T,
    options: TransactionOptions = {},
  ): Promise<T> {
    if (this.#closed) throw new RouterClosedError()
    const scope = this.#als.getStore()
    if (scope?.tx !== undefined) return this.#savepoint(scope.tx, fn)
    const cluster = scope?.cluster ?? this.#default
    if (cluster === undefined) throw this.#noShard()
    const readOnly = options.readOnly ?? scope?.mode === 'read'
    const ctx = await this.#begin(cluster, scope, readOnly, options.isolation)
    const { routerNode: node, conn } = ctx
    const txScope: Scope = Object.freeze({
      mode: readOnly ? 'read' : 'write',
      tx: ctx,
      cluster: scope?.cluster,
      session: scope?.session,
    })
    try {
      let result: T
      try {
        result = await this.#als.run(txScope, () => startedInScope(fn(ctx)))
      } catch (err) {
        await ctx.exec('ROLLBACK').catch(() => {
          ctx.broken = true
        })
        throw err
      }
      await ctx.exec('COMMIT')
      if (!readOnly && scope?.session !== undefined) await this.#wrote(cluster, scope.session, conn)
      return result
    } finally {
      node.release(conn, ctx.broken)
    }
  }

  // ---- sharding -------------------------------------------------------------------------------

  /** The names of the shards (`['default']` for an unsharded router), in configuration order. */
  get shardNames(): readonly string[] {
    return this.#config.sharding?.shardNames ?? ['default']
  }

  /** The name of the shard a key maps to (rejects for a key the strategy cannot place). */
  async shardFor(key: ShardKey): Promise<string> {
    const sharding = this.#config.sharding
    if (sharding === undefined) throw new TypeError('this router is not sharded (no shards configured)')
    const name = await sharding.resolver.resolve(key, sharding.shardNames)
    if (!this.#byName.has(name)) throw new UnknownShardError(String(name), sharding.shardNames)
    return name
  }

  /**
   * Runs `fn` in the scope of the shard `key` maps to: every router call inside (queries,
   * `readOnly`, `transaction`, `router.pool()`) goes to that shard's cluster. Nests with the
   * other scopes; inside a transaction, naming another shard throws `CrossShardError`.
   */
  async withShard<T>(key: ShardKey, fn: () => Promise<T> | T): Promise<T> {
    const name = await this.shardFor(key)
    return this.#inShard(this.#byName.get(name) as Cluster, fn)
  }

  /** The router's query API bound to one shard, by name (`UnknownShardError` if there is none). */
  shard(name: string): ShardHandle {
    const cluster = this.#byName.get(name)
    if (cluster === undefined) throw new UnknownShardError(name, this.shardNames)
    const run = <T>(fn: () => Promise<T> | T) => this.#inShard(cluster, fn)
    return {
      name,
      query: (sql, params) => run(() => this.query(sql, params)),
      readOnly: (fn) => run(() => this.readOnly(fn)),
      primary: (fn) => run(() => this.primary(fn)),
      transaction: (fn, options) => run(() => this.transaction(fn, options)),
      run,
    }
  }

  /**
   * Runs `fn` once per shard, in parallel (up to `concurrency`), each in its shard's scope, and
   * resolves to the results by shard name. Rejects with a `ShardQueryError` naming the first
   * shard that failed.
   */
  async forEachShard<T>(
    fn: (shard: ShardHandle) => Promise<T> | T,
    options: AllShardsOptions = {},
  ): Promise<Record<string, T>> {
    const settled = await this.#allShards(fn, options.concurrency)
    const out: Record<string, T> = {}
    for (const s of settled) {
      if ('error' in s) throw new ShardQueryError(s.shard, s.error)
      out[s.shard] = s.value
    }
    return out
  }

  /**
   * Runs one statement on every shard (routed by the current scope: in a `readOnly` scope, on
   * each shard's replicas) and returns every row tagged with its shard. A shard that fails
   * rejects the whole call (`onError: 'fail'`, the default) or is reported beside the other
   * shards' rows (`'partial'`).
   */
  async queryAllShards<Row = Record<string, unknown>>(
    sql: Statement,
    params?: readonly unknown[],
    options: QueryAllShardsOptions = {},
  ): Promise<AllShardsResult<Row>> {
    const onError = options.onError ?? 'fail'
    if (onError !== 'fail' && onError !== 'partial') {
      throw new TypeError(`onError: expected 'fail' or 'partial', got ${String(onError)}`)
    }
    const settled = await this.#allShards((s) => s.query<Row>(sql, params), options.concurrency)
    const rows: Array<{ shard: string; row: Row }> = []
    const errors: Array<{ shard: string; error: unknown }> = []
    for (const s of settled) {
      if ('error' in s) {
        if (onError === 'fail') throw new ShardQueryError(s.shard, s.error)
        errors.push({ shard: s.shard, error: s.error })
      } else {
        for (const row of s.value.rows) rows.push({ shard: s.shard, row })
      }
    }
    return { rows, errors }
  }

  async #allShards<T>(
    fn: (shard: ShardHandle) => Promise<T> | T,
    concurrency: number | undefined,
  ): Promise<Array<{ shard: string; value: T } | { shard: string; error: unknown }>> {
    const names = this.shardNames
    const limit = concurrency ?? names.length
    if (!Number.isInteger(limit) || limit < 1)
      throw new TypeError(`concurrency: expected an integer >= 1, got ${String(concurrency)}`)
    const results: Array<{ shard: string; value: T } | { shard: string; error: unknown }> = new Array(
      names.length,
    )
    let next = 0
    const worker = async () => {
      while (next < names.length) {
        const i = next++
        const shard = names[i] as string
        try {
          results[i] = { shard, value: await fn(this.shard(shard)) }
        } catch (error) {
          results[i] = { shard, error }
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(limit, names.length) }, worker))
    return results
  }

  // ---- runtime topology -----------------------------------------------------------------------

  #topology(): topology.TopologyDeps {
    return {
      clusters: this.#clusters,
      dialect: this.#driver.dialect,
      monitor: this.#monitor,
      events: this.#events,
    }
  }

  #node(name: string): { cluster: Cluster; node: RouterNode } {
    const found = topology.findNode(this.#clusters, name)
    if (found === undefined) throw new TypeError(`unknown node "${name}"`)
    return found
  }

  /**
   * Adds a replica at runtime (to `options.shard` in a sharded router). Validated like a
   * configured one (`ConfigError`); resolves with its name after its first probe.
   */
  addReplica(node: string | NodeConfig, options: { shard?: string } = {}): Promise<string> {
    if (this.#closed) return Promise.reject(new RouterClosedError())
    const cluster = options.shard === undefined ? this.#default : this.#byName.get(options.shard)
    if (cluster === undefined) {
      return Promise.reject(
        options.shard === undefined
          ? new ShardKeyRequiredError()
          : new UnknownShardError(options.shard, this.shardNames),
      )
    }
    try {
      return topology.addReplica(this.#topology(), cluster, node)
    } catch (err) {
      return Promise.reject(err)
    }
  }

  /**
   * Drains a replica: it takes no new queries; in-flight queries and transactions finish (up to
   * `timeoutMs`, then they are aborted); then its pools close, exactly once. It stays in
   * `stats()` as `drained`.
   */
  async drain(name: string, options?: topology.DrainOptions): Promise<void> {
    const { cluster, node } = this.#node(name)
    return topology.drain(this.#topology(), cluster, node, options)
  }

  /** Drains a replica (see `drain`), then removes it from the router. */
  async removeReplica(name: string, options?: topology.DrainOptions): Promise<void> {
    const { cluster, node } = this.#node(name)
    return topology.removeReplica(this.#topology(), cluster, node, options)
  }

  /** Changes a node's weight at runtime (used by `weighted-round-robin`, `random`, `least-outstanding`; 0 takes it out of balancing). */
  setWeight(name: string, weight: number): void {
    const { cluster, node } = this.#node(name)
    topology.setWeight(cluster, node, weight)
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
    return statsOf(this.#clusters)
  }

  /**
   * A pool look-alike of the driver's own (a `pg.Pool` for `routemate/pg`) whose `query` and
   * `connect` are routed by the caller's scope, for ORMs and query builders. The same object on
   * every call; its `end()` closes the router.
   */
  pool<P = unknown>(): P {
    if (this.#facade === undefined) {
      if (this.#driver.facade === undefined)
        throw new TypeError(`driver "${this.#driver.name}" has no pool facade`)
      this.#facade = this.#driver.facade(this.#host())
    }
    return this.#facade as P
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.#closed
  }

  /**
   * Stops health checks, lets in-flight queries finish (up to `timeoutMs`, then aborts them) and
   * ends every pool. Idempotent: later calls return the same promise.
   */
  close(options: CloseOptions = {}): Promise<void> {
    if (this.#closing !== undefined) return this.#closing
    this.#closed = true
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

  // ---- routing -------------------------------------------------------------------------------

  #withSession(parent: Scope | undefined, session: Session): Scope {
    return Object.freeze({ mode: parent?.mode ?? 'write', tx: parent?.tx, cluster: parent?.cluster, session })
  }

  #noShard(): Error {
    return new ShardKeyRequiredError()
  }

  /** Runs `fn` with `cluster` as the shard in scope (a transaction in scope must be on it). */
  #inShard<T>(cluster: Cluster, fn: () => Promise<T> | T): Promise<T> {
    const scope = this.#als.getStore()
    const tx = scope?.tx
    if (tx !== undefined && tx.cluster !== cluster)
      return Promise.reject(new CrossShardError(tx.cluster.name, cluster.name))
    if (scope?.cluster === cluster || (tx !== undefined && tx.cluster === cluster))
      return Promise.resolve().then(fn)
    const next: Scope = Object.freeze({ mode: scope?.mode ?? 'write', tx, cluster, session: scope?.session })
    return this.#als.run(next, () => Promise.resolve().then(fn))
  }

  /** A write, an unscoped statement or a `primary` scope: the primary. */
  async #onPrimary(
    cluster: Cluster,
    scope: Scope | undefined,
    sql: Statement,
    params: readonly unknown[] | undefined,
  ): Promise<QueryResult> {
    const node = this.#requirePrimary(cluster)
    const session = scope?.session
    if (session === undefined || READ_KEYWORDS.has(leadingKeyword(textOf(sql)))) {
      try {
        return await node.run(sql, params)
      } catch (err) {
        throw this.#failed(cluster, node, err, false)
      }
    }
    // A session's write: remember it (and, in position mode, where the primary stood after it).
    const conn = await this.#acquire(cluster, node, false, false)
    let destroy = false
    try {
      const started = performance.now()
      const result = await this.#driver.execute(conn, sql, params)
      node.observe(performance.now() - started)
      await this.#wrote(cluster, session, conn)
      return result
    } catch (err) {
      node.observe(0, false)
      destroy = isNodeFailure(classifyError(this.#driver, err))
      throw this.#failed(cluster, node, err, false)
    } finally {
      node.release(conn, destroy)
    }
  }

  /** Records a session's write; in `position` mode reads the primary's position on `conn`. */
  async #wrote(cluster: Cluster, session: Session, conn: unknown): Promise<void> {
    session.lastWriteAt = Date.now()
    if (this.#config.readYourWrites.mode !== 'position') return
    try {
      session.positions.set(cluster.name, await this.#driver.positionAfterWrite(conn))
    } catch {
      session.positions.set(cluster.name, UNKNOWN_POSITION) // the session reads from the primary
    }
  }

  /**
   * A read in a `readOnly` scope: a usable replica, retried once elsewhere on a connection error.
   * Not `async`: on the success path the only promises are the node's and the one `then` that
   * handles failures (where the caller's async stack is still reachable for `withCallerStack`).
   */
  #read(
    cluster: Cluster,
    scope: Scope,
    sql: Statement,
    params: readonly unknown[] | undefined,
  ): Promise<QueryResult> {
    if (isEvidentWrite(textOf(sql))) return Promise.reject(readOnlyError(cluster.name))
    const token = scope.session?.positions.get(cluster.name)
    if (token !== undefined) return this.#readAtPosition(cluster, token, sql, params)
    let node: RouterNode
    try {
      node = this.#pickRead(cluster, scope)
    } catch (err) {
      return Promise.reject(err)
    }
    return node
      .run(sql, params, node === cluster.primary)
      .then(undefined, (err: unknown) => this.#retryRead(cluster, node, err, sql, params))
  }

  /** After a failed read: maps the error, or retries once on another node for a connection error. */
  async #retryRead(
    cluster: Cluster,
    node: RouterNode,
    err: unknown,
    sql: Statement,
    params: readonly unknown[] | undefined,
  ): Promise<QueryResult> {
    const cls = classifyError(this.#driver, err)
    if (!isNodeFailure(cls) || !this.#config.retryReads) throw this.#failed(cluster, node, err, true)
    this.#failed(cluster, node, err, true)
    const other = node === cluster.primary ? undefined : this.#retryTarget(cluster, node)
    if (other === undefined) throw withCallerStack(err)
    this.#events.emit('retry', {
      cluster: cluster.name,
      from: node.name,
      to: other.name,
      error: this.#monitor.redact(err),
    })
    try {
      return await other.run(sql, params, other === cluster.primary)
    } catch (err2) {
      throw this.#failed(cluster, other, err2, true)
    }
  }

  /**
   * A read of a session that wrote (`position` mode): a replica known (from probes) to have
   * replayed the session's token; else one that reaches it within `maxWaitMs` (checked on the
   * connection that then runs the read); else the primary.
   */
  async #readAtPosition(
    cluster: Cluster,
    token: string,
    sql: Statement,
    params: readonly unknown[] | undefined,
  ): Promise<QueryResult> {
    const c = cluster.candidates
    const reached = (n: RouterNode) =>
      n.position !== undefined && this.#driver.positionReached(n.position, token)
    let node: RouterNode | undefined
    if (token !== UNKNOWN_POSITION && c.length > 0) {
      const picked = (c.length === 1 ? c[0] : cluster.balancer.pick(c)) as RouterNode
      if (reached(picked)) node = picked
      else node = c.find(reached)
      if (node === undefined) {
        // Not known from probes yet: ask the replica least behind (the balancer's pick on a tie).
        let best = picked
        for (const n of c)
          if ((n.lagMs ?? Number.POSITIVE_INFINITY) < (best.lagMs ?? Number.POSITIVE_INFINITY)) best = n
        const served = await this.#readIfCaughtUp(cluster, best, token, sql, params)
        if (served !== undefined) return served
      }
    }
    if (node === undefined) {
      cluster.readYourWritesRedirects++
      node = this.#readPrimary(cluster)
    }
    try {
      return await node.run(sql, params, node === cluster.primary)
    } catch (err) {
      return this.#retryRead(cluster, node, err, sql, params)
    }
  }

  /** Checks (waiting up to `maxWaitMs`) whether a replica replayed `token`; if so runs the read there. */
  async #readIfCaughtUp(
    cluster: Cluster,
    node: RouterNode,
    token: string,
    sql: Statement,
    params: readonly unknown[] | undefined,
  ): Promise<QueryResult | undefined> {
    const ryw = this.#config.readYourWrites
    const maxWaitMs = ryw.mode === 'position' ? ryw.maxWaitMs : 0
    let conn: unknown
    try {
      conn = await node.acquire()
    } catch (err) {
      this.#failed(cluster, node, err, true)
      return undefined
    }
    let destroy = false
    try {
      let replay: string | undefined
      try {
        replay = await this.#driver.waitForPosition(conn, token, maxWaitMs)
      } catch (err) {
        // A statement error here means the token is not a position this server understands (a
        // tampered or foreign token): read from the primary. Connection errors go on below.
        if (isNodeFailure(classifyError(this.#driver, err))) throw err
        return undefined
      }
      if (replay === undefined || !this.#driver.positionReached(replay, token)) return undefined
      if (node.position === undefined || this.#driver.positionReached(replay, node.position))
        node.position = replay
      const started = performance.now()
      const result = await this.#driver.execute(conn, sql, params)
      node.observe(performance.now() - started)
      return result
    } catch (err) {
      destroy = isNodeFailure(classifyError(this.#driver, err))
      if (destroy) {
        this.#failed(cluster, node, err, true)
        return undefined // read it from the primary instead
      }
      throw this.#failed(cluster, node, err, true)
    } finally {
      node.release(conn, destroy)
    }
  }

  /** The node for a read: a balanced replica, or the primary for read-your-writes / fallback. */
  #pickRead(cluster: Cluster, scope: Scope | undefined): RouterNode {
    const session = scope?.session
    const ryw = this.#config.readYourWrites
    const c = cluster.candidates
    if (session !== undefined) {
      if (ryw.mode === 'window' && session.lastWriteAt + ryw.windowMs > Date.now())
        return this.#readPrimary(cluster)
      const token = ryw.mode === 'position' ? session.positions.get(cluster.name) : undefined
      if (token !== undefined) {
        if (token === UNKNOWN_POSITION) return this.#readPrimary(cluster)
        const caughtUp = c.find(
          (n) => n.position !== undefined && this.#driver.positionReached(n.position, token),
        )
        return caughtUp ?? this.#readPrimary(cluster)
      }
    }
    if (c.length === 0) return this.#fallback(cluster)
    return c.length === 1 ? (c[0] as RouterNode) : (cluster.balancer.pick(c) as RouterNode)
  }

  /** Where a failed read goes next: another replica, or the primary if falling back is allowed. */
  #retryTarget(cluster: Cluster, failed: RouterNode): RouterNode | undefined {
    if (this.#closed) return undefined // close() aborted it: never reopen a pool behind close()
    const other = cluster.pickOther(failed)
    if (other !== undefined) return other
    const p = cluster.primary
    if (cluster.fallbackToPrimary && p?.available) return p
    return undefined
  }

  #fallback(cluster: Cluster): RouterNode {
    if (!cluster.fallbackToPrimary) {
      throw new NoHealthyReplicaError(
        cluster.name,
        cluster.replicas.length === 0
          ? `no replica configured in cluster "${cluster.name}" and fallbackToPrimary is false`
          : `no usable replica in cluster "${cluster.name}" (${cluster.replicas
              .map((r) => `${r.name}: ${cluster.unusableReason(r) ?? 'usable'}`)
              .join(', ')}) and fallbackToPrimary is false`,
      )
    }
    return this.#readPrimary(cluster)
  }

  #readPrimary(cluster: Cluster): RouterNode {
    return this.#requirePrimary(cluster)
  }

  #requirePrimary(cluster: Cluster): RouterNode {
    const p = cluster.primary
    if (p?.available) return p
    let why: string
    if (p === undefined) why = 'not known yet (no node reports being the primary)'
    else if (!p.trusted) why = `"${p.name}", which is not trusted: it reports being a replica`
    else why = `"${p.name}", which is down${p.lastError ? `: ${p.lastError}` : ''}`
    throw new PrimaryUnavailableError(cluster.name, `the primary of cluster "${cluster.name}" is ${why}`)
  }

  /** Records a failed statement (passive health, read-only mapping); returns what to throw. */
  #failed(cluster: Cluster, node: RouterNode, err: unknown, read: boolean): unknown {
    const cls = classifyError(this.#driver, err)
    if (cls === 'read-only' && read) return readOnlyError(node.name, err)
    node.errors++
    if (isNodeFailure(cls)) this.#monitor.recordFailure(cluster, node, err, 'query')
    return withCallerStack(err)
  }

  /** Checks out a connection, recording a failure as passive health. */
  async #acquire(cluster: Cluster, node: RouterNode, readOnlyPool: boolean, read: boolean): Promise<unknown> {
    try {
      return await node.acquire(readOnlyPool)
    } catch (err) {
      throw this.#failed(cluster, node, err, read)
    }
  }

  // ---- transactions --------------------------------------------------------------------------

  /** Checks out the connection of a new transaction: the primary, or one replica for a read-only one. */
  async #txConnection(
    cluster: Cluster,
    scope: Scope | undefined,
    onReplica: boolean,
  ): Promise<{ node: RouterNode; conn: unknown }> {
    if (!onReplica) {
      const node = this.#requirePrimary(cluster)
      return { node, conn: await this.#acquire(cluster, node, false, false) }
    }
    return this.#readConnection(cluster, scope, false)
  }

  /** A connection for reads: a balanced replica (one retry elsewhere if checkout fails) or the primary. */
  async #readConnection(
    cluster: Cluster,
    scope: Scope | undefined,
    readOnlyPoolOnPrimary: boolean,
  ): Promise<{ node: RouterNode; conn: unknown }> {
    const node = this.#pickRead(cluster, scope)
    const ro = readOnlyPoolOnPrimary && node === cluster.primary
    try {
      return { node, conn: await node.acquire(ro) }
    } catch (err) {
      const cls = classifyError(this.#driver, err)
      this.#failed(cluster, node, err, true)
      const other =
        isNodeFailure(cls) && this.#config.retryReads && node !== cluster.primary
          ? this.#retryTarget(cluster, node)
          : undefined
      if (other === undefined) throw withCallerStack(err)
      const ro2 = readOnlyPoolOnPrimary && other === cluster.primary
      return { node: other, conn: await this.#acquire(cluster, other, ro2, true) }
    }
  }

  /**
   * Opens a transaction: a connection (the primary, or a replica for a read-only one) and BEGIN.
   * A connection error before or at BEGIN — nothing has run yet — is retried once on a fresh
   * connection (another replica for a read-only transaction).
   */
  async #begin(
    cluster: Cluster,
    scope: Scope | undefined,
    readOnly: boolean,
    isolation: IsolationLevel | undefined,
  ): Promise<TransactionContext> {
    const onReplica = readOnly && scope?.mode !== 'primary'
    const begin = this.#driver.beginSql({ readOnly, isolation })
    let failed: RouterNode | undefined
    for (let attempt = 0; ; attempt++) {
      const other = failed !== undefined && onReplica ? this.#retryTarget(cluster, failed) : undefined
      const target =
        other !== undefined
          ? { node: other, conn: await this.#acquire(cluster, other, false, true) }
          : await this.#txConnection(cluster, scope, onReplica)
      const ctx = new TransactionContext(
        this.#driver,
        this.#monitor,
        cluster,
        target.node,
        target.conn,
        readOnly,
      )
      try {
        if (typeof begin === 'string') await ctx.exec(begin)
        else for (const stmt of begin) await ctx.exec(stmt)
        return ctx
      } catch (err) {
        target.node.release(target.conn, ctx.broken)
        const retry =
          attempt === 0 &&
          ctx.broken &&
          (onReplica ? this.#retryTarget(cluster, target.node) !== undefined : target.node.available)
        if (!retry) throw err
        failed = target.node
        const next = onReplica ? this.#retryTarget(cluster, target.node) : target.node
        this.#events.emit('retry', {
          cluster: cluster.name,
          from: target.node.name,
          to: next?.name ?? target.node.name,
          error: this.#monitor.redact(err),
        })
      }
    }
  }

  async #savepoint<T>(ctx: TransactionContext, fn: (tx: Transaction) => Promise<T> | T): Promise<T> {
    const name = `routemate_sp_${++ctx.savepoints}`
    await ctx.exec(this.#driver.savepointSql(name, 'create'))
    try {
      const result = await fn(ctx)
      await ctx.exec(this.#driver.savepointSql(name, 'release'))
      return result
    } catch (err) {
      await ctx.exec(this.#driver.savepointSql(name, 'rollback')).catch(() => {})
      throw err
    }
  }

  // ---- pool facade ---------------------------------------------------------------------------

  #host(): FacadeHost {
    return {
      query: (sql, params) => this.query(sql, params),
      connect: () => this.#connect(),
      counts: () => {
        const sum = { total: 0, idle: 0, waiting: 0 }
        for (const c of this.#clusters) {
          for (const n of c.nodes) {
            const k = n.counts()
            sum.total += k.total
            sum.idle += k.idle
            sum.waiting += k.waiting
          }
        }
        return sum
      },
      close: () => this.close(),
      onError: (listener) => this.#events.on('error', (e) => listener(e.error)),
    }
  }

  /** Checks out a connection for the pool facade, chosen by the caller's scope. */
  async #connect(): Promise<ScopedConnection> {
    if (this.#closed) throw new RouterClosedError()
    const scope = this.#als.getStore()
    const deps = this.#scopedDeps
    const tx = scope?.tx
    if (tx !== undefined) return scopedConnection(deps, tx.cluster, tx.routerNode, tx.conn, tx.readOnly, tx)
    const cluster = scope?.cluster ?? this.#default
    if (cluster === undefined) throw this.#noShard()
    if (scope?.mode !== 'read') {
      const node = this.#requirePrimary(cluster)
      return scopedConnection(
        deps,
        cluster,
        node,
        await this.#acquire(cluster, node, false, false),
        false,
        undefined,
      )
    }
    const { node, conn } = await this.#readConnection(cluster, scope, true)
    return scopedConnection(deps, cluster, node, conn, true, undefined)
  }
}

/**
 * Creates a router. Validates the options at once (throwing `ConfigError` naming the bad option),
 * opens no connection until the first query or probe, and starts health checks.
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
export function createRouter(options: RouterOptions): Router {
  return new Router(options)
}
