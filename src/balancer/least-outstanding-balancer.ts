import type { Balancer, NodeView } from './balancer.js'

/**
 * Picks the candidate with the fewest queries in flight relative to its weight (`inFlight / weight`),
 * so a node of weight 2 is given twice the concurrent load of a node of weight 1. Adapts at once to
 * a slow or stalled node: its queries pile up and it stops being picked.
 *
 * Ties go round-robin: the scan starts just after the node picked last, so equally loaded nodes
 * share evenly (not always the first). Caveat: when every node is idle (low concurrency) all loads
 * are 0 and nodes share evenly whatever their weights; weights matter once queries overlap. A node
 * whose weight is not a positive number is picked only when all are such. A pick is one pass over
 * the list (O(n)) and allocates nothing.
 *
 * @example
 * ```ts
 * createRouter({ driver, primary, replicas, balancer: 'least-outstanding' })
 * ```
 */
export class LeastOutstandingBalancer implements Balancer {
  readonly name = 'least-outstanding'
  /** Where the next scan starts: just after the last pick; below the last list's length. */
  #next = 0

  pick(candidates: readonly NodeView[]): NodeView {
    const n = candidates.length
    let start = this.#next
    if (start >= n) start %= n // the list shrank since the last pick
    let best = start
    let bestLoad = loadOf(candidates[start]!)
    for (let k = 1; k < n; k++) {
      let i = start + k
      if (i >= n) i -= n
      const load = loadOf(candidates[i]!)
      if (load < bestLoad) {
        best = i
        bestLoad = load
      }
    }
    this.#next = best + 1 === n ? 0 : best + 1
    return candidates[best]!
  }
}

function loadOf(node: NodeView): number {
  const w = node.weight
  return w > 0 ? node.inFlight / w : Number.POSITIVE_INFINITY
}
