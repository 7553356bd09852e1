import type { Balancer, BalancerName } from './balancer.js'
import { LeastOutstandingBalancer } from './least-outstanding-balancer.js'
import { RandomBalancer } from './random-balancer.js'
import { RoundRobinBalancer } from './round-robin-balancer.js'
import { WeightedRoundRobinBalancer } from './weighted-round-robin-balancer.js'

const BUILT_INS: Readonly<Record<BalancerName, () => Balancer>> = Object.freeze({
  'round-robin': () => new RoundRobinBalancer(),
  'weighted-round-robin': () => new WeightedRoundRobinBalancer(),
  random: () => new RandomBalancer(),
  'least-outstanding': () => new LeastOutstandingBalancer(),
})

/**
 * The names of the built-in balancers, in documentation order.
 *
 * @example
 * ```ts
 * BALANCER_NAMES.includes(options.balancer) // a known name?
 * ```
 */
export const BALANCER_NAMES: readonly BalancerName[] = Object.freeze(Object.keys(BUILT_INS) as BalancerName[])

/**
 * Whether `x` looks like a {@link Balancer}: an object with a `pick` function. Checks the shape
 * only (not `name`, not what `pick` returns).
 *
 * @example
 * ```ts
 * isBalancer({ name: 'first', pick: (c) => c[0] }) // true
 * isBalancer('round-robin') // false
 * ```
 */
export function isBalancer(x: unknown): x is Balancer {
  return typeof x === 'object' && x !== null && typeof (x as { pick?: unknown }).pick === 'function'
}

/**
 * Turns the `balancer` option into a factory; the router calls it once per cluster (shard), so
 * each cluster has its own balancer state.
 *
 * - a built-in name: a factory making a new instance of that balancer on each call;
 * - a function: returned as is (it is the factory; what it returns is not checked here);
 * - a `Balancer` object: a factory returning that same object on every call, so all clusters share
 *   it (and its state). That is the user's choice; pass a factory for one instance per cluster.
 *
 * Throws a `TypeError` listing the valid names for an unknown name or any other value (the config
 * validator checks names first and reports a `ConfigError`).
 *
 * @example
 * ```ts
 * const make = createBalancer('least-outstanding')
 * const perShard = shardNames.map(() => make()) // one instance each
 * createBalancer(() => new RandomBalancer({ random: seeded })) // a custom factory
 * ```
 */
export function createBalancer(spec: BalancerName | Balancer | (() => Balancer)): () => Balancer {
  if (typeof spec === 'string') {
    if (Object.hasOwn(BUILT_INS, spec)) return BUILT_INS[spec]
    throw new TypeError(`unknown balancer '${spec}': expected one of ${listNames()}`)
  }
  if (typeof spec === 'function') return spec
  if (isBalancer(spec)) return () => spec
  throw new TypeError(
    `invalid balancer (${spec === null ? 'null' : typeof spec}): expected one of ${listNames()}, ` +
      'an object with a pick function, or a function returning one',
  )
}

function listNames(): string {
  return BALANCER_NAMES.map((name) => `'${name}'`).join(', ')
}
