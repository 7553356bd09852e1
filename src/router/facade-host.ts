import { RouterClosedError } from '../errors/router-closed-error.js'
import { ShardKeyRequiredError } from '../errors/shard-key-required-error.js'
import type { Dispatch } from './dispatch.js'
import type { IsolationLevel, QueryResult } from './driver.js'
import { readOnlyViolation } from './read-only-guard.js'
import type { ReadPath } from './read-path.js'
import {
  acquireConnection,
  type FacadeDeps,
  readOnlyError,
  requirePrimary,
  statementFailed,
} from './router-core.js'
import type { ResultMap } from './run-job.js'
import type { Scope } from './scope.js'
import { type ScopedConnectionDeps, scopedConnection } from './scoped-connection.js'
import type { Statement } from './statement.js'
import { poolDefaultScope } from './target-session-attrs.js'

/**
 * A connection checked out through a router's pool facade, chosen by the caller's scope. Drivers'
 * facades wrap it in their native client shape.
 */
export interface ScopedConnection<Conn = unknown> {
  /** The driver's raw connection. */
  readonly conn: Conn
  /** Name of the node it belongs to. */
  readonly node: string
  /** Statements on it must be reads (a `readOnly` scope or a read-only transaction). */
  readonly readOnly: boolean
  /** It is a transaction's connection: `release` leaves it to the transaction. */
  readonly pinned: boolean
  /**
   * Throws `ReadOnlyViolationError` on a read-only connection for a statement a read may not run
   * (a write, session or transaction control; with `oneStatement: false` — the driver would run
   * every statement of the text — also a text of several statements).
   */
  check(text: string, oneStatement?: boolean): void
  /**
   * Maps transaction control on a transaction's connection: BEGIN/START TRANSACTION become a
   * savepoint, COMMIT/END release it, ROLLBACK rolls back to it — so a library's own transaction
   * nested in `router.transaction` cannot end the outer one. Other text is returned as is.
   */
  translate(text: string): string
  /**
   * Bounds one statement the facade sends on this connection by the node's `queryTimeoutMs`, as
   * for `router.query` (cancelled on the server when it passes): call it as the statement is sent,
   * with the callback that gets its outcome; give the driver the returned callback instead. After
   * a timeout, `done` gets a `QueryTimeoutError` (or the result, if the statement completed
   * anyway) once the cancellation settled. Without a timeout it returns `done` itself.
   */
  timed<T>(done: (err: unknown, value?: T) => void): (err: unknown, value?: T) => void
  /** Records an error raised on this connection (passive health) and maps it; returns what to throw. */
  fail(err: unknown): unknown
  /** Gives the connection back (`destroy` closes it). Idempotent. */
  release(destroy: boolean): void
}

/** A caller's routing scope, taken by `FacadeHost.captureScope` (opaque). */
export type CapturedScope = { readonly __routemateScope: never } | undefined

/** What a driver's pool facade may use of the router. */
export interface FacadeHost<Conn = unknown> {
  /** Routes one statement by the caller's scope, like `router.query`. */
  query(sql: Statement, params?: readonly unknown[]): Promise<QueryResult>
  /**
   * {@link FacadeHost.query} resolving to `map(result)` (the facade's own result shape): `map`
   * runs before the promise settles, so the facade needs no `then` (one promise fewer per statement).
   */
  queryAs<R>(
    sql: Statement,
    params: readonly unknown[] | undefined,
    map: (result: QueryResult) => R,
  ): Promise<R>
  /**
   * Checks out a connection chosen by the caller's scope — or by `scope`, one taken earlier with
   * {@link FacadeHost.captureScope} (for statements built in one scope and run later, as
   * postgres.js's lazy queries are).
   */
  connect(...scope: [] | [CapturedScope]): Promise<ScopedConnection<Conn>>
  /** The caller's routing scope, for a later `connect(scope)`. */
  captureScope(): CapturedScope
  /**
   * Runs one statement built in `scope` (taken with {@link FacadeHost.captureScope}) as
   * `router.query` runs it there, when that scope routes it as a read outside a transaction (a
   * `readOnly` scope, or a pool default that reads): a replica's read-only pool (or the fallback),
   * the read-only guard, one retry elsewhere after a connection error, passive health,
   * `queryTimeoutMs`. Returns `false` (and does nothing) for any other scope (a transaction, the
   * primary): the facade then checks a connection out with `connect(scope)`; else `true`, and the
   * outcome goes to `resolve` or `reject` (once, possibly before `read` returns). The hot path of a routed read:
   * one job on the node, no promise.
   */
  read?(
    scope: CapturedScope,
    sql: Statement,
    resolve: (r: QueryResult) => void,
    reject: (err: unknown) => void,
  ): boolean
  /**
   * Runs `fn` in a transaction, like `router.transaction` (a savepoint when nested; read-only on a
   * replica inside a `readOnly` scope unless `readOnly: false`); inside `fn`, `connect()` returns
   * the transaction's connection.
   */
  transaction<T>(
    fn: () => Promise<T> | T,
    options: { readOnly?: boolean; isolation?: IsolationLevel },
  ): Promise<T>
  /** Sum of every node's pool occupancy. */
  counts(): { total: number; idle: number; waiting: number }
  /** Closes the router. */
  close(): Promise<void>
  /** Subscribes to background errors (an idle pooled connection dying, ...); returns the unsubscribe function. */
  onError(listener: (err: unknown) => void): () => void
}

