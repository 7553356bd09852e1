import { QueryTimeoutError } from '../errors/query-timeout-error.js'
import { RouterClosedError } from '../errors/router-closed-error.js'
import { ShardKeyRequiredError } from '../errors/shard-key-required-error.js'
import type { Cluster } from './cluster.js'
import type { IsolationLevel } from './driver.js'
import type { ReadPath } from './read-path.js'
import { acquireConnection, emitRetry, type TransactionDeps, requirePrimary } from './router-core.js'
import type { RouterNode } from './router-node.js'
import { type Scope, startedInScope } from './scope.js'
import { type Transaction, TransactionContext } from './transaction-context.js'
import { recordWrite, startWrite } from './write-path.js'

/** Options of `router.transaction`. */
export interface TransactionOptions {
  /** Run on one replica with `BEGIN READ ONLY`. Default: `true` inside a `readOnly` scope, else `false`. */
  readOnly?: boolean
  /** Isolation level of the transaction. Default: the server's default. */
  isolation?: IsolationLevel
}

/**
 * Runs a router's transactions (`router.transaction`): one connection checked out and pinned in
 * the scope — the primary's, or one replica's for a read-only transaction — BEGIN, the callback,
 * then COMMIT or ROLLBACK. A nested transaction becomes a savepoint. One per router.
 */
export class TransactionRunner {
  readonly #core: TransactionDeps
  readonly #reads: ReadPath

  constructor(core: TransactionDeps, reads: ReadPath) {
    this.#core = core
    this.#reads = reads
  }

  /**
   * Runs `fn` in a transaction on one connection and commits (or rolls back if it throws, or if
   * one of its statements timed out: it then rejects with that `QueryTimeoutError`). Inside
   * another transaction it becomes a savepoint on the same connection. After a committed write
   * in a session, records the write for read-your-writes. A write transaction's `COMMIT` that
   * loses its connection rejects with `WriteOutcomeUnknownError`.
   */
  async run<T>(fn: (tx: Transaction) => Promise<T> | T, options: TransactionOptions): Promise<T> {
    const core = this.#core
    if (core.closed) throw new RouterClosedError()
    const scope = core.als.getStore()
    if (scope?.tx !== undefined) return this.#savepoint(scope.tx, fn)
    const cluster = scope?.cluster ?? core.defaultCluster
    if (cluster === undefined) throw new ShardKeyRequiredError()
    const readOnly = options.readOnly ?? scope?.mode === 'read'
    const ctx = await this.#begin(cluster, scope, readOnly, options.isolation)
    const { routerNode: node, conn } = ctx
    if (!readOnly && scope?.session !== undefined) startWrite(core, conn)
    const txScope: Scope = Object.freeze({
      mode: readOnly ? 'read' : 'write',
      tx: ctx,
      cluster: scope?.cluster,
      session: scope?.session,
    })
    try {
      let result: T
      try {
        result = await core.als.run(txScope, () => startedInScope(fn(ctx)))
      } catch (err) {
        await ctx.exec('ROLLBACK').catch(() => {
          ctx.broken = true
        })
        throw err
      }
      if (ctx.timedOut !== undefined) {
        // The callback caught a timeout and went on: a PostgreSQL transaction is aborted by then,
        // and on any server committing part of the work would be a surprise. Roll back instead.
        await ctx.exec('ROLLBACK').catch(() => {
          ctx.broken = true
        })
        throw ctx.timedOut
      }
      await ctx.exec('COMMIT', undefined, !readOnly)
      if (!readOnly && scope?.session !== undefined) recordWrite(core, cluster, scope.session, conn)
      return result
    } finally {
      node.release(conn, ctx.broken)
    }
  }

  /**
   * Checks out the connection of a new transaction: the primary, or one replica for a read-only one;
   * a read-only transaction always takes a node's read-only pool (its sessions refuse writes).
   */
  async #txConnection(
    cluster: Cluster,
    scope: Scope | undefined,
    onReplica: boolean,
    readOnly: boolean,
  ): Promise<{ node: RouterNode; conn: unknown }> {
    if (!onReplica) {
      const node = requirePrimary(cluster)
      return { node, conn: await acquireConnection(this.#core, cluster, node, readOnly, readOnly) }
    }
    return this.#reads.readConnection(cluster, scope)
  }

  /**
   * Opens a transaction: a connection (the primary, or a replica for a read-only one) and BEGIN.
   * A connection error at BEGIN — nothing has run yet — is retried once, with a `retry` event
   * naming the node the retry really runs on: a transaction on a replica moves to another usable
   * node (`retryTarget`; only with `retryReads`), one on the primary takes a fresh connection of
   * the primary (`from` and `to` then both name it).
   */
  async #begin(
    cluster: Cluster,
    scope: Scope | undefined,
    readOnly: boolean,
    isolation: IsolationLevel | undefined,
  ): Promise<TransactionContext> {
    const core = this.#core
    const onReplica = readOnly && scope?.mode !== 'primary'
    const begin = core.driver.beginSql({ readOnly, isolation })
    let target = await this.#txConnection(cluster, scope, onReplica, readOnly)
    // A read-only transaction lands on the primary for read-your-writes or a fallback: a retry
    // stays there (another replica might not have the session's writes).
    const onPrimary = !onReplica || target.node === cluster.primary
    for (let attempt = 0; ; attempt++) {
      const ctx = new TransactionContext(
        core.driver,
        core.monitor,
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
        // A timeout is never retried (it is not a connection failure).
        const retriable = attempt === 0 && ctx.broken && !(err instanceof QueryTimeoutError)
        const next = retriable ? this.#beginRetryTarget(cluster, target.node, onPrimary) : undefined
        if (next === undefined) throw err
        emitRetry(core, cluster, target.node, next, err)
        target = {
          node: next,
          conn: await acquireConnection(core, cluster, next, readOnly, readOnly),
        }
      }
    }
  }

  /**
   * Where a transaction whose BEGIN failed on `failed` is retried: from the primary (`onPrimary`:
   * a write transaction, or a read-only one that landed there), a fresh connection of the current
   * primary if it is available; from a replica, another usable node if `retryReads` allows it.
   * `undefined`: no retry.
   */
  #beginRetryTarget(cluster: Cluster, failed: RouterNode, onPrimary: boolean): RouterNode | undefined {
    if (this.#core.closed) return undefined // close() aborted it: never reopen a pool behind close()
    if (onPrimary) {
      const p = cluster.primary
      return p?.available ? p : undefined
    }
    return this.#core.config.retryReads ? this.#reads.retryTarget(cluster, failed) : undefined
  }

  /** A transaction nested in `ctx`: a savepoint, released on success, rolled back to if `fn` throws. */
  async #savepoint<T>(ctx: TransactionContext, fn: (tx: Transaction) => Promise<T> | T): Promise<T> {
    const driver = this.#core.driver
    const name = `routemate_sp_${++ctx.savepoints}`
    await ctx.exec(driver.savepointSql(name, 'create'))
    const timedOut = ctx.timedOut
    try {
      const result = await fn(ctx)
      if (ctx.timedOut !== timedOut) throw ctx.timedOut // caught inside and went on: roll it back
      await ctx.exec(driver.savepointSql(name, 'release'))
      return result
    } catch (err) {
      // Rolled back to the savepoint, the transaction is usable again: a timeout inside is undone.
      await ctx.exec(driver.savepointSql(name, 'rollback')).then(
        () => {
          ctx.timedOut = timedOut
        },
        () => {},
      )
      throw err
    }
  }
}
