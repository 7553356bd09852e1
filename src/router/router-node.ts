import { AsyncResource } from 'node:async_hooks'
import type { Balancer, NodeView } from '../balancer/balancer.js'
import { NodeAbortError } from '../errors/node-abort-error.js'
import { QueryTimeoutError } from '../errors/query-timeout-error.js'
import { WriteOutcomeUnknownError } from '../errors/write-outcome-unknown-error.js'
import type { MonitoredNode } from '../health/monitored-node.js'
import { NodeHealth, type NodeState } from '../health/node-health.js'
import { redactUrlValue } from '../util/redact.js'
import type {
  Driver,
  DriverNodeOptions,
  DriverPool,
  DriverProber,
  ErrorClass,
  NodeRole,
  ProbeResult,
  QueryResult,
} from './driver.js'
import type { ResolvedHealthCheck, ResolvedNode } from './resolved-config.js'
import { captureSettlers, dropSettlers, JobList, RunJob, settlers } from './run-job.js'
import type { Statement } from './statement.js'
import { StatementExpiry } from './statement-expiry.js'

/** One served statement, as seen by `router.onQuery` listeners (metrics, tracing). */
export interface QueryObservation {
  /** Cluster (shard) name. */
  readonly cluster: string
  /** Node that ran the statement. */
  readonly node: string
  /** The node's role now. */
  readonly role: NodeRole
  /** Time on the node (connection checkout excluded), in ms. */
  readonly durationMs: number
  /** Whether the statement succeeded. */
  readonly ok: boolean
}

/** A listener of served statements. */
export type QueryListener = (observation: QueryObservation) => void

/** A pending connection checkout that can be abandoned when the node goes down. */
interface PendingAcquire {
  settled: boolean
  reject: (err: Error) => void
}

/** Arms a {@link RunJob}'s `queryTimeoutMs` timer (module-level: `setTimeout` with arguments, no closure per statement). */
function jobTimedOut<Conn>(node: RouterNode<Conn>, job: RunJob<Conn>): void {
  node.jobTimedOut(job)
}

/**
 * One database endpoint inside a router: its pools (a regular one, and for a primary a lazily made
 * read-only one), its health state machine, and its live counters. It tracks every checked-out
 * connection so that marking the node down can abort all work on it at once.
 */
export class RouterNode<Conn = unknown> implements NodeView, MonitoredNode {
  readonly name: string
  readonly cluster: string
  readonly options: ResolvedNode
  readonly redactedUrl: string
  // State. Every field is private: it changes only through the intent methods below (the health
  // monitor's probe outcomes, passive health, topology changes, role discovery), so each
  // transition has one author; others read it through getters.
  readonly #health: NodeHealth
  #role: NodeRole
  #reportedRole: NodeRole | undefined = undefined
  #weight: number
  #inFlight = 0
  #latencyMs = 0
  #trusted = true
  #lagMs: number | undefined = undefined
  #position: string | undefined = undefined
  #replicating = true
  #awaitingProbe = false
  #seenHealthy = false
  #drained = false
  #draining: Promise<void> | undefined = undefined
  #lagging = false
  #nextProbeAt = 0
  #hungProbes = 0
  #probes = 0
  #probing = false
  #lastProbeMs: number | undefined = undefined
  #prober: DriverProber | undefined = undefined
  #lastError: string | undefined = undefined
  #lastFailure: unknown = undefined
  #queries = 0
  #errors = 0
  #timeoutListener: (() => void) | undefined = undefined
  /** The cluster's balancer when it has `observe` and this node is a replica (set by `Cluster.rebuild`). */
  #observer: Balancer | undefined = undefined
  readonly #driver: Driver<Conn>
  /** Connections a timed-out statement left unfit for reuse: `release` closes them. */
  readonly #tainted = new Set<Conn>()
  readonly #pool: DriverPool<Conn>
  #readOnlyPool: DriverPool<Conn> | undefined
  readonly #busy = new Map<Conn, DriverPool<Conn>>()
  readonly #pending = new Set<PendingAcquire>()
  /** Statements of `run` in progress: checking out, or running. */
  readonly #jobs = new JobList<Conn>()
  /** Statements started, for sampling which are timed. */
  #sampled = 0
  #ended = false
  #ending: Promise<void> | undefined

