import type { Balancer, NodeView } from './balancer.js'

/**
 * Strict rotation over the candidates: each pick takes the next one in list order, so over any
 * `k × n` picks among `n` candidates each gets exactly `k`.
 *
 * Weights are ignored (use {@link WeightedRoundRobinBalancer} or {@link RandomBalancer} for
 * weighted shares); nodes of weight 0 never get here because the router drains them first. The
 * position is a small integer kept below the list's length, so it never grows and never needs to
 * wrap, and a pick allocates nothing. When the list changes the rotation simply carries on from the
 * same position (taken modulo the new length), so no `reset` is needed.
 *
 * @example
 * ```ts
 * createRouter({ driver, primary, replicas: [r1, r2], balancer: 'round-robin' }) // r1, r2, r1, r2, ...
 * const b = new RoundRobinBalancer()
 * b.pick(nodes) // nodes[0], then nodes[1], ...
 * ```
 */
export class RoundRobinBalancer implements Balancer {
  readonly name = 'round-robin'
  /** Index of the next pick; always below the length of the list it was last used with. */
  #next = 0

  pick(candidates: readonly NodeView[]): NodeView {
    const n = candidates.length
    let i = this.#next
    if (i >= n) i %= n // the list shrank since the last pick
    this.#next = i + 1 === n ? 0 : i + 1
    return candidates[i]!
  }
}
