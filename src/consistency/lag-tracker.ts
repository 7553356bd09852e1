/**
 * Turns replication positions into an age. The primary's position is sampled at every probe; a
 * replica's lag is the age of the oldest primary sample its replay position has not reached yet
 * (0 when it has reached them all). So an idle primary never looks like lag (its position does not
 * move), and a paused or hung replica shows a lag that keeps growing while the primary writes.
 * The estimate is at most one probe interval below the true lag. Pure logic.
 *
 * @example
 * ```ts
 * const lag = new LagTracker((replay, target) => replay >= target)
 * lag.recordPrimary(1000, 'a'); lag.recordPrimary(2000, 'b')
 * lag.lagOf('a', 2500) // 500: the replica has not replayed what the primary had at t=2000
 * ```
 */
export class LagTracker {
  readonly #reached: (replay: string, target: string) => boolean
  readonly #times: number[]
  readonly #positions: string[]
  #start = 0
  #size = 0

  constructor(reached: (replay: string, target: string) => boolean, capacity = 256) {
    this.#reached = reached
    this.#times = new Array<number>(capacity).fill(0)
    this.#positions = new Array<string>(capacity).fill('')
  }

  /** Records the primary's position at time `now` (ms). Consecutive equal positions keep the oldest time. */
  recordPrimary(now: number, position: string): void {
    const cap = this.#times.length
    if (this.#size > 0) {
      const last = (this.#start + this.#size - 1) % cap
      if (this.#positions[last] === position) return
    }
    const at = (this.#start + this.#size) % cap
    this.#times[at] = now
    this.#positions[at] = position
    if (this.#size < cap) this.#size++
    else this.#start = (this.#start + 1) % cap
  }

  /** The lag in ms of a replica whose replay position is `replay` at time `now`; `undefined` before any primary sample. */
  lagOf(replay: string, now: number): number | undefined {
    if (this.#size === 0) return undefined
    const cap = this.#times.length
    // Samples are in increasing position order: find the oldest one not reached (binary search).
    let lo = 0
    let hi = this.#size
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const i = (this.#start + mid) % cap
      if (this.#reached(replay, this.#positions[i] as string)) lo = mid + 1
      else hi = mid
    }
    if (lo === this.#size) return 0
    const t = this.#times[(this.#start + lo) % cap] as number
    return Math.max(0, now - t)
  }

  /** The newest primary position seen, if any. */
  latest(): string | undefined {
    if (this.#size === 0) return undefined
    return this.#positions[(this.#start + this.#size - 1) % this.#times.length]
  }

  /** Forgets every sample (e.g. when the primary changes). */
  clear(): void {
    this.#start = 0
    this.#size = 0
  }
}