  readonly #onError: (err: unknown) => void
  /** The router's `onQuery` listeners (shared array; empty unless someone listens). */
  readonly listeners: QueryListener[]

  constructor(
    driver: Driver<Conn>,
    options: ResolvedNode,
    cluster: string,
    health: ResolvedHealthCheck,
    onError: (err: unknown) => void,
    listeners: QueryListener[] = [],
  ) {
    this.#onError = onError
    this.listeners = listeners
    this.#driver = driver
    this.options = options
    this.name = options.name
    this.#role = options.role
    this.cluster = cluster
    this.#weight = options.weight
    this.redactedUrl = redactUrlValue(options.url)
    this.#health = new NodeHealth(health.failureThreshold, health.successThreshold)
    this.#pool = driver.createPool(this.#poolOptions(false), onError)
  }

  /** The node's driver. */
  get driver(): Driver<Conn> {
    return this.#driver
  }

  /** The node's health state. */
  get state(): NodeState {
    return this.#health.state
  }

  /** Whether this node can take queries now (not down and trusted). */
  get available(): boolean {
    return this.#health.state !== 'down' && this.#trusted
  }

  /** The role the router uses the node in: configured, or assigned by discovery. */
  get role(): NodeRole {
    return this.#role
  }

  /** The role the node reported in its last probe. */
  get reportedRole(): NodeRole | undefined {
    return this.#reportedRole
  }

  /** Its weight for the balancers (configured, or set by `setWeight`). */
  get weight(): number {
    return this.#weight
  }

  /** Statements running and connections checked out now (including checkouts in progress). */
  get inFlight(): number {
    return this.#inFlight
  }

  /** Smoothed latency of its statements, in ms (0 until measured). */
  get latencyMs(): number {
    return this.#latencyMs
  }

  /** False while the node reports a role other than its configured one. */
  get trusted(): boolean {
    return this.#trusted
  }

  /** Replication lag in ms (replicas), undefined until measured. */
  get lagMs(): number | undefined {
    return this.#lagMs
  }

  /** Last replication position known: reported by a probe, or checked on a connection. */
  get position(): string | undefined {
    return this.#position
  }

  /** False when the node reported its replication stopped. */
  get replicating(): boolean {
    return this.#replicating
  }

  /**
   * No probe of it has succeeded yet, while one is needed before use: every node of a router with
   * health checks, and a replica added at runtime. Such a replica is no candidate for reads.
   */
  get awaitingProbe(): boolean {
    return this.#awaitingProbe
  }

  /** A probe of it succeeded, or a connection to it was opened, at least once. */
  get seenHealthy(): boolean {
    return this.#seenHealthy
  }

  /** Drained (or being removed): takes no new queries; its pools close once in-flight work is done. */
  get drained(): boolean {
    return this.#drained
  }

  /** The drain in progress or done (see {@link drain}). */
  get draining(): Promise<void> | undefined {
    return this.#draining
  }

  /** Whether the lag policy currently excludes this replica. */
  get lagging(): boolean {
    return this.#lagging
  }

  /** Time of the next due probe (ms since epoch); backoff moves it out for down nodes whose probes hang. */
  get nextProbeAt(): number {
    return this.#nextProbeAt
  }

  /** Consecutive probes that hung (hit the deadline, or failed only after most of it): drives the backoff. */
  get hungProbes(): number {
    return this.#hungProbes
  }

  /** Probes finished so far (succeeded or failed). */
  get probes(): number {
    return this.#probes
  }

  /** Whether a probe of it is running. */
  get probing(): boolean {
    return this.#probing
  }

  /** Duration of the last finished probe, in ms. */
  get lastProbeMs(): number | undefined {
    return this.#lastProbeMs
  }

  /** The prober keeping this node's probe connection (made by the health monitor on first use). */
  get prober(): DriverProber | undefined {
    return this.#prober
  }

  /** The last failure's message (redacted). */
  get lastError(): string | undefined {
    return this.#lastError
  }

