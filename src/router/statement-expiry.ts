import { QueryTimeoutError } from '../errors/query-timeout-error.js'
import type { Driver, DriverNodeOptions, ErrorClass } from './driver.js'

/** What the expiry of a statement needs of its node (a `RouterNode`). */
export interface ExpiryNode<Conn> {
  readonly name: string
  readonly cluster: string
  readonly driver: Driver<Conn>
  readonly options: { readonly queryTimeoutMs: number; readonly connectTimeoutMs: number }
  /** The node's connection options, for the driver's cancel request. */
  cancelOptions(): DriverNodeOptions
  /** Told of every statement that passes `queryTimeoutMs` (the health monitor probes the node soon). */
  readonly timeoutListener: (() => void) | undefined
}

/**
 * How a statement that passed `queryTimeoutMs` ended, once its cancellation settled: `err` (a
 * `QueryTimeoutError`) or, when it completed anyway, `value`; `destroy`: its connection must be
 * closed rather than reused.
 */
export type ExpiryFinish = (err: unknown, value: unknown, destroy: boolean) => void

function boundPassed(expiry: StatementExpiry<unknown>): void {
  expiry.boundPassed()
}

/**
 * A statement that passed its node's `queryTimeoutMs` (made only then: nothing of this runs for
 * statements that finish in time). It asks the driver to cancel the statement on the server and
 * waits, for at most `connectTimeoutMs`, for both the cancel request to be accepted and the
 * statement to end; then it reports once through `finish`:
 * - the statement completed anyway: its result (the connection is kept if the cancel request was
 *   accepted, since it can no longer hit a later statement);
 * - it failed (normally with the server's cancellation error): a `QueryTimeoutError` with the
 *   driver's error as `cause`; the connection is kept only if the cancel was accepted and the
 *   error is not a connection error;
 * - neither within the bound: the connection is closed (`destroy`), which ends the statement
 *   with a connection error; for a write the error's `outcome` is then `'unknown'`.
 *
 * A timeout never counts against the node's health: `timeoutListener` only makes its probe come
 * sooner, so a node that is really frozen is found by its probe.
 */
export class StatementExpiry<Conn> {
  #ended = false
  #err: unknown = undefined
  #value: unknown = undefined
  /** `undefined` while the cancel request is pending. */
  #cancelled: boolean | undefined = undefined
  #finished = false
  readonly #bound: NodeJS.Timeout
  readonly #abort = new AbortController()

  /**
   * @param startedAt `performance.now()` when the statement was sent.
   * @param write a write (or `COMMIT`) on the primary: a lost connection makes its outcome unknown.
   * @param classify the core's error classification.
   * @param destroy closes the statement's connection at once (its statement then fails).
   */
  constructor(
    readonly node: ExpiryNode<Conn>,
    readonly conn: Conn,
    readonly startedAt: number,
    readonly write: boolean,
    readonly classify: (err: unknown) => ErrorClass,
    readonly destroy: () => void,
    readonly finish: ExpiryFinish,
  ) {
    this.#bound = setTimeout(boundPassed, node.options.connectTimeoutMs, this)
    this.#bound.unref()
    try {
      node.timeoutListener?.()
    } catch {
      // the health monitor's bookkeeping never disturbs a statement
    }
    const driver = node.driver
    let cancel: Promise<boolean>
    try {
      cancel =
        driver.cancel === undefined
          ? Promise.resolve(false)
          : driver.cancel(conn, node.cancelOptions(), this.#abort.signal)
    } catch {
      cancel = Promise.resolve(false)
    }
    cancel.then(
      (ok) => this.#cancelSettled(ok === true),
      () => this.#cancelSettled(false),
    )
  }

  /** The statement ended: with `err`, or with its result `value`. */
  ended(err: unknown, value?: unknown): void {
    if (this.#ended) return
    this.#ended = true
    this.#err = err
    this.#value = value
    this.#maybeFinish()
  }

  /** `connectTimeoutMs` after the timeout: stop waiting; a statement still running loses its connection. */
  boundPassed(): void {
    if (this.#finished) return
    if (this.#cancelled === undefined) {
      this.#cancelled = false
      this.#abort.abort()
    }
    if (!this.#ended) this.destroy()
    this.#maybeFinish()
  }

  #cancelSettled(ok: boolean): void {
    if (this.#cancelled !== undefined) return // the bound passed first
    this.#cancelled = ok
    if (!ok && !this.#ended) this.destroy() // nothing will stop it: free the caller now
    this.#maybeFinish()
  }

  #maybeFinish(): void {
    if (this.#finished || !this.#ended || this.#cancelled === undefined) return
    this.#finished = true
    clearTimeout(this.#bound)
    const err = this.#err
    const cancelled = this.#cancelled
    if (err == null) {
      this.finish(undefined, this.#value, !cancelled)
      return
    }
    const cls = this.classify(err)
    const lost = cls === 'connection' || cls === 'timeout'
    const kept = cancelled && !lost
    const node = this.node
    const error = new QueryTimeoutError({
      node: node.name,
      cluster: node.cluster,
      timeoutMs: node.options.queryTimeoutMs,
      elapsedMs: performance.now() - this.startedAt,
      cancelled: kept,
      outcome: this.write && lost ? 'unknown' : undefined,
      cause: err,
    })
    this.finish(error, undefined, !kept)
  }
}
