import type { LagTracker } from './lag-tracker.js'

/** The default shortest time between two samples of the primary's position, in ms. */
export const DEFAULT_SAMPLE_SPACING_MS = 5

/**
 * What a router knows of how far one cluster's primary has really got, to check the positions
 * consistency tokens claim: the probes' samples (the cluster's `LagTracker`), the positions read
 * after this router's own writes, and on-demand samples.
 *
 * A token can be fresher than all of these (written a moment ago, through another instance), so a
 * position they do not cover is checked against a sample of the primary taken *after* the token
 * arrived (`sampleAfter`): the primary had committed the token's write before the token could be
 * sent, so an honest position is always reached by such a sample, and a forged far-ahead one
 * never. Samples are shared: at most one runs at a time, every check waiting meanwhile is
 * answered by the next one, and two samples start at least `spacingMs` apart, so a flood of
 * forged tokens costs the primary at most one small query per `spacingMs` (and slows the forgers
 * by as much), never one per request. Without a flood, a sample starts at once.
 *
 * The same samples give read-your-writes its positions when a write's reply carries none
 * (PostgreSQL): a session only takes a stamp when its write finished (`stampWrite`, a counter:
 * no query), and asks `afterWrite(stamp)` when it first needs the position (its first read after
 * the write). Any position read after the write finished covers it, so a sample serves every
 * stamp taken before it started: a running one if it started late enough, else the next one,
 * which starts as soon as the running one ends (no spacing: these demands come from real writes).
 * A sample that started before a write finished is never used for it. Sessions that write and
 * never read cost nothing.
 *
 * @example
 * ```ts
 * const known = new PrimaryPosition(driver.positionReached, cluster.lag, readPrimaryPosition)
 * known.covers('0/3000060')                         // reached by a probe sample or an own write?
 * const p = await known.sampleAfter(performance.now()) // the primary's position, read from now on
 * ```
 */
export class PrimaryPosition {
  readonly #reached: (replay: string, target: string) => boolean
  readonly #lag: LagTracker
  readonly #read: () => Promise<string | undefined>
  readonly #clock: () => number
  /** The furthest position seen after an own write or in a sample (probes go to `#lag`). */
  #own: string | undefined
  /** The last finished sample, when it started, and how many writes had been stamped by then. */
  #last: { readonly at: number; readonly writes: number; readonly position: string | undefined } | undefined
  /** The sample running now, when it started, and how many writes had been stamped by then. */
  #current:
    | { readonly at: number; readonly writes: number; readonly promise: Promise<string | undefined> }
    | undefined
  /** Writes stamped so far (`stampWrite`). */
  #writes = 0
  /** Whether a write waits for the queued sample: it then starts without the spacing. */
  #urgent = false
  /** The sample that starts when the current one ends (and the spacing allows), shared by the checks waiting for it. */
  #queued: Promise<string | undefined> | undefined
  readonly #spacingMs: number
  /** When the last sample started (`clock` time). */
  #lastStart = Number.NEGATIVE_INFINITY
  /** Bumped by `clear()`: samples started before it are not recorded. */
  #generation = 0

  /**
   * @param reached the driver's `positionReached`
   * @param lag the cluster's lag tracker (the probes' samples of the primary)
   * @param read reads the primary's current position (`undefined` or a rejection when it cannot)
   * @param clock a monotonic clock in ms (`performance.now` by default)
   * @param spacingMs the shortest time between the starts of two samples, in ms
   */
  constructor(
    reached: (replay: string, target: string) => boolean,
    lag: LagTracker,
    read: () => Promise<string | undefined>,
    clock: () => number = () => performance.now(),
    spacingMs = DEFAULT_SAMPLE_SPACING_MS,
  ) {
    this.#reached = reached
    this.#lag = lag
    this.#read = read
    this.#clock = clock
    this.#spacingMs = spacingMs
  }

