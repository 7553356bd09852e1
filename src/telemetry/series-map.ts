/**
 * A map keyed by (cluster, node, role), made of nested maps so that a lookup allocates nothing
 * (no joined key string, no key array): the per-statement hot path of the metrics helpers uses it
 * to find a node's series. Values are made by `make` on first use.
 */
export class SeriesMap<T> {
  readonly #root = new Map<string, Map<string, Map<string, T>>>()
  readonly #make: (cluster: string, node: string, role: string) => T

  constructor(make: (cluster: string, node: string, role: string) => T) {
    this.#make = make
  }

  /** The series of one (cluster, node, role). */
  get(cluster: string, node: string, role: string): T {
    let byNode = this.#root.get(cluster)
    if (byNode === undefined) {
      byNode = new Map()
      this.#root.set(cluster, byNode)
    }
    let byRole = byNode.get(node)
    if (byRole === undefined) {
      byRole = new Map()
      byNode.set(node, byRole)
    }
    let value = byRole.get(role)
    if (value === undefined) {
      value = this.#make(cluster, node, role)
      byRole.set(role, value)
    }
    return value
  }

  /** Every series, in first-use order. */
  *values(): IterableIterator<T> {
    for (const byNode of this.#root.values()) for (const byRole of byNode.values()) yield* byRole.values()
  }
}
