import type { Balancer, NodeView } from './balancer.js'

/** Options of {@link RandomBalancer}. */
export interface RandomBalancerOptions {
  /** Source of numbers in `[0, 1)`, e.g. a seeded generator in tests. Default: `Math.random`. */
  random?: () => number
}

/**
 * Weighted random: each pick takes a candidate with probability `weight / total weight`; with all
 * weights equal, uniformly. Stateless between picks, so shares are exact only on average (use
 * {@link WeightedRoundRobinBalancer} for exact ones), but several routers sharing replicas do not
 * fall into step.
 *
 * The cumulative weights are computed once per candidate list (in `reset`, or on the first `pick`
 * with an array it has not seen), so weights are read then, not per pick; a pick is one call to
 * `random` plus a binary search (O(1) when the weights are all equal) and allocates nothing. A weight
 * that is not a positive number counts as 0; if all do, picks are uniform.
 *
 * @example
 * ```ts
 * createRouter({ driver, primary, replicas, balancer: 'random' })
 * const seeded = new RandomBalancer({ random: mulberry32(42) }) // reproducible, for tests
 * ```
 */
export class RandomBalancer implements Balancer {
  readonly name = 'random'
  readonly #random: () => number
  /** The list the cumulative weights belong to. */
  #candidates: readonly NodeView[] | undefined
  /** `#cumulative[i]` = sum of the weights of candidates `0..i`; may be longer than the list. */
  #cumulative = new Float64Array(0)
  #total = 0
  /** All weights equal (or none usable): pick by index, no search. */
  #uniform = true

  constructor(options: RandomBalancerOptions = {}) {
    this.#random = options.random ?? Math.random
  }

  reset(candidates: readonly NodeView[]): void {
    this.#candidates = candidates
    const n = candidates.length
    if (this.#cumulative.length < n) this.#cumulative = new Float64Array(n)
    const cumulative = this.#cumulative
    const first = n > 0 ? weightOf(candidates[0]!) : 0
    let total = 0
    let uniform = true
    for (let i = 0; i < n; i++) {
      const w = weightOf(candidates[i]!)
      if (w !== first) uniform = false
      total += w
      cumulative[i] = total
    }
    this.#total = total
    this.#uniform = uniform || total <= 0
  }

  pick(candidates: readonly NodeView[]): NodeView {
    if (candidates !== this.#candidates) this.reset(candidates)
    const n = candidates.length
    if (this.#uniform) {
      const i = Math.floor(this.#random() * n)
      return candidates[i < n ? i : n - 1]!
    }
    // The first candidate whose cumulative weight exceeds r (zero-weight ones never do).
    const r = this.#random() * this.#total
    const cumulative = this.#cumulative
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (cumulative[mid]! > r) hi = mid
      else lo = mid + 1
    }
    return candidates[lo]!
  }
}

function weightOf(node: NodeView): number {
  const w = node.weight
  return w > 0 && w !== Number.POSITIVE_INFINITY ? w : 0
}