  /** Whether the primary is known (from probes, own writes or samples) to have reached `target`. */
  covers(target: string): boolean {
    const latest = this.#lag.latest()
    if (latest !== undefined && this.#reached(latest, target)) return true
    return this.#own !== undefined && this.#reached(this.#own, target)
  }

  /** Records a position the primary really reached (read after a write, or sampled). */
  observe(position: string): void {
    if (this.#own === undefined || this.#reached(position, this.#own)) this.#own = position
  }

  /**
   * The primary's position read by a sample that started at or after `since` (a `clock` time):
   * a running one if it started late enough, else the next one. `undefined` when the position
   * cannot be read (no usable primary, a failure). Never rejects.
   */
  sampleAfter(since: number): Promise<string | undefined> {
    const last = this.#last
    if (last !== undefined && last.at >= since) return Promise.resolve(last.position)
    const current = this.#current
    if (current !== undefined && current.at >= since) return current.promise
    if (this.#queued !== undefined) return this.#queued // starts later: late enough for this check
    if (current === undefined && this.#clock() >= this.#lastStart + this.#spacingMs) return this.#start()
    this.#queued = this.#startLater(current?.promise)
    return this.#queued
  }

  /**
   * Stamps a write that has just finished (its reply arrived): no I/O, a counter. Pass the stamp
   * to `afterWrite` when the position after that write is needed.
   */
  stampWrite(): number {
    this.#writes++
    return this.#writes
  }

  /** How many writes have been stamped so far (the stamp of the latest one). */
  get writesStamped(): number {
    return this.#writes
  }

  /**
   * The position read by the last finished sample if it started after the write stamped `stamp`
   * finished (so it covers that write), else `undefined`. No I/O.
   */
  positionAfter(stamp: number): string | undefined {
    const last = this.#last
    return last !== undefined && last.writes >= stamp ? last.position : undefined
  }

  /**
   * The primary's position read by a sample that started after the write stamped `stamp`
   * finished, so it covers that write: the last finished one if it did and succeeded, the running
   * one if it did, else the next one (started as soon as the running one ends; with `urgent`
   * false, only once the spacing since the last start has passed, as for `sampleAfter`: a demand
   * that a token can make). `undefined` when the position cannot be read. Never rejects.
   */
  afterWrite(stamp: number, urgent = true): Promise<string | undefined> {
    const last = this.#last
    if (last !== undefined && last.writes >= stamp && last.position !== undefined)
      return Promise.resolve(last.position)
    const current = this.#current
    if (current !== undefined && current.writes >= stamp) return current.promise
    if (!urgent) {
      // (As in sampleAfter, but by stamps: any sample that starts from now on covers the write.)
      if (this.#queued !== undefined) return this.#queued
      if (current === undefined && this.#clock() >= this.#lastStart + this.#spacingMs) return this.#start()
      this.#queued = this.#startLater(current?.promise)
      return this.#queued
    }
    this.#urgent = true
    if (this.#queued !== undefined) return this.#queued
    if (current === undefined) return this.#start()
    this.#queued = this.#startLater(current.promise)
    return this.#queued
  }

  /**
   * Starts a sample once `running` has ended and the spacing since the last start has passed (no
   * spacing for a write). Always yields before it decides: its caller stores the returned promise
   * in `#queued` only once this returns, so a sample started synchronously here (the spacing
   * having passed since the caller looked at the clock) would leave `#queued` holding it for good,
   * and every later check would be answered by that one old sample: positions from before the
   * writes they are meant to cover (stale reads).
   */
  async #startLater(running: Promise<unknown> | undefined): Promise<string | undefined> {
    await running
    const wait = this.#urgent ? 0 : this.#lastStart + this.#spacingMs - this.#clock()
    if (wait > 0) {
      await new Promise<void>((resolve) => {
        setTimeout(resolve, Math.ceil(wait)).unref?.()
      })
    }
    this.#queued = undefined
    return this.#start()
  }

  /** Forgets everything known (the primary changed). */
  clear(): void {
    this.#own = undefined
    this.#last = undefined
    this.#generation++
  }

  #start(): Promise<string | undefined> {
    const at = this.#clock()
    const writes = this.#writes
    this.#urgent = false
    this.#lastStart = at
    const generation = this.#generation
    const read = this.#read
    const promise: Promise<string | undefined> = Promise.resolve()
      .then(read)
      .then(
        (position) => position,
        () => undefined,
      )
      .then((position) => {
        if (this.#current?.promise === promise) this.#current = undefined
        if (generation !== this.#generation) return undefined
        if (position !== undefined) this.observe(position)
        this.#last = { at, writes, position }
        return position
      })
    this.#current = { at, writes, promise }
    return promise
  }
}
