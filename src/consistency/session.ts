/**
 * The unit of read-your-writes (usually one HTTP request or one user). It remembers when it last
 * wrote and, in `position` mode, the primary's position after its last write in each cluster (its
 * consistency token). Sessions resumed from a token are made (and validated) by `TokenCodec`.
 */
export class Session {
  /** Time of the session's last write (ms since epoch), 0 if none. */
  lastWriteAt = 0
  /**
   * The position a replica must have replayed to serve the session's reads, per cluster
   * (`position` mode): after its writes (or from its token). `unknown` while it is still to be
   * read (a check is then pending: see `settle`), or when it could not be read (reads go to the
   * primary).
   */
  readonly positions = new Map<string, string>()
  /**
   * Per cluster, the stamp (`PrimaryPosition.stampWrite`) of the session's last write whose
   * position is still to be read (its `positions` entry is then `unknown`, with a check pending).
   */
  readonly pendingWrites = new Map<string, number>()
  /** Writes recorded in this session (since it began, or since it was resumed from a token). */
  writes = 0
  /** The token this session was resumed from, verbatim, if it was accepted; `undefined` for a new session. */
  origin: string | undefined
  /**
   * Checks still to run before a position taken from a token may route a read of its cluster:
   * a function until the first read asks for it, then its promise (dropped once settled).
   */
  #checks: Map<string, (() => Promise<void>) | Promise<void>> | undefined

  /**
   * Registers a check of the position of `cluster` (see `settle`). `check` must not reject; it
   * may remove or replace the position.
   */
  addCheck(cluster: string, check: () => Promise<void>): void {
    if (this.#checks === undefined) this.#checks = new Map()
    this.#checks.set(cluster, check)
  }

  /** Whether a check of the position of `cluster` is still to run or running. */
  hasCheck(cluster: string): boolean {
    return this.#checks?.has(cluster) === true
  }

  /** Whether a check of the position of `cluster` has been started (`settle`) and is still running. */
  checkRunning(cluster: string): boolean {
    return this.#checks !== undefined && typeof this.#checks.get(cluster) === 'object'
  }

  /**
   * The pending check of the position of `cluster`, started on the first call and shared by the
   * reads that wait for it; `undefined` once it has settled (or when there is none, the usual case).
   */
  settle(cluster: string): Promise<void> | undefined {
    const checks = this.#checks
    if (checks === undefined) return undefined
    const c = checks.get(cluster)
    if (c === undefined || typeof c !== 'function') return c
    // (A later write may have registered a newer check meanwhile: keep that one.) `then`, not
    // `finally`: one promise, not three, on a session's read path; checks never reject.
    const done = (): void => {
      if (checks.get(cluster) === running) checks.delete(cluster)
    }
    const running: Promise<void> = c().then(done, done)
    checks.set(cluster, running)
    return running
  }
}