  /** The error behind `lastError`, as raised (kept as the `cause` of errors about this node). */
  get lastFailure(): unknown {
    return this.#lastFailure
  }

  /** Statements served successfully. */
  get queries(): number {
    return this.#queries
  }

  /** Statements and checkouts that failed on this node (any error). */
  get errors(): number {
    return this.#errors
  }

  /** Told when a statement passes `queryTimeoutMs` (see {@link onStatementTimeout}). */
  get timeoutListener(): (() => void) | undefined {
    return this.#timeoutListener
  }

  /** The balancer told of every statement this node serves (see {@link setObserver}). */
  get observer(): Balancer | undefined {
    return this.#observer
  }

  // ---- state changes: health (the health monitor) --------------------------------------------

  /** A probe of this node started. */
  probeStarted(): void {
    this.#probing = true
  }

  /**
   * A probe answered after `ms`: records what the node reported (role, position) and that it was
   * reached; a node awaiting its first good probe becomes usable. Returns whether it was awaiting
   * one. The health state itself changes with {@link recordSuccess}, once the caller has applied
   * roles, trust and lag.
   */
  probeSucceeded(result: ProbeResult, ms: number): boolean {
    this.#lastProbeMs = ms
    this.#probes++
    this.#hungProbes = 0
    this.#reportedRole = result.role
    this.#seenHealthy = true
    this.#position = result.position
    const was = this.#awaitingProbe
    this.#awaitingProbe = false
    return was
  }

  /** A probe failed after `ms`; `hung`: it hit the deadline or most of it (drives the backoff). */
  probeFailed(ms: number, hung: boolean): void {
    this.#lastProbeMs = ms
    this.#probes++
    this.#hungProbes = hung ? this.#hungProbes + 1 : 0
  }

  /** The probe ended (either way): the next one is due at `at` (ms since epoch). */
  probeEnded(at: number): void {
    this.#probing = false
    this.#nextProbeAt = at
  }

  /** Keeps `prober` as this node's prober (its probe connection); returns it. */
  keepProber(prober: DriverProber): DriverProber {
    this.#prober = prober
    return prober
  }

  /** Closes the kept probe connection, if any. */
  closeProber(): void {
    const prober = this.#prober
    this.#prober = undefined
    prober?.close()
  }