/**
 * The `FacadeHost` a router gives its driver's `facade` (`router.pool()`): `query` and `close`
 * are the router's own (`router`), `connect` checks out a connection chosen by the caller's
 * scope. Made once per router, on the first `router.pool()`.
 *
 * With a multi-host `url` whose `target_session_attrs` asks for reads (`read-only`,
 * `prefer-standby`, `standby`), statements and checkouts that no scope routes (outside
 * `readOnly`, `primary` and transactions; a session or shard scope alone routes nothing) run as
 * in a `readOnly` scope, writes refused, with that value's fallback (see `poolDefaultScope`).
 */
export function routerFacadeHost(
  core: FacadeDeps,
  reads: ReadPath,
  router: Pick<FacadeHost, 'query' | 'close'> & {
    transaction<T>(
      fn: () => Promise<T> | T,
      options: { readOnly?: boolean; isolation?: IsolationLevel },
    ): Promise<T>
  },
  dispatch: Pick<Dispatch, 'query'>,
): FacadeHost {
  // What the scoped connections use of the router (made once, not per checkout).
  const deps: ScopedConnectionDeps = {
    driver: core.driver,
    check: (text, node, readOnly, where, oneStatement) => {
      if (!readOnly) return
      const refused = readOnlyViolation(text, where, oneStatement, core.driver.dialect === 'postgres')
      if (refused !== undefined) throw readOnlyError(node.name, undefined, refused)
    },
    failed: (c, n, err, read) => statementFailed(core, c, n, err, read),
  }
  const defaultScope = poolDefaultScope(core.config.targetSessionAttrs)
  const query: (sql: Statement, params: readonly unknown[] | undefined, map?: ResultMap) => Promise<unknown> =
    defaultScope === undefined
      ? (sql, params, map) => dispatch.query(sql, params, map)
      : (sql, params, map) => {
          const scope = defaultScope(core.als.getStore())
          if (scope === undefined) return dispatch.query(sql, params, map)
          if (core.closed) return Promise.reject(new RouterClosedError())
          const cluster = scope.cluster ?? core.defaultCluster
          if (cluster === undefined) return Promise.reject(new ShardKeyRequiredError())
          return reads.read(cluster, scope, sql, params, map)
        }
  return {
    query: query as FacadeHost['query'],
    queryAs: query as FacadeHost['queryAs'],
    connect: (...scope) =>
      connect(
        core,
        reads,
        deps,
        defaultScope,
        scope.length === 0 ? core.als.getStore() : (scope[0] as Scope | undefined),
      ),
    captureScope: () => core.als.getStore() as unknown as CapturedScope,
    read: (captured, sql, resolve, reject) => {
      const caller = captured as Scope | undefined
      const scope = defaultScope?.(caller) ?? caller
      if (scope === undefined || scope.mode !== 'read' || scope.tx !== undefined) return false
      const cluster = scope.cluster ?? core.defaultCluster
      if (core.closed) reject(new RouterClosedError())
      else if (cluster === undefined) reject(new ShardKeyRequiredError())
      else reads.readTo(cluster, scope, sql, undefined, resolve, reject)
      return true
    },
    transaction: (fn, options) => router.transaction(() => fn(), options),
    counts: () => {
      const sum = { total: 0, idle: 0, waiting: 0 }
      for (const c of core.clusters) {
        for (const n of c.nodes) {
          const k = n.counts()
          sum.total += k.total
          sum.idle += k.idle
          sum.waiting += k.waiting
        }
      }
      return sum
    },
    close: () => router.close(),
    onError: (listener) => core.events.on('error', (e) => listener(e.error)),
  }
}

/**
 * Checks out a connection for the pool facade, chosen by the caller's scope (or, where no scope
 * routes, by `defaultScope`).
 */
async function connect(
  core: FacadeDeps,
  reads: ReadPath,
  deps: ScopedConnectionDeps,
  defaultScope: ((caller: Scope | undefined) => Scope | undefined) | undefined,
  caller: Scope | undefined,
): Promise<ScopedConnection> {
  if (core.closed) throw new RouterClosedError()
  const scope = defaultScope?.(caller) ?? caller
  const tx = scope?.tx
  if (tx !== undefined) return scopedConnection(deps, tx.cluster, tx.routerNode, tx.conn, tx.readOnly, tx)
  const cluster = scope?.cluster ?? core.defaultCluster
  if (cluster === undefined) throw new ShardKeyRequiredError()
  if (scope?.mode !== 'read') {
    const node = requirePrimary(cluster)
    return scopedConnection(
      deps,
      cluster,
      node,
      await acquireConnection(core, cluster, node, false, false),
      false,
      undefined,
    )
  }
  const { node, conn } = await reads.readConnection(cluster, scope)
  return scopedConnection(deps, cluster, node, conn, true, undefined)
}
