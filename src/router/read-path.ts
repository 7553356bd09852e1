import { caughtUpReplica, chooseCatchUp, waitForCatchUp } from '../consistency/catch-up.js'
import type { Session } from '../consistency/session.js'
import { NoHealthyReplicaError } from '../errors/no-healthy-replica-error.js'
import type { Cluster } from './cluster.js'
import type { Driver, QueryResult } from './driver.js'
import { afterFirstProbes } from './first-probes.js'
import { readOnlyViolation } from './read-only-guard.js'
import type { ResolvedConfig } from './resolved-config.js'
import {
  acquireConnection,
  emitRetry,
  type ReadDeps,
  readOnlyError,
  requirePrimary,
  statementFailed,
} from './router-core.js'
import type { RouterNode } from './router-node.js'
import { captureSettlers, type ResultMap, resolveMapped, settleFailure, settlers } from './run-job.js'
import type { Scope } from './scope.js'
import {
  classifyError,
  isNodeFailure,
  mustClose,
  runsOneStatement,
  type Statement,
  textOf,
  withCallerStack,
} from './statement.js'
import { UNKNOWN_POSITION } from './write-path.js'

/**
 * Least spacing of two background reads of one replica's replay position (`position` mode,
 * `maxWaitMs: 0`), in ms: under a steady stream of sessions that wrote, one read per replica
 * always in flight would add a statement per round trip to every replica.
 */
const REPLAY_REFRESH_SPACING_MS = 10

/**
 * A router's reads: the choice of a replica (read-your-writes, fallback to the primary, the
 * balancer), the one retry elsewhere after a connection error, and read connections for
 * read-only transactions and the pool facade. One per router.
 *
 * `read` is the hot path: it allocates one promise and the failure callback, so keep it free of
 * `async`, further closures and spread arguments.
 */
export class ReadPath {
  readonly #core: ReadDeps
  readonly #driver: Driver
  readonly #config: ResolvedConfig

  constructor(core: ReadDeps) {
    this.#core = core
    this.#driver = core.driver
    this.#config = core.config
  }

  /**
   * A read in a `readOnly` scope: a usable replica, retried once elsewhere on a connection error.
   * Not `async`: on the success path the only promise is the one returned, settled by the node's
   * job; a failure is handled in a reaction that promise follows (see `settleFailure`), where the
   * caller's async stack is still reachable for `withCallerStack`. `map`: the result as a pool
   * facade wants it (see `FacadeHost.queryAs`).
   */
  read(
    cluster: Cluster,
    scope: Scope,
    sql: Statement,
    params: readonly unknown[] | undefined,
    map?: ResultMap,
  ): Promise<QueryResult> {
    const node = this.#route(cluster, scope, sql, params)
    if (node instanceof Promise) return map === undefined ? node : (node.then(map) as Promise<QueryResult>)
    const promise = new Promise<QueryResult>(captureSettlers)
    const resolve = settlers.resolve
    node.runTo(sql, params, true, resolveMapped(resolve, map), (err: unknown) =>
      settleFailure(
        resolve,
        err,
        (e: unknown) =>
          this.#retryRead(cluster, node, e, sql, params, this.#rywToken(scope, cluster), scope.fallback),
        map,
      ),
    )
    return promise
  }

