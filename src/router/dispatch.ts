import type { AsyncLocalStorage } from 'node:async_hooks'
import { RouterClosedError } from '../errors/router-closed-error.js'
import { ShardKeyRequiredError } from '../errors/shard-key-required-error.js'
import type { Cluster } from './cluster.js'
import type { QueryResult } from './driver.js'
import type { ReadPath } from './read-path.js'
import type { ResultMap } from './run-job.js'
import { callInScope, type Scope, withMode } from './scope.js'
import { type Statement, textOf } from './statement.js'

/** Runs a statement on the cluster's primary (`runOnPrimary`, bound to the router). */
export type PrimaryRunner = (
  cluster: Cluster,
  scope: Scope | undefined,
  sql: Statement,
  params: readonly unknown[] | undefined,
  map?: ResultMap,
) => Promise<QueryResult>

/**
 * Routes statements by the caller's scope — `router.query`, and the same for shard handles: inside
 * a transaction on its connection; in a `readOnly` scope (or classified a read outside every
 * scope) on a replica; otherwise on the primary. Also enters the `readOnly` and `primary` scopes.
 * One per router.
 *
 * `query` is the hot path: no `async`, no closure, one `getStore()`.
 */
export class Dispatch {
  readonly #als: AsyncLocalStorage<Scope>
  readonly #default: Cluster | undefined
  readonly #reads: ReadPath
  readonly #writes: PrimaryRunner
  readonly #classify: ((sql: string) => 'read' | 'write') | undefined
  readonly #lifecycle: { readonly closed: boolean }

  /**
   * `writes` runs a statement on the primary (`runOnPrimary`); `classify` is the statement
   * classifier (`classify` option), if on; `lifecycle.closed` is whether the router was closed.
   */
  constructor(
    als: AsyncLocalStorage<Scope>,
    defaultCluster: Cluster | undefined,
    reads: ReadPath,
    writes: PrimaryRunner,
    classify: ((sql: string) => 'read' | 'write') | undefined,
    lifecycle: { readonly closed: boolean },
  ) {
    this.#als = als
    this.#default = defaultCluster
    this.#reads = reads
    this.#writes = writes
    this.#classify = classify
    this.#lifecycle = lifecycle
  }

  /**
   * Runs one statement, routed by the current scope (see the class). `map`: the result as a pool
   * facade wants it, applied before the promise settles (see `FacadeHost.queryAs`).
   */
  query(sql: Statement, params: readonly unknown[] | undefined, map?: ResultMap): Promise<QueryResult> {
    if (this.#lifecycle.closed) return Promise.reject(new RouterClosedError())
    const scope = this.#als.getStore()
    if (scope?.tx !== undefined) {
      const inTx = scope.tx.query(sql, params)
      return map === undefined ? inTx : (inTx.then(map) as Promise<QueryResult>)
    }
    const cluster = scope?.cluster ?? this.#default
    if (cluster === undefined) return Promise.reject(new ShardKeyRequiredError())
    if (scope?.mode === 'read') return this.#reads.read(cluster, scope, sql, params, map)
    const classify = this.#classify
    if (classify !== undefined && scope?.mode !== 'primary' && classify(textOf(sql)) === 'read') {
      return this.#reads.read(cluster, withMode(scope, 'read'), sql, params, map)
    }
    return this.#writes(cluster, scope, sql, params, map)
  }

  /** Runs `fn` in a read-only scope. */
  readOnly<T>(fn: () => T): T {
    return this.#als.run(withMode(this.#als.getStore(), 'read'), callInScope<T>, fn)
  }

  /** Runs `fn` in a primary scope. */
  primary<T>(fn: () => T): T {
    return this.#als.run(withMode(this.#als.getStore(), 'primary'), callInScope<T>, fn)
  }
}