  /** Sets whether the node is trusted (its reported role matches its role); returns whether that changed. */
  setTrusted(trusted: boolean): boolean {
    if (trusted === this.#trusted) return false
    this.#trusted = trusted
    return true
  }

  /**
   * Records a replica's lag (`undefined`: unknown) and whether it replicates; it is excluded
   * (`lagging`) when it does not replicate or lags more than `maxLagMs` (`0`: no limit). Returns
   * whether the exclusion changed.
   */
  recordLag(lagMs: number | undefined, replicating: boolean, maxLagMs: number): boolean {
    this.#lagMs = lagMs
    this.#replicating = replicating
    const lagging = !replicating || (maxLagMs > 0 && lagMs !== undefined && lagMs > maxLagMs)
    if (lagging === this.#lagging) return false
    this.#lagging = lagging
    return true
  }

  /** A success (probe) for the health state machine; returns the new state if it changed. */
  recordSuccess(): NodeState | undefined {
    return this.#health.success()
  }

  /**
   * A failure (a failed probe, or a connection error of a real query), its message redacted as
   * `reason`: kept as `lastError` / `lastFailure`, and counted by the health state machine unless
   * the node is down already. Returns the new state if it changed.
   */
  recordFailure(reason: string, err: unknown): NodeState | undefined {
    this.#lastError = reason
    this.#lastFailure = err
    if (this.#health.state === 'down') return undefined
    return this.#health.failure()
  }

  /** Makes `listener` hear of every statement that passes `queryTimeoutMs`, unless one listens already. */
  onStatementTimeout(listener: () => void): void {
    this.#timeoutListener ??= listener
  }

  // ---- state changes: the cluster and the router ---------------------------------------------

  /** No reads until a probe of it succeeds (health checks on, or added at runtime). */
  awaitProbe(): void {
    this.#awaitingProbe = true
  }

  /** Uses the node in `role` (role discovery); it is trusted unless it reported another role. */
  assignRole(role: NodeRole): void {
    this.#role = role
    this.#trusted = this.#reportedRole === undefined || this.#reportedRole === role
  }

  /** Sets its weight for the balancers (already validated). */
  setWeight(weight: number): void {
    this.#weight = weight
  }

  /** Sets the balancer told of every statement this node serves (`undefined`: none). */
  setObserver(observer: Balancer | undefined): void {
    this.#observer = observer
  }

  /** A connection to the node was opened: it has been reached. */
  connected(): void {
    this.#seenHealthy = true
  }

  /** A statement or checkout failed on this node (counted in `errors`). */
  recordError(): void {
    this.#errors++
  }

  /**
   * A connection saw the node replay up to `position`: kept when it is ahead of the known one
   * (read-your-writes checks it against sessions' positions).
   */
  replayed(position: string): void {
    if (this.#position === undefined || this.#driver.positionReached(position, this.#position))
      this.#position = position
  }

  /**
   * Drains the node: takes no new queries from now on (`marked` is called then, to rebuild the
   * candidate list), in-flight work may finish up to `timeoutMs`, then the rest is aborted and the
   * pools close; `done` gets the number of aborted pieces of work. Exactly once: later calls
   * return the same promise.
   */
  drain(timeoutMs: number, marked: () => void, done: (aborted: number) => void): Promise<void> {
    if (this.#draining !== undefined) return this.#draining
    this.#drained = true
    marked()
    this.#draining = (async () => {
      const deadline = Date.now() + timeoutMs
      while (this.#inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
      const aborted = this.abortAll()
      await this.end()
      done(aborted)
    })()
    return this.#draining
  }

  // ---- work ----------------------------------------------------------------------------------

  /** Checks out a connection; `readOnly` uses the node's read-only pool (made on first use). */
  acquire(readOnly = false): Promise<Conn> {
    if (this.#ended) return Promise.reject(new NodeAbortError(this.name))
    const pool = readOnly ? this.#roPool() : this.#pool
    this.#inFlight++
    return new Promise<Conn>((resolve, reject) => {
      const pending: PendingAcquire = { settled: false, reject }
      this.#pending.add(pending)
      pool.acquire().then(
        (conn) => {
          this.#pending.delete(pending)
          if (pending.settled) {
            pool.release(conn, true)
            return
          }
          pending.settled = true
          this.#busy.set(conn, pool)
          resolve(conn)
        },
        (err: unknown) => {
          this.#pending.delete(pending)
          if (pending.settled) return
          pending.settled = true
          this.#inFlight--
          reject(err)
        },
      )
    })
  }

  /**
   * Returns a connection got from `acquire`; `destroy` closes it instead of pooling it (so does a
   * timed-out statement that left it unfit for reuse).
   */
  release(conn: Conn, destroy: boolean): void {
    if (this.#tainted.size > 0 && this.#tainted.delete(conn)) destroy = true
    const pool = this.#busy.get(conn)
    if (pool === undefined) return
    this.#busy.delete(conn)
    this.#inFlight--
    pool.release(conn, destroy)
  }

  /**
   * Runs one statement on a pooled connection, recording latency, bounded by `queryTimeoutMs`
   * (see {@link StatementExpiry}: `QueryTimeoutError`). Driver errors are thrown untouched, but for
   * a `write` (a write or unscoped statement on the primary) a connection error after the
   * statement was sent becomes a `WriteOutcomeUnknownError`.
   * The hot path: one promise, and one {@link RunJob} whose single callback takes the checkout and
   * then the result (the driver's callback methods when it has them), no awaits; with a timeout,
   * one timer per statement.
   */
  run(
    stmt: unknown,
    params: readonly unknown[] | undefined,
    readOnly = false,
    write = false,
  ): Promise<QueryResult> {
    const promise = new Promise<QueryResult>(captureSettlers)
    this.runTo(stmt, params, readOnly, settlers.resolve, settlers.reject, write)
    return promise
  }

  /**
   * {@link RouterNode.run} with its outcome given to `resolve` / `reject` (once, possibly before
   * `runTo` returns) instead of a promise: for a caller that settles a promise of its own (the
   * postgres.js facade settles its query's).
   */
  runTo(
    stmt: unknown,
    params: readonly unknown[] | undefined,
    readOnly: boolean,
    resolve: (r: QueryResult) => void,
    reject: (err: unknown) => void,
    write = false,
  ): void {
    if (this.#ended) {
      reject(new NodeAbortError(this.name))
      return
    }
    const pool = readOnly ? this.#roPool() : this.#pool
    const job = new RunJob<Conn>(this, pool, stmt as Statement, params, resolve, reject, write)
    this.#inFlight++
    this.#jobs.link(job)
    if (pool.acquireCallback !== undefined) pool.acquireCallback(job.callback)
    else pool.acquire().then((c) => job.callback(undefined, c), job.callback)
  }

  /** Step 1 of a {@link RunJob}: a connection was checked out (or failed to be), so run the statement. */
  jobConnected(job: RunJob<Conn>, err: unknown, conn: Conn | undefined): void {
    if (err != null || conn === undefined) {
      this.#jobs.unlink(job)
      if (job.settled) return // aborted while connecting
      job.settled = true
      this.#inFlight--
      job.reject(err ?? new Error('the driver returned no connection'))
      dropSettlers(job)
      return
    }
    if (job.settled) {
      this.#jobs.unlink(job)
      job.pool.release(conn, true) // aborted while connecting
      return
    }
    job.conn = conn
    // The latency average samples one statement in 8 (a clock read is ~80 ns of a ~1 µs budget);
    // every one is timed while `onQuery` listeners or an observing balancer want durations, or
    // when the node has a query timeout (whose timer is armed here, as the statement is sent).
    const timeoutMs = this.options.queryTimeoutMs
    if (timeoutMs > 0) {
      job.started = performance.now()
      job.timer = setTimeout(jobTimedOut, timeoutMs, this, job)
      job.timer.unref()
    } else {
      job.started =
        this.listeners.length > 0 || this.#observer !== undefined || (this.#sampled++ & 7) === 0
          ? performance.now()
          : -1
    }
    const driver = this.#driver
    // Listeners (metrics, tracing) must run in the caller's async context: bind the completion
    // to it, only when someone listens (binding costs an allocation).
    const complete = this.listeners.length > 0 ? AsyncResource.bind(job.callback) : job.callback
    try {
      if (driver.executeCallback !== undefined) driver.executeCallback(conn, job.stmt, job.params, complete)
      else driver.execute(conn, job.stmt, job.params).then((r) => complete(undefined, r), complete)
    } catch (e) {
      complete(e ?? new Error('the driver threw'))
    }
  }

  /** Step 2 of a {@link RunJob}: the statement finished; release the connection and settle. */
  jobDone(job: RunJob<Conn>, err: unknown, res: QueryResult | undefined): void {
    const timer = job.timer
    if (timer !== undefined) {
      const expiry = job.expiry
      if (expiry !== undefined) {
        expiry.ended(err, res) // settles through #settle once its cancellation settled
        return
      }
      clearTimeout(timer)
    }
    this.#settle(job, err, res, undefined)
  }

  /** A {@link RunJob}'s statement passed `queryTimeoutMs`: cancel it (see {@link StatementExpiry}). */
  jobTimedOut(job: RunJob<Conn>): void {
    const conn = job.conn
    if (job.settled || conn === undefined || job.expiry !== undefined) return
    job.expiry = new StatementExpiry<Conn>(
      this,
      conn,
      job.started,
      job.write,
      this.#classify,
      () => job.pool.destroy(conn),
      (err, res, destroy) => this.#settle(job, err, res as QueryResult | undefined, destroy),
    )
  }

  /** Releases a job's connection (`destroy`: closed; `undefined`: decided by the error) and settles it. */
  #settle(job: RunJob<Conn>, err: unknown, res: QueryResult | undefined, destroy: boolean | undefined): void {
    const conn = job.conn as Conn
    this.#jobs.unlink(job)
    this.#inFlight--
    job.settled = true
    const ms = job.started < 0 ? -1 : performance.now() - job.started
    if (err == null) {
      this.observe(ms)
      job.pool.release(conn, destroy === true)
      job.resolve(res as QueryResult)
      dropSettlers(job)
      return
    }
    const cls = this.#classify(err)
    const failure = this.#failed(err, cls, ms, job.write)
    job.pool.release(conn, destroy ?? (cls === 'connection' || cls === 'timeout'))
    job.reject(failure)
    dropSettlers(job)
  }

  /**
   * The one ending of a failed statement, for `run` and `runOn`: observed (`ms`, ok false) and
   * mapped — for a `write`, a connection error after it was sent becomes a
   * `WriteOutcomeUnknownError`; other errors are returned untouched. Returns what to reject with.
   */
  #failed(err: unknown, cls: ErrorClass, ms: number, write: boolean): unknown {
    this.observe(ms, false)
    return write && cls === 'connection' ? new WriteOutcomeUnknownError(this.name, this.cluster, err) : err
  }

  /**
   * Bounds one statement sent on `conn` (checked out with `acquire`) by `queryTimeoutMs`, as `run`
   * does: returns the callback to give the statement's outcome to, which calls `done` once — with
   * the outcome, or after a timeout with a `QueryTimeoutError` (or the result, if it completed
   * anyway) once the cancellation settled; a connection left unfit for reuse is then closed by
   * `release`. Without a timeout it returns `done` itself.
   */
  timed<T>(
    conn: Conn,
    write: boolean,
    done: (err: unknown, value?: T) => void,
  ): (err: unknown, value?: T) => void {
    const ms = this.options.queryTimeoutMs
    if (ms <= 0) return done
    const started = performance.now()
    let expiry: StatementExpiry<Conn> | undefined
    let ended = false
    const timer = setTimeout(() => {
      if (ended) return
      expiry = new StatementExpiry<Conn>(
        this,
        conn,
        started,
        write,
        this.#classify,
        () => (this.#busy.get(conn) ?? this.#pool).destroy(conn),
        (err, value, destroy) => {
          if (destroy) this.#tainted.add(conn)
          done(err, value as T)
        },
      )
    }, ms)
    timer.unref()
    return (err, value) => {
      if (ended) return
      ended = true
      if (expiry !== undefined) expiry.ended(err, value)
      else {
        clearTimeout(timer)
        done(err, value)
      }
    }
  }

  /**
   * Runs one statement on a connection checked out with `acquire` (a session's write, the
   * read-your-writes catch-up read, a transaction's statements): the one path of a statement on a
   * held connection. Bounded by `queryTimeoutMs` (see {@link timed}); observed once, with its
   * duration and outcome, as `run` observes its statements (`onQuery`, latency, the balancer). For
   * a `write` (a session's write, a `COMMIT`), a connection error after it was sent becomes a
   * `WriteOutcomeUnknownError`. Other driver errors are thrown untouched. The caller releases
   * `conn`.
   */
  runOn(
    conn: Conn,
    stmt: Statement,
    params: readonly unknown[] | undefined,
    write = false,
  ): Promise<QueryResult> {
    return new Promise<QueryResult>((resolve, reject) => {
      const started = performance.now()
      const done = this.timed<QueryResult>(conn, write, (err, res) => {
        const ms = performance.now() - started
        if (err == null) {
          this.observe(ms)
          resolve(res as QueryResult)
        } else reject(this.#failed(err, this.#classify(err), ms, write))
      })
      const driver = this.#driver
      try {
        // The driver's callback form when it has one (as `run` does): no promise of the driver's
        // own, nor (mysql2) its promise wrapper's stack capture per statement.
        if (driver.executeCallback !== undefined) {
          const cb = (e: unknown, r?: unknown): void =>
            e == null ? done(undefined, r as QueryResult) : done(e)
          // `onQuery` listeners run in the caller's async context (as with `run`): bind only then.
          driver.executeCallback(conn, stmt, params, this.listeners.length > 0 ? AsyncResource.bind(cb) : cb)
        } else
          driver.execute(conn, stmt, params).then(
            (r) => done(undefined, r),
            (e: unknown) => done(e ?? new Error('the driver failed')),
          )
      } catch (e) {
        done(e ?? new Error('the driver threw'))
      }
    })
  }

  /** The core's classification of an error raised on this node (see `classifyError`). */
  readonly #classify = (err: unknown): ErrorClass => {
    if (err instanceof NodeAbortError) return 'connection'
    if (err instanceof QueryTimeoutError) return 'timeout'
    if (err instanceof WriteOutcomeUnknownError) return this.#classify(err.cause)
    return this.#driver.classify(err)
  }

  /**
   * Records a statement's outcome: latency (exponentially smoothed) of successes, and `onQuery`
   * listeners. `ms < 0`: the statement was not timed (sampling), only counted.
   */
  observe(ms: number, ok = true): void {
    if (ok) {
      this.#queries++
      if (ms >= 0) this.#latencyMs = this.#latencyMs === 0 ? ms : this.#latencyMs * 0.9 + ms * 0.1
    }
    if (ms < 0) return
    const observer = this.#observer
    if (observer !== undefined) {
      try {
        observer.observe?.(this, ms, ok)
      } catch {
        // a balancer's bookkeeping never disturbs a query
      }
    }
    const listeners = this.listeners
    if (listeners.length === 0) return
    const o: QueryObservation = {
      cluster: this.cluster,
      node: this.name,
      role: this.#role,
      durationMs: ms,
      ok,
    }
    for (const l of listeners) {
      try {
        l(o)
      } catch {
        // a metrics listener never disturbs a query
      }
    }
  }

  /** Aborts all work on this node: pending checkouts fail at once, checked-out connections are destroyed. */
  abortAll(): number {
    let n = 0
    for (const p of this.#pending) {
      if (p.settled) continue
      p.settled = true
      this.#inFlight--
      p.reject(new NodeAbortError(this.name))
      n++
    }
    this.#pending.clear()
    for (const [conn, pool] of this.#busy) {
      pool.destroy(conn)
      n++
    }
    for (let job = this.#jobs.first; job !== undefined; ) {
      const next: RunJob<Conn> | undefined = job.next
      if (job.conn !== undefined) {
        job.pool.destroy(job.conn) // its statement fails now, and jobDone settles it
        n++
      } else if (!job.settled) {
        job.settled = true
        this.#jobs.unlink(job)
        this.#inFlight--
        job.reject(new NodeAbortError(this.name))
        dropSettlers(job)
        n++
      }
      job = next
    }
    return n
  }

  /** Pool occupancy of this node (both pools). */
  counts(): { total: number; idle: number; waiting: number } {
    const a = this.#pool.counts()
    if (this.#readOnlyPool === undefined) return a
    const b = this.#readOnlyPool.counts()
    return { total: a.total + b.total, idle: a.idle + b.idle, waiting: a.waiting + b.waiting }
  }

  /** Ends the pools (after in-flight work was released or aborted). Idempotent: the pools end once. */
  end(): Promise<void> {
    if (this.#ending !== undefined) return this.#ending
    this.#ended = true
    this.closeProber()
    const ends = [this.#pool.end()]
    if (this.#readOnlyPool !== undefined) ends.push(this.#readOnlyPool.end())
    this.#ending = Promise.allSettled(ends).then(() => undefined)
    return this.#ending
  }

  /** The options the driver gets for this node. */
  #poolOptions(readOnly: boolean) {
    const o = this.options
    return {
      name: o.name,
      url: o.url,
      pool: o.pool,
      connectTimeoutMs: o.connectTimeoutMs,
      queryTimeoutMs: o.queryTimeoutMs,
      readOnly,
    }
  }

  /** The options for a cancel request's connection (made only when a statement timed out). */
  cancelOptions(): DriverNodeOptions {
    return this.#poolOptions(false)
  }

  /** The options for a probe connection. */
  probeOptions(timeoutMs: number) {
    return { ...this.#poolOptions(false), connectTimeoutMs: timeoutMs }
  }

  #roPool(): DriverPool<Conn> {
    if (this.#readOnlyPool === undefined)
      this.#readOnlyPool = this.#driver.createPool(this.#poolOptions(true), this.#onError)
    return this.#readOnlyPool
  }
}