  /**
   * {@link ReadPath.read} with its outcome given to `resolve` / `reject` (once; possibly before it
   * returns) instead of a promise, for a facade that settles a promise of its own (the
   * postgres.js query's): on the success path of a plain read, no promise at all.
   */
  readTo(
    cluster: Cluster,
    scope: Scope,
    sql: Statement,
    params: readonly unknown[] | undefined,
    resolve: (r: QueryResult) => void,
    reject: (err: unknown) => void,
  ): void {
    const node = this.#route(cluster, scope, sql, params)
    if (node instanceof Promise) {
      node.then(resolve, reject)
      return
    }
    node.runTo(sql, params, true, resolve, (err: unknown) => {
      this.#retryRead(cluster, node, err, sql, params, this.#rywToken(scope, cluster), scope.fallback).then(
        resolve,
        reject,
      )
    })
  }

  /**
   * Where a read goes: the node of a plain read (a replica, or the fallback), or the whole read
   * as a promise when it takes another way (refused by the read-only guard, waiting for the first
   * probes, a read-your-writes session's read, no node to take it).
   */
  #route(
    cluster: Cluster,
    scope: Scope,
    sql: Statement,
    params: readonly unknown[] | undefined,
  ): RouterNode | Promise<QueryResult> {
    const pg = this.#driver.dialect === 'postgres'
    const refused = readOnlyViolation(textOf(sql), 'read', runsOneStatement(this.#driver, sql, params), pg)
    if (refused !== undefined) return Promise.reject(readOnlyError(cluster.name, undefined, refused))
    if (cluster.candidates.length === 0 && cluster.firstProbesPending) {
      return afterFirstProbes(this.#core, cluster).then(() => this.read(cluster, scope, sql, params))
    }
    const session = scope.session
    const token = session?.positions.get(cluster.name)
    if (session !== undefined && token !== undefined) {
      if (!this.#checkBeside(cluster, session, token)) {
        // A position from a token not yet checked against the primary: check it first, then route.
        const check = session.settle(cluster.name)
        if (check !== undefined) return check.then(() => this.read(cluster, scope, sql, params))
        if (this.#maxWaitMs() > 0) return this.#readAtPosition(cluster, token, sql, params)
      }
      try {
        return this.#rywNode(cluster, token)
      } catch (err) {
        return Promise.reject(err)
      }
    }
    try {
      return this.#pickRead(cluster, scope)
    } catch (err) {
      return Promise.reject(err)
    }
  }

  /**
   * A connection for reads from the node's read-only pool: a balanced replica (one retry elsewhere
   * if checkout fails) or the primary.
   */
  async readConnection(
    cluster: Cluster,
    scope: Scope | undefined,
  ): Promise<{ node: RouterNode; conn: unknown }> {
    if (cluster.candidates.length === 0 && cluster.firstProbesPending)
      await afterFirstProbes(this.#core, cluster)
    const session = scope?.session
    if (session !== undefined && !this.#checkBeside(cluster, session, session.positions.get(cluster.name))) {
      const check = session.settle(cluster.name)
      if (check !== undefined) await check // a token's position is checked before it routes
    }
    const node = this.#pickRead(cluster, scope)
    try {
      return { node, conn: await node.acquire(true) }
    } catch (err) {
      const cls = classifyError(this.#driver, err)
      statementFailed(this.#core, cluster, node, err, true)
      const other =
        isNodeFailure(cls) && this.#config.retryReads && node !== cluster.primary
          ? this.retryTarget(cluster, node, scope?.fallback)
          : undefined
      if (other === undefined) throw withCallerStack(err)
      emitRetry(this.#core, cluster, node, other, err)
      return { node: other, conn: await acquireConnection(this.#core, cluster, other, true, true) }
    }
  }

  /**
   * Where a failed read goes next: another replica, or the primary if falling back is allowed
   * (`fallback`: the scope's override of the cluster's `fallbackToPrimary`).
   */
  retryTarget(cluster: Cluster, failed: RouterNode, fallback?: boolean): RouterNode | undefined {
    if (this.#core.closed) return undefined // close() aborted it: never reopen a pool behind close()
    const other = cluster.pickOther(failed)
    if (other !== undefined) return other
    const p = cluster.primary
    if ((fallback ?? cluster.fallbackToPrimary) && p?.available) return p
    return undefined
  }

  /**
   * After a failed read: maps the error, or retries once on another node for a connection error.
   * A read of a session that wrote (`token`) is retried only where the write is visible: a
   * replica known to have replayed it, else the primary. `fallback`: the scope's override of
   * `fallbackToPrimary`.
   */
  async #retryRead(
    cluster: Cluster,
    node: RouterNode,
    err: unknown,
    sql: Statement,
    params: readonly unknown[] | undefined,
    token?: string,
    fallback?: boolean,
  ): Promise<QueryResult> {
    const cls = classifyError(this.#driver, err)
    if (!isNodeFailure(cls) || !this.#config.retryReads)
      throw statementFailed(this.#core, cluster, node, err, true)
    statementFailed(this.#core, cluster, node, err, true)
    let other: RouterNode | undefined
    if (node === cluster.primary) other = undefined
    else if (token === undefined) other = this.retryTarget(cluster, node, fallback)
    else other = this.#caughtUpOther(cluster, node, token)
    if (other === undefined) throw withCallerStack(err)
    emitRetry(this.#core, cluster, node, other, err)
    try {
      return await other.run(sql, params, true)
    } catch (err2) {
      throw statementFailed(this.#core, cluster, other, err2, true)
    }
  }

  /**
   * The session's position in `cluster` when its read must be retried only where its writes are
   * visible (see `#retryRead`); `undefined` for a read of no such session.
   */
  #rywToken(scope: Scope, cluster: Cluster): string | undefined {
    return scope.session?.positions.get(cluster.name)
  }

  /**
   * The node for a read of a session at `token`, with no wait (`maxWaitMs: 0`): a replica known to
   * have replayed it, else the primary at once; the least-lagged replica's replay position is
   * then read in the background, for the next reads. Throws `PrimaryUnavailableError` when the
   * primary is needed and unusable.
   */
  #rywNode(cluster: Cluster, token: string): RouterNode {
    return this.#rywReplica(cluster, token) ?? this.#rywPrimary(cluster)
  }

  /**
   * A replica known to have replayed `token`; else `undefined`, and the least-lagged replica's
   * replay position is read in the background (spaced: see `#refreshReplay`). `reading`: a read
   * runs on the node returned (else only the background read may start).
   */
  #rywReplica(cluster: Cluster, token: string, reading = true): RouterNode | undefined {
    const c = cluster.candidates
    if (token === UNKNOWN_POSITION || c.length === 0) return undefined
    // (The balancer picks only for a read that runs: its state, e.g. round-robin's, is per read.)
    const picked = (c.length === 1 || !reading ? c[0] : cluster.balancer.pick(c)) as RouterNode
    const choice = chooseCatchUp(this.#driver, c as readonly RouterNode[], picked, token)
    if (choice.known) return choice.node
    this.#refreshReplay(cluster, choice.node, token)
    return undefined
  }

  /**
   * A read of a session that wrote (`position` mode, `maxWaitMs > 0`): a replica known (from
   * probes) to have replayed the session's token; else one that reaches it within `maxWaitMs`
   * (checked on the connection that then runs the read); else the primary.
   */
  async #readAtPosition(
    cluster: Cluster,
    token: string,
    sql: Statement,
    params: readonly unknown[] | undefined,
  ): Promise<QueryResult> {
    const c = cluster.candidates
    let node: RouterNode | undefined
    if (token !== UNKNOWN_POSITION && c.length > 0) {
      const picked = (c.length === 1 ? c[0] : cluster.balancer.pick(c)) as RouterNode
      const choice = chooseCatchUp(this.#driver, c as readonly RouterNode[], picked, token)
      if (choice.known) node = choice.node
      else {
        // Not known yet: ask the replica least behind, on the connection that then runs the read.
        const served = await this.#readIfCaughtUp(cluster, choice.node, token, sql, params)
        if (served !== undefined) return served
      }
    }
    if (node === undefined) node = this.#rywPrimary(cluster)
    try {
      return await node.run(sql, params, true)
    } catch (err) {
      return this.#retryRead(cluster, node, err, sql, params, token)
    }
  }

  /**
   * With no wait allowed (`maxWaitMs: 0`), for a session whose own write's position is still to
   * be read (`token` unknown): starts that read (shared by every session: see
   * `PrimaryPosition.afterWrite`) in the background, then the replica's, and returns true — the
   * read routes now, to the primary (correct for any position). False otherwise: a pending check
   * (a token's position) must settle before the read routes.
   */
  #checkBeside(cluster: Cluster, session: Session, token: string | undefined): boolean {
    if (token !== UNKNOWN_POSITION || this.#maxWaitMs() > 0 || !session.pendingWrites.has(cluster.name))
      return false
    if (session.checkRunning(cluster.name)) return true // (its start arranged what follows it)
    const check = session.settle(cluster.name)
    if (check !== undefined) void check.then(() => this.#afterCheck(cluster, session))
    return true
  }

  /**
   * After a session's position was read in the background (`maxWaitMs: 0`): if no replica is
   * known to have replayed it, reads a replica's replay position in the background right away,
   * so that the session's next reads can go to it with no check of their own. This one read is
   * not held back by the spacing of `#refreshReplay` (a read spaced after a sample that just
   * came back would often start too late for the session's next reads, which then all go to the
   * primary): it starts once per sampled position (the sessions sharing a sample share it too,
   * so at most one per primary-position sample), on the replica whose replay position was read
   * least recently and has no read running (they take turns, so that the sessions' reads spread
   * over the replicas).
   */
  #afterCheck(cluster: Cluster, session: Session): void {
    const token = session.positions.get(cluster.name)
    if (token === undefined || token === UNKNOWN_POSITION || this.#core.closed) return
    const c = cluster.candidates as readonly RouterNode[]
    if (c.length === 0 || caughtUpReplica(this.#driver, c, token) !== undefined) return
    if (this.#promptFor.get(cluster) === token) return
    this.#promptFor.set(cluster, token)
    let oldest: RouterNode | undefined
    let oldestAt = Number.POSITIVE_INFINITY
    for (const n of c) {
      const at = this.#refreshedAt.get(n) ?? Number.NEGATIVE_INFINITY
      if (at < oldestAt) {
        oldest = n
        oldestAt = at
      }
    }
    if (oldest !== undefined) this.#startReplayRead(cluster, oldest, token)
  }

  /** Per cluster, the sampled position the last prompt replay read (`#afterCheck`) was started for. */
  readonly #promptFor = new WeakMap<Cluster, string>()

  /** `readYourWrites.maxWaitMs` (0 outside `position` mode). */
  #maxWaitMs(): number {
    const ryw = this.#config.readYourWrites
    return ryw.mode === 'position' ? ryw.maxWaitMs : 0
  }

  /**
   * Reads `node`'s replay position in the background and records it (`maxWaitMs: 0`): one read at
   * a time per replica, on a connection of its read-only pool, shared by every session — the next
   * reads of any session whose token it covers then go to that replica with no check of their own.
   * A failure only counts for passive health (the reads that asked went to the primary anyway).
   */
  #refreshReplay(cluster: Cluster, node: RouterNode, token: string): void {
    if (this.#core.closed) return
    const now = performance.now()
    // (`Infinity` while one runs: `now - Infinity` is below any spacing.)
    if (now - (this.#refreshedAt.get(node) ?? Number.NEGATIVE_INFINITY) < REPLAY_REFRESH_SPACING_MS) return
    this.#startReplayRead(cluster, node, token)
  }

  /** Starts one background replay-position read of `node` (marked running until it ends). */
  #startReplayRead(cluster: Cluster, node: RouterNode, token: string): void {
    const now = performance.now()
    this.#refreshedAt.set(node, Number.POSITIVE_INFINITY)
    // (`then`: it never rejects.)
    this.#readReplay(cluster, node, token).then(() => this.#refreshedAt.set(node, now))
  }

  /**
   * When each replica's last background replay-position read started (`performance.now()`), or
   * `Infinity` while one is running.
   */
  readonly #refreshedAt = new WeakMap<RouterNode, number>()

  /**
   * One background read of `node`'s replay position (see {@link ReadPath.#refreshReplay}; `token`
   * only tells the driver the position format, nothing waits for it); never rejects.
   */
  async #readReplay(cluster: Cluster, node: RouterNode, token: string): Promise<void> {
    let conn: unknown
    try {
      conn = await node.acquire(true)
    } catch (err) {
      statementFailed(this.#core, cluster, node, err, true)
      return
    }
    let destroy = false
    try {
      const replay = await this.#driver.waitForPosition(conn, token, 0)
      if (replay !== undefined) node.replayed(replay)
    } catch (err) {
      destroy = mustClose(this.#driver, err)
      if (this.#nodeFailure(err)) statementFailed(this.#core, cluster, node, err, true)
    } finally {
      node.release(conn, destroy)
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
    const maxWaitMs = this.#maxWaitMs()
    let conn: unknown
    try {
      conn = await node.acquire(true)
    } catch (err) {
      statementFailed(this.#core, cluster, node, err, true)
      return undefined
    }
    let destroy = false
    try {
      const replay = await waitForCatchUp(this.#driver, conn, token, maxWaitMs, this.#nodeFailure)
      if (replay === undefined) return undefined
      node.replayed(replay)
      return await node.runOn(conn, sql, params)
    } catch (err) {
      destroy = mustClose(this.#driver, err)
      if (this.#nodeFailure(err)) {
        statementFailed(this.#core, cluster, node, err, true)
        return undefined // read it from the primary instead
      }
      throw statementFailed(this.#core, cluster, node, err, true)
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
        return this.#rywPrimary(cluster)
      const token = ryw.mode === 'position' ? session.positions.get(cluster.name) : undefined
      if (token !== undefined) {
        if (token === UNKNOWN_POSITION) return this.#rywPrimary(cluster)
        return (
          (caughtUpReplica(this.#driver, c, token) as RouterNode | undefined) ?? this.#rywPrimary(cluster)
        )
      }
    }
    if (c.length === 0) return this.#fallback(cluster, scope?.fallback)
    return c.length === 1 ? (c[0] as RouterNode) : (cluster.balancer.pick(c) as RouterNode)
  }

  /** Whether an error means the node (or the connection) failed: see `isNodeFailure`. */
  readonly #nodeFailure = (err: unknown): boolean => isNodeFailure(classifyError(this.#driver, err))

  /** For a retry of a session's read: another replica that replayed `token`, else the usable primary. */
  #caughtUpOther(cluster: Cluster, failed: RouterNode, token: string): RouterNode | undefined {
    if (this.#core.closed) return undefined
    if (token !== UNKNOWN_POSITION) {
      const other = caughtUpReplica(this.#driver, cluster.candidates as readonly RouterNode[], token, failed)
      if (other !== undefined) return other
    }
    const p = cluster.primary
    if (p === undefined || !p.available) return undefined
    cluster.readYourWritesRedirects++
    return p
  }

  /**
   * The primary for a read of a session that wrote (read-your-writes), counted in
   * `readYourWritesRedirects` once it is known to be usable (else `PrimaryUnavailableError`).
   */
  #rywPrimary(cluster: Cluster): RouterNode {
    const p = requirePrimary(cluster)
    cluster.readYourWritesRedirects++
    return p
  }

  /**
   * No usable replica: the primary if `fallbackToPrimary` (or the scope's `fallback` override),
   * else `NoHealthyReplicaError` saying why.
   */
  #fallback(cluster: Cluster, fallback: boolean | undefined): RouterNode {
    if (!(fallback ?? cluster.fallbackToPrimary)) {
      const off =
        fallback === false
          ? 'target_session_attrs=standby (router.pool() reads never fall back to the primary)'
          : 'fallbackToPrimary is false'
      throw new NoHealthyReplicaError(
        cluster.name,
        cluster.replicas.length === 0
          ? `no replica configured in cluster "${cluster.name}" and ${off}`
          : `no usable replica in cluster "${cluster.name}" (${cluster.replicas
              .map((r) => `${r.name}: ${cluster.unusableReason(r) ?? 'usable'}`)
              .join(', ')}) and ${off}`,
      )
    }
    return requirePrimary(cluster)
  }
}
