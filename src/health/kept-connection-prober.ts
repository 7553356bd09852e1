import type { DriverProber, ProbeResult } from '../driver/probe-contract.js'

/** What a driver supplies to {@link KeptConnectionProber}: how to open, use and close one probe connection. */
export interface ProbeConnectionOps<C> {
  /** Opens a connection (not from the pool). Must destroy it and reject when `signal` aborts. */
  connect(signal: AbortSignal): Promise<C>
  /** Runs the probe's statements on `conn`. On abort, the prober destroys `conn` (which fails them). */
  probe(conn: C, signal: AbortSignal): Promise<ProbeResult>
  /** Whether `conn` is known to be unusable (it reported an error, or the server closed it). */
  broken(conn: C): boolean
  /**
   * Lets `conn` keep the process alive while a probe runs on it (`true`), or not while it idles
   * between probes (`false`): a kept connection must not stop a process that forgot `close()` from
   * exiting, any more than the (unref'd) probe timers do.
   */
  setActive(conn: C, active: boolean): void
  /** Closes an idle `conn` politely (it is not used again). */
  close(conn: C): void
  /** Destroys `conn`'s socket at once. */
  destroy(conn: C): void
}

/**
 * A node's prober that keeps one connection between probes, as proxies' monitors do (ProxySQL,
 * PgCat): a probe then costs one round trip instead of a connection (TCP, authentication — SCRAM's
 * key stretching on both ends — and, for PostgreSQL, a server process). The connection is
 * replaced when it is older than `maxAgeMs` (so that a node refusing new connections is still
 * noticed), and dropped after any failure or abort; a probe that fails on a kept (not fresh)
 * connection is tried once more on a fresh one within the same deadline, so a connection that
 * died while idle (a restarted server) never counts as a failed probe by itself.
 */
export class KeptConnectionProber<C> implements DriverProber {
  readonly #ops: ProbeConnectionOps<C>
  readonly #maxAgeMs: number
  #conn: C | undefined = undefined
  #openedAt = 0
  #closed = false

  constructor(ops: ProbeConnectionOps<C>, maxAgeMs: number) {
    this.#ops = ops
    this.#maxAgeMs = maxAgeMs
  }

  async probe(signal: AbortSignal): Promise<ProbeResult> {
    if (this.#closed) throw new Error('prober closed')
    const kept = this.#conn
    if (kept !== undefined && (this.#ops.broken(kept) || Date.now() - this.#openedAt >= this.#maxAgeMs)) {
      this.#drop(kept, false)
    }
    if (this.#conn !== undefined) {
      try {
        return await this.#probeOn(this.#conn, signal)
      } catch (err) {
        if (signal.aborted || this.#closed) throw err
        // the kept connection may have died while idle: try once on a fresh one
      }
    }
    const conn = await this.#ops.connect(signal)
    if (this.#closed || signal.aborted) {
      this.#ops.destroy(conn)
      signal.throwIfAborted()
      throw new Error('prober closed')
    }
    this.#conn = conn
    this.#openedAt = Date.now()
    return this.#probeOn(conn, signal)
  }

  /** Closes the kept connection; later probes fail. Idempotent. */
  close(): void {
    this.#closed = true
    if (this.#conn !== undefined) this.#drop(this.#conn, false)
  }

  async #probeOn(conn: C, signal: AbortSignal): Promise<ProbeResult> {
    const abort = (): void => this.#drop(conn, true)
    signal.addEventListener('abort', abort, { once: true })
    this.#ops.setActive(conn, true)
    try {
      const result = await this.#ops.probe(conn, signal)
      this.#ops.setActive(conn, false)
      return result
    } catch (err) {
      this.#drop(conn, true)
      throw err
    } finally {
      signal.removeEventListener('abort', abort)
    }
  }

  #drop(conn: C, destroy: boolean): void {
    if (this.#conn === conn) this.#conn = undefined
    if (destroy) this.#ops.destroy(conn)
    else this.#ops.close(conn)
  }
}
