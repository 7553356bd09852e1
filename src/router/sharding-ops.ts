import type { AsyncLocalStorage } from 'node:async_hooks'
import { CrossShardError } from '../errors/cross-shard-error.js'
import { ShardQueryError } from '../errors/shard-query-error.js'
import { UnknownShardError } from '../errors/unknown-shard-error.js'
import type { ShardKey } from '../sharding/shard-resolver.js'
import type { Cluster } from './cluster.js'
import type { Dispatch } from './dispatch.js'
import type { QueryResult } from './driver.js'
import type { ResolvedSharding } from './resolved-config.js'
import type { Scope } from './scope.js'
import type { Statement } from './statement.js'
import type { Transaction } from './transaction-context.js'
import type { TransactionOptions, TransactionRunner } from './transactions.js'

/**
 * The router's query API bound to one shard (`router.shard(name)`, `forEachShard`). `Extras`
 * types the driver's result fields beside `rows` and `rowCount` (as `router.query`'s).
 *
 * @example
 * ```ts
 * const s1 = router.shard('s1')
 * await s1.readOnly(() => s1.query('SELECT count(*) FROM mails'))
 * ```
 */
export interface ShardHandle<Extras = unknown> {
  /** The shard's name. */
  readonly name: string
  /** `router.query` on this shard. */
  query<Row = Record<string, unknown>>(
    sql: Statement,
    params?: readonly unknown[],
  ): Promise<QueryResult<Row> & Extras>
  /** `router.readOnly` on this shard. */
  readOnly<T>(fn: () => Promise<T> | T): Promise<T>
  /** `router.primary` on this shard. */
  primary<T>(fn: () => Promise<T> | T): Promise<T>
  /** `router.transaction` on this shard. */
  transaction<T>(fn: (tx: Transaction<Extras>) => Promise<T> | T, options?: TransactionOptions): Promise<T>
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

/** What the sharding operations need: the scope storage, the shards, and the routing they bind to a shard. Built by the router. */
export interface ShardDeps {
  readonly als: AsyncLocalStorage<Scope>
  /** The clusters by name (shard name; `default` when unsharded). */
  readonly byName: ReadonlyMap<string, Cluster>
  /** The resolved `sharding` option (`undefined`: not sharded). */
  readonly sharding: ResolvedSharding | undefined
  /** Statement routing and the read-only / primary scopes, as `router.query` etc. */
  readonly dispatch: Pick<Dispatch, 'query' | 'readOnly' | 'primary'>
  /** `router.transaction`. */
  readonly transactions: Pick<TransactionRunner, 'run'>
}

/** One shard's outcome in `forEachShard` / `queryAllShards`. */
type Settled<T> = { shard: string; value: T } | { shard: string; error: unknown }

/**
 * A router's sharding operations: resolving keys, shard scopes, shard handles and scatter-gather
 * over every shard. One per router.
 */
export class ShardOps {
  readonly #deps: ShardDeps
  /**
   * Per shard name, the frozen scope `withShard` enters when no scope is active (one object,
   * reused; made on first use): the name the resolver returned finds it in one lookup.
   */
  readonly #bareScopes = new Map<string, Scope>()

  constructor(deps: ShardDeps) {
    this.#deps = deps
  }

  /** The names of the shards (`['default']` for an unsharded router), in configuration order. */
  get names(): readonly string[] {
    return this.#deps.sharding?.shardNames ?? ['default']
  }

