import type { DriverPool, QueryResult } from './driver.js'
import type { Statement } from './statement.js'
import type { StatementExpiry } from './statement-expiry.js'

/** The settle functions of the promise made last with {@link captureSettlers}. */
export const settlers: {
  resolve: (r: QueryResult | PromiseLike<QueryResult>) => void
  reject: (err: unknown) => void
} = {
  resolve: () => {},
  reject: () => {},
}

/**
 * A promise executor that leaves the settle functions in {@link settlers}: `new Promise(captureSettlers)`
 * makes no executor closure per query (Node 20 has no `Promise.withResolvers`).
 */
export function captureSettlers(
  resolve: (r: QueryResult | PromiseLike<QueryResult>) => void,
  reject: (err: unknown) => void,
): void {
  settlers.resolve = resolve
  settlers.reject = reject
}

/**
 * What a pool facade makes of a routed statement's result (its driver's own result shape), applied
 * before the caller's promise settles: `FacadeHost.queryAs`, with no `then` of the facade's.
 */
export type ResultMap = (result: QueryResult) => unknown

/**
 * `resolve`, or one that resolves with `map`'s value of the result (a `map` that throws rejects).
 *
 * @example
 * ```ts
 * node.runTo(sql, params, true, resolveMapped(resolve, nativeResult), reject)
 * ```
 */
export function resolveMapped(
  resolve: (r: QueryResult | PromiseLike<QueryResult>) => void,
  map: ResultMap | undefined,
): (r: QueryResult) => void {
  if (map === undefined) return resolve
  return (r) => {
    let value: unknown
    try {
      value = map(r)
    } catch (err) {
      resolve(Promise.reject(err))
      return
    }
    resolve(value as QueryResult) // the facade's own shape: the caller's promise is typed by `queryAs`
  }
}

/**
 * Settles a caller's promise (through its `resolve`) with what `onFailure` makes of `err`, with
 * `onFailure` run in a promise reaction that the caller's promise already follows: there the
 * caller's async stack is reachable (`withCallerStack` appends it to errors), as it is in a `then`
 * on a node's promise. Only a failure pays for it (two promises); a success settles the caller's
 * promise directly, so the hot path needs no `then` of its own. `map`: as in {@link resolveMapped}.
 *
 * @example
 * ```ts
 * const promise = new Promise<QueryResult>(captureSettlers)
 * const resolve = settlers.resolve
 * node.runTo(sql, params, true, resolve, (err) => settleFailure(resolve, err, (e) => retry(e)))
 * ```
 */
export function settleFailure(
  resolve: (r: QueryResult | PromiseLike<QueryResult>) => void,
  err: unknown,
  onFailure: (err: unknown) => QueryResult | Promise<QueryResult>,
  map?: ResultMap,
): void {
  let fail: (e: unknown) => void = () => {}
  const failed = new Promise<never>((_, reject) => {
    fail = reject
  })
  // The caller's promise follows `handled` before `failed` rejects: `onFailure`'s reaction runs
  // after the job that links them, so its promise chain reaches the caller's `await`.
  const handled = failed.then(undefined, onFailure)
  resolve(map === undefined ? handled : (handled.then(map) as Promise<QueryResult>))
  fail(err)
}

/** What runs a {@link RunJob}'s two steps (a `RouterNode`). */
export interface JobRunner<Conn> {
  /** Step 1: the checkout finished (`err`, or a connection). */
  jobConnected(job: RunJob<Conn>, err: unknown, conn: Conn | undefined): void
  /** Step 2: the statement finished. */
  jobDone(job: RunJob<Conn>, err: unknown, res: QueryResult | undefined): void
}

/**
 * One statement of `RouterNode.run` in flight. Its one callback is handed to the driver twice:
 * first for the checkout, then for the statement's result.
 */
export class RunJob<Conn> {
  conn: Conn | undefined = undefined
  /** Settled, or abandoned by `abortAll` while checking out. */
  settled = false
  started = 0
  /** The `queryTimeoutMs` timer, armed when the statement is sent (only when the node has a timeout). */
  timer: NodeJS.Timeout | undefined = undefined
  /** Set when the timer fired: the statement is being cancelled. */
  expiry: StatementExpiry<Conn> | undefined = undefined
  /** Links of the node's {@link JobList}. */
  prev: RunJob<Conn> | undefined = undefined
  next: RunJob<Conn> | undefined = undefined
  linked = false
  /** Settles the job's promise; `dropSettlers` drops it once the job settled. */
  resolve: (r: QueryResult) => void
  /** Rejects the job's promise; `dropSettlers` drops it once the job settled. */
  reject: (err: unknown) => void
  readonly callback: (err: unknown, value?: unknown) => void

  constructor(
    runner: JobRunner<Conn>,
    readonly pool: DriverPool<Conn>,
    readonly stmt: Statement,
    readonly params: readonly unknown[] | undefined,
    resolve: (r: QueryResult) => void,
    reject: (err: unknown) => void,
    /** A write (or unscoped statement) on the primary: a connection lost after sending it makes its outcome unknown. */
    readonly write: boolean,
  ) {
    this.resolve = resolve
    this.reject = reject
    this.callback = (err, value) => {
      if (this.conn === undefined) runner.jobConnected(this, err, value as Conn | undefined)
      else runner.jobDone(this, err, value as QueryResult | undefined)
    }
  }
}

const settledAlready = (): void => {}

/**
 * Drops a settled job's links to its promise (and so to the result or error): a job that lived
 * long enough to reach V8's old generation (a slow checkout, a long statement) must not keep its
 * result graph alive through young-generation collections after it settled; measured, such links
 * from dead old objects made V8 pretenure mysql2's row and column arrays for the rest of the
 * process (several times the scavenge survivors and promoted bytes of raw mysql2).
 */
export function dropSettlers<Conn>(job: RunJob<Conn>): void {
  job.resolve = settledAlready
  job.reject = settledAlready
}

/**
 * A node's jobs in progress, as an intrusive doubly-linked list: O(1) in and out with no hashing,
 * and (unlike a `Set` under constant churn, measured) nothing that keeps finished jobs reachable
 * long enough to be promoted out of V8's young generation.
 */
export class JobList<Conn> {
  first: RunJob<Conn> | undefined = undefined

  link(job: RunJob<Conn>): void {
    const head = this.first
    job.next = head
    if (head !== undefined) head.prev = job
    this.first = job
    job.linked = true
  }

  /** Takes a job out; a job not in the list is ignored. */
  unlink(job: RunJob<Conn>): void {
    if (!job.linked) return
    job.linked = false
    const { prev, next } = job
    if (prev !== undefined) prev.next = next
    else this.first = next
    if (next !== undefined) next.prev = prev
    job.prev = undefined
    job.next = undefined
  }
}
