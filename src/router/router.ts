import { AsyncLocalStorage } from 'node:async_hooks'
import { Session } from '../consistency/session.js'
import { NoHealthyReplicaError } from '../errors/no-healthy-replica-error.js'
import { PrimaryUnavailableError } from '../errors/primary-unavailable-error.js'
import { ReadOnlyViolationError } from '../errors/read-only-violation-error.js'
import { RouterClosedError } from '../errors/router-closed-error.js'
import { HealthMonitor } from '../health/health-monitor.js'
import { Cluster } from './cluster.js'
import { resolveConfig } from './config.js'
import type { Driver, IsolationLevel, QueryResult } from './driver.js'
import { RouterEmitter, type RouterEventListener, type RouterEventName } from './events.js'
import type { FacadeHost, ScopedConnection } from './facade-host.js'
import type { RouterOptions } from './options.js'
import type { ResolvedConfig } from './resolved-config.js'
import type { RouterNode } from './router-node.js'
import { type Scope, type ScopeMode, withMode } from './scope.js'
import { isEvidentWrite, leadingKeyword } from './sql-guard.js'
import { classifyError, isNodeFailure, type Statement, textOf, withCallerStack } from './statement.js'
import { type RouterStats, statsOf } from './stats.js'
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
  readonly #cluster: Cluster
  readonly #clusters: readonly Cluster[]
  readonly #monitor: HealthMonitor
  readonly #ready: Promise<void>
  #closed = false
  #closing: Promise<void> | undefined
  #facade: unknown

  constructor(options: RouterOptions) {
    this.#config = resolveConfig(options)
    this.#driver = this.#config.driver
    this.#cluster = new Cluster(
      'default',
      this.#config.primary,
      this.#config.replicas,
      this.#config,
      this.#events,
    )
    this.#clusters = Object.freeze([this.#cluster])
    this.#monitor = new HealthMonitor(this.#clusters, this.#config, this.#events)
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
    if (scope === undefined)
      return this.#onPrimary(this.#cluster, undefined, sql, params) as Promise<QueryResult<Row>>
    if (scope.tx !== undefined) return scope.tx.query<Row>(sql, params)
    const cluster = scope.cluster ?? this.#cluster
    if (scope.mode === 'read') return this.#read(cluster, scope, sql, params) as Promise<QueryResult<Row>>
    return this.#onPrimary(cluster, scope, sql, params) as Promise<QueryResult<Row>>
  }

  /** Runs `fn` in a read-only scope: its reads go to replicas; a write throws `ReadOnlyViolationError`. */
  readOnly<T>(fn: () => T): T {
    return this.#als.run(withMode(this.#als.getStore(), 'read'), fn)
  }

  /** Runs `fn` in a primary scope: everything inside, reads included, goes to the primary. */
  primary<T>(fn: () => T): T {
    return this.#als.run(withMode(this.#als.getStore(), 'primary'), fn)
  }

  /** Runs `fn` in a read-your-writes session scope (see `readYourWrites`). */
  session<T>(fn: () => T): T {
    const parent = this.#als.getStore()
    const scope: Scope = Object.freeze({
      mode: parent?.mode ?? 'write',
      tx: parent?.tx,
      cluster: parent?.cluster,
      session: new Session(),
    })
    return this.#als.run(scope, fn)
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
    const cluster = scope?.cluster ?? this.#cluster
    const readOnly = options.readOnly ?? scope?.mode === 'read'
    const { node, conn } = await this.#txConnection(cluster, readOnly && scope?.mode !== 'primary')
    const ctx = new TransactionContext(this.#driver, this.#monitor, cluster, node, conn, readOnly)
    const txScope: Scope = Object.freeze({
      mode: readOnly ? 'read' : 'write',
      tx: ctx,
      cluster,
      session: scope?.session,
    })
    try {
      await ctx.exec(this.#driver.beginSql({ readOnly, isolation: options.isolation }))
      let result: T
      try {
        result = await this.#als.run(txScope, () => fn(ctx))
      } catch (err) {
        await ctx.exec('ROLLBACK').catch(() => {
          ctx.broken = true
        })
        throw err
      }
      await ctx.exec('COMMIT')
      if (!readOnly && scope?.session !== undefined) scope.session.lastWriteAt = Date.now()
      return result
    } finally {
      node.release(conn, ctx.broken)
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

  /** A write, an unscoped statement or a `primary` scope: the primary. */
  async #onPrimary(
    cluster: Cluster,
    scope: Scope | undefined,
    sql: Statement,
    params: readonly unknown[] | undefined,
  ): Promise<QueryResult> {
    const node = cluster.primary
    if (!node.available) throw this.#primaryUnavailable(cluster)
    try {
      const result = await node.run(sql, params)
      const session = scope?.session
      if (session !== undefined && !READ_KEYWORDS.has(leadingKeyword(textOf(sql))))
        session.lastWriteAt = Date.now()
      return result
    } catch (err) {
      throw this.#failed(cluster, node, err, false)
    }
  }

  /** A read in a `readOnly` scope: a usable replica, retried once elsewhere on a connection error. */
  async #read(
    cluster: Cluster,
    scope: Scope,
    sql: Statement,
    params: readonly unknown[] | undefined,
  ): Promise<QueryResult> {
    if (isEvidentWrite(textOf(sql))) throw readOnlyError(cluster.name)
    const node = this.#pickRead(cluster, scope)
    try {
      return await node.run(sql, params, node === cluster.primary)
    } catch (err) {
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
  }

  /** The node for a read: a balanced replica, or the primary for read-your-writes / fallback. */
  #pickRead(cluster: Cluster, scope: Scope): RouterNode {
    const session = scope.session
    const ryw = this.#config.readYourWrites
    if (session !== undefined && ryw.mode === 'window' && session.lastWriteAt + ryw.windowMs > Date.now()) {
      return this.#readPrimary(cluster)
    }
    const c = cluster.candidates
    if (c.length === 0) return this.#fallback(cluster)
    return c.length === 1 ? (c[0] as RouterNode) : (cluster.balancer.pick(c) as RouterNode)
  }

  /** Where a failed read goes next: another replica, or the primary if falling back is allowed. */
  #retryTarget(cluster: Cluster, failed: RouterNode): RouterNode | undefined {
    const other = cluster.pickOther(failed)
    if (other !== undefined) return other
    if (this.#config.fallbackToPrimary && cluster.primary.available) return cluster.primary
    return undefined
  }

  #fallback(cluster: Cluster): RouterNode {
    if (!this.#config.fallbackToPrimary) {
      throw new NoHealthyReplicaError(
        cluster.name,
        cluster.replicas.length === 0
          ? `no replica configured in cluster "${cluster.name}" and fallbackToPrimary is false`
          : `no usable replica in cluster "${cluster.name}" (${cluster.replicas
              .map((r) => `${r.name}: ${Cluster.unusableReason(r) ?? 'usable'}`)
              .join(', ')}) and fallbackToPrimary is false`,
      )
    }
    return this.#readPrimary(cluster)
  }

  #readPrimary(cluster: Cluster): RouterNode {
    if (!cluster.primary.available) throw this.#primaryUnavailable(cluster)
    return cluster.primary
  }

  #primaryUnavailable(cluster: Cluster): PrimaryUnavailableError {
    const p = cluster.primary
    const why = p.trusted
      ? `down${p.lastError ? `: ${p.lastError}` : ''}`
      : 'not trusted: it reports being a replica'
    return new PrimaryUnavailableError(
      cluster.name,
      `primary "${p.name}" of cluster "${cluster.name}" is ${why}`,
    )
  }

  /** Records a failed statement (passive health, read-only mapping); returns what to throw. */
  #failed(cluster: Cluster, node: RouterNode, err: unknown, read: boolean): unknown {
    const cls = classifyError(this.#driver, err)
    if (cls === 'read-only' && read) return readOnlyError(node.name, err)
    node.errors++
    if (isNodeFailure(cls)) this.#monitor.recordFailure(cluster, node, err, 'query')
    return withCallerStack(err)
  }

  // ---- transactions --------------------------------------------------------------------------

  /** Checks out the connection of a new transaction: the primary, or one replica for a read-only one. */
  async #txConnection(cluster: Cluster, onReplica: boolean): Promise<{ node: RouterNode; conn: unknown }> {
    if (!onReplica) {
      const node = this.#readPrimary(cluster)
      try {
        return { node, conn: await node.acquire() }
      } catch (err) {
        throw this.#failed(cluster, node, err, false)
      }
    }
    const node =
      cluster.candidates.length === 0
        ? this.#fallback(cluster)
        : this.#pickRead(cluster, withMode(undefined, 'read'))
    try {
      return { node, conn: await node.acquire() }
    } catch (err) {
      const cls = classifyError(this.#driver, err)
      this.#failed(cluster, node, err, true)
      const other =
        isNodeFailure(cls) && this.#config.retryReads ? this.#retryTarget(cluster, node) : undefined
      if (other === undefined) throw withCallerStack(err)
      try {
        return { node: other, conn: await other.acquire() }
      } catch (err2) {
        throw this.#failed(cluster, other, err2, true)
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
    const tx = scope?.tx
    if (tx !== undefined) return this.#scoped(tx.cluster, tx.routerNode, tx.conn, tx.readOnly, tx)
    const cluster = scope?.cluster ?? this.#cluster
    const mode: ScopeMode = scope?.mode ?? 'write'
    if (mode !== 'read') {
      const node = this.#readPrimary(cluster)
      try {
        return this.#scoped(cluster, node, await node.acquire(), false)
      } catch (err) {
        throw this.#failed(cluster, node, err, false)
      }
    }
    const node = this.#pickRead(cluster, scope as Scope)
    try {
      return this.#scoped(cluster, node, await node.acquire(node === cluster.primary), true)
    } catch (err) {
      const cls = classifyError(this.#driver, err)
      this.#failed(cluster, node, err, true)
      const other =
        isNodeFailure(cls) && this.#config.retryReads ? this.#retryTarget(cluster, node) : undefined
      if (other === undefined || node === cluster.primary) throw withCallerStack(err)
      try {
        return this.#scoped(cluster, other, await other.acquire(other === cluster.primary), true)
      } catch (err2) {
        throw this.#failed(cluster, other, err2, true)
      }
    }
  }

  #scoped(
    cluster: Cluster,
    node: RouterNode,
    conn: unknown,
    readOnly: boolean,
    tx?: TransactionContext,
  ): ScopedConnection {
    let released = false
    const savepoints: string[] = []
    const driver = this.#driver
    return {
      conn,
      node: node.name,
      readOnly,
      pinned: tx !== undefined,
      check: (text) => {
        if (readOnly && isEvidentWrite(text)) throw readOnlyError(node.name)
      },
      translate: (text) => {
        if (tx === undefined) return text
        const kw = leadingKeyword(text)
        if (kw === 'BEGIN' || (kw === 'START' && /^\s*start\s+transaction\b/i.test(text))) {
          const name = `routemate_sp_${++tx.savepoints}`
          savepoints.push(name)
          return driver.savepointSql(name, 'create')
        }
        if (kw === 'COMMIT' || kw === 'END') {
          const name = savepoints.pop()
          return name === undefined ? text : driver.savepointSql(name, 'release')
        }
        if (kw === 'ROLLBACK' && !/^\s*rollback\s+(work\s+|transaction\s+)?to\b/i.test(text)) {
          const name = savepoints.pop()
          return name === undefined ? text : driver.savepointSql(name, 'rollback')
        }
        return text
      },
      fail: (err) => (tx !== undefined ? tx.fail(err) : this.#failed(cluster, node, err, readOnly)),
      release: (destroy) => {
        if (released || tx !== undefined) return
        released = true
        node.release(conn, destroy)
      },
    }
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