  /** The name of the shard a key maps to (rejects for a key the strategy cannot place). */
  shardFor(key: ShardKey): Promise<string> {
    try {
      const name = this.#resolve(key)
      return Promise.resolve(name).then((n) => this.#cluster(n).name)
    } catch (err) {
      return Promise.reject(err)
    }
  }

  /**
   * Runs `fn` in the scope of the shard `key` maps to. A synchronous resolver (every built-in but
   * `lookup`) costs no await: `fn` runs at once, inside the shard's scope.
   */
  withShard<T>(key: ShardKey, fn: () => Promise<T> | T): Promise<T> {
    try {
      const name = this.#resolve(key)
      if (typeof name === 'string') {
        // The common case first: no scope active, and the shard's bare scope already made.
        const bare = this.#bareScopes.get(name)
        const als = this.#deps.als
        if (bare !== undefined && als.getStore() === undefined) return als.run(bare, settle, fn)
        return this.#inShard(this.#cluster(name), fn)
      }
      return Promise.resolve(name).then((n) => this.#inShard(this.#cluster(n), fn))
    } catch (err) {
      return Promise.reject(err)
    }
  }

  /** The resolver's answer for a key: a name, or a promise of one (a `lookup` resolver). */
  #resolve(key: ShardKey): string | PromiseLike<string> {
    const sharding = this.#deps.sharding
    if (sharding === undefined) throw new TypeError('this router is not sharded (no shards configured)')
    const name = sharding.resolver.resolve(key, sharding.shardNames)
    if (typeof name !== 'string' && typeof (name as PromiseLike<string> | undefined)?.then !== 'function') {
      return this.#cluster(name as unknown as string).name // not a name: UnknownShardError, below
    }
    return name
  }

  /** The shard (cluster) of a resolved name, or `UnknownShardError`. */
  #cluster(name: string): Cluster {
    const cluster = this.#deps.byName.get(name)
    if (cluster === undefined)
      throw new UnknownShardError(String(name), this.#deps.sharding?.shardNames ?? [])
    return cluster
  }

  /** The router's query API bound to one shard, by name (`UnknownShardError` if there is none). */
  shard(name: string): ShardHandle {
    const cluster = this.#deps.byName.get(name)
    if (cluster === undefined) throw new UnknownShardError(name, this.names)
    const { dispatch, transactions } = this.#deps
    const run = <T>(fn: () => Promise<T> | T) => this.#inShard(cluster, fn)
    return {
      name,
      query: <Row>(sql: Statement, params?: readonly unknown[]) =>
        run(() => dispatch.query(sql, params) as Promise<QueryResult<Row>>),
      readOnly: (fn) => run(() => dispatch.readOnly(fn)),
      primary: (fn) => run(() => dispatch.primary(fn)),
      transaction: (fn, options) => run(() => transactions.run(fn, options ?? {})),
      run,
    }
  }

  /**
   * Runs `fn` once per shard inside its shard's scope (so `router.query`, `router.pool()` and ORMs
   * over it reach that shard, as with `withShard`); the results by shard name (`ShardQueryError`
   * for the first failure).
   */
  async forEachShard<T>(
    fn: (shard: ShardHandle) => Promise<T> | T,
    options: AllShardsOptions,
  ): Promise<Record<string, T>> {
    const settled = await this.#allShards((s) => s.run(() => fn(s)), options.concurrency)
    const out: Record<string, T> = {}
    for (const s of settled) {
      if ('error' in s) throw new ShardQueryError(s.shard, s.error)
      out[s.shard] = s.value
    }
    return out
  }

  /** Runs one statement on every shard; every row tagged with its shard, failures by `onError`. */
  async queryAllShards<Row>(
    sql: Statement,
    params: readonly unknown[] | undefined,
    options: QueryAllShardsOptions,
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

  /** Runs `fn` on every shard's handle, at most `concurrency` at once; every outcome, in shard order. */
  async #allShards<T>(
    fn: (shard: ShardHandle) => Promise<T> | T,
    concurrency: number | undefined,
  ): Promise<Array<Settled<T>>> {
    const names = this.names
    const limit = concurrency ?? names.length
    if (!Number.isInteger(limit) || limit < 1)
      throw new TypeError(`concurrency: expected an integer >= 1, got ${String(concurrency)}`)
    const results: Array<Settled<T>> = new Array(names.length)
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

  /** Runs `fn` with `cluster` as the shard in scope (a transaction in scope must be on it); `fn` runs at once. */
  #inShard<T>(cluster: Cluster, fn: () => Promise<T> | T): Promise<T> {
    const als = this.#deps.als
    const scope = als.getStore()
    const tx = scope?.tx
    if (tx !== undefined && tx.cluster !== cluster)
      return Promise.reject(new CrossShardError(tx.cluster.name, cluster.name))
    if (scope?.cluster === cluster || (tx !== undefined && tx.cluster === cluster)) return settle(fn)
    let next: Scope | undefined
    if (scope === undefined) {
      next = this.#bareScopes.get(cluster.name)
      if (next === undefined) {
        next = Object.freeze({ mode: 'write', tx: undefined, cluster, session: undefined })
        this.#bareScopes.set(cluster.name, next)
      }
    } else {
      next = Object.freeze({ mode: scope.mode, tx, cluster, session: scope.session })
    }
    return als.run(next, settle, fn)
  }
}

/** Calls `fn` now; its outcome as a promise (a synchronous throw rejects). */
function settle<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return Promise.resolve(fn())
  } catch (err) {
    return Promise.reject(err)
  }
}
