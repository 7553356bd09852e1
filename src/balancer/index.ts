/**
 * `routemate/balancers`: the built-in balancers behind the `balancer` option, as classes (to wrap
 * or extend in a balancer of your own), `createBalancer(name)`, `isBalancer(x)` and
 * `BALANCER_NAMES`. The `Balancer` interface itself is exported by `routemate`.
 *
 * @example
 * ```ts
 * import { LeastOutstandingBalancer } from 'routemate/balancers'
 * const inner = new LeastOutstandingBalancer()
 * createRouter({ driver, primary, replicas, balancer: { name: 'logged', pick: (c) => inner.pick(c) } })
 * ```
 *
 * @module
 */
export type { Balancer, BalancerName, NodeView } from './balancer.js'
export { BALANCER_NAMES, createBalancer, isBalancer } from './create-balancer.js'
export { LeastOutstandingBalancer } from './least-outstanding-balancer.js'
export { RandomBalancer, type RandomBalancerOptions } from './random-balancer.js'
export { RoundRobinBalancer } from './round-robin-balancer.js'
export { WeightedRoundRobinBalancer } from './weighted-round-robin-balancer.js'
