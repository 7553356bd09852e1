import type { Balancer, NodeView } from './balancer.js'

/**
 * nginx's smooth weighted round-robin: over any full cycle (the sum of the weights, in picks) each
 * candidate is picked exactly in proportion to its weight, and the picks of a heavy node are spread
 * out instead of bunched: weights `{ a: 5, b: 1, c: 1 }` give `a a b a c a a`, then repeat.
 *
 * Each pick adds every candidate's weight to its running `current`, takes the candidate with the
 * largest `current` (the first one on a tie) and subtracts the total weight from it. Deterministic.
 * Weights are read on every pick and may be fractional (`0.5`, `1.5`); a weight that is not a
 * positive number counts as 0 (the router never passes such a node).
 *
 * The running values live in an array indexed by position in the current candidate list. They
 * restart from zero whenever the list changes (`reset`, or a `pick` with an array it has not seen),
 * so a node that goes down and comes back does not skew the shares that follow: the first full
 * cycle after the change is exact again. A pick allocates nothing.
 *
 * @example
 * ```ts
 * createRouter({ driver, primary, replicas: [{ url: big, weight: 3 }, { url: small, weight: 1 }],
 *   balancer: 'weighted-round-robin' }) // big gets 3 reads of every 4
 * ```
 */
export class WeightedRoundRobinBalancer implements Balancer {
  readonly name = 'weighted-round-robin'
  /** The list the running values belong to. */
  #candidates: readonly NodeView[] | undefined
  /** `current` of `#candidates[i]` at index `i`; may be longer than the list (reused storage). */
  #current = new Float64Array(0)

  reset(candidates: readonly NodeView[]): void {
    this.#candidates = candidates
    const n = candidates.length
    if (this.#current.length < n) this.#current = new Float64Array(n)
    else this.#current.fill(0, 0, n)
  }

  pick(candidates: readonly NodeView[]): NodeView {
    if (candidates !== this.#candidates) this.reset(candidates)
    const current = this.#current
    const n = candidates.length
    let total = 0
    let best = 0
    let bestCurrent = Number.NEGATIVE_INFINITY
    for (let i = 0; i < n; i++) {
      const weight = candidates[i]!.weight
      const w = weight > 0 && weight !== Number.POSITIVE_INFINITY ? weight : 0
      total += w
      const c = current[i]! + w
      current[i] = c
      if (c > bestCurrent) {
        best = i
        bestCurrent = c
      }
    }
    current[best] = bestCurrent - total
    return candidates[best]!
  }
}
