import { Inject, Injectable } from '@nestjs/common'
import type { Router } from '../router/router.js'
import type { NodeStats } from '../router/stats.js'
import { ROUTEMATE_ROUTER } from './tokens.js'

/** One node in the health details: its state from `router.stats()`. Never a URL or a password. */
export interface RoutemateNodeHealth {
  readonly role: NodeStats['role']
  readonly state: NodeStats['state']
  readonly usable: boolean
  /** Why the node is not usable (`down`, `lagging`, `role-mismatch`, ...), when it is not. */
  readonly reason?: string
  /** Replication lag in ms (replicas, once measured). */
  readonly lagMs?: number
  /** The node's last failure, passwords redacted (only when it is not usable). */
  readonly error?: string
}

/** What `isHealthy` reports under its key: the `@nestjs/terminus` result shape. */
export interface RoutemateHealth {
  readonly status: 'up' | 'down'
  /** Whether `router.close()` was called. */
  readonly closed: boolean
  /** Per cluster (`default` when not sharded): the current primary, and whether reads fall back to it (no usable replica). */
  readonly clusters: Record<string, { readonly primary: string | null; readonly readsFallingBack: boolean }>
  /** Per node (`name`, or `cluster/name` when sharded). */
  readonly nodes: Record<string, RoutemateNodeHealth>
}

/**
 * A `@nestjs/terminus` health indicator for the router: `up` when every cluster's primary is
 * usable (up and trusted) and the router is not closed, else `down`; the details list each node's
 * role, state, lag and (when it is not usable) why, from `router.stats()`.
 *
 * Replicas being down or lagging does not make it `down` (reads fall back to the primary; see
 * `readsFallingBack`). It reads the health the router's probes already keep, so it sends no query.
 * Provided and exported by `RoutemateModule`; needs no terminus import itself (the result has
 * terminus's `HealthIndicatorResult` shape), so `@nestjs/terminus` stays optional.
 *
 * @example
 * ```ts
 * @Controller('health')
 * export class HealthController {
 *   constructor(private readonly health: HealthCheckService, private readonly db: RoutemateHealthIndicator) {}
 *   @Get() @HealthCheck()
 *   check() { return this.health.check([() => this.db.isHealthy('database')]) }
 * }
 * ```
 */
export class RoutemateHealthIndicator {
  readonly #router: Router

  constructor(router: Router) {
    this.#router = router
  }

  /** The router's health under `key` (default `'database'`), for `HealthCheckService.check([...])`. */
  async isHealthy<const Key extends string = 'database'>(key?: Key): Promise<Record<Key, RoutemateHealth>> {
    const router = this.#router
    const stats = router.stats()
    const sharded = stats.clusters.length > 1 || stats.clusters[0]?.name !== 'default'
    const nodes: Record<string, RoutemateNodeHealth> = {}
    let primariesUsable = stats.clusters.length > 0
    for (const n of stats.nodes) {
      const health: { -readonly [K in keyof RoutemateNodeHealth]: RoutemateNodeHealth[K] } = {
        role: n.role,
        state: n.state,
        usable: n.usable,
      }
      if (n.unusableReason !== undefined) health.reason = n.unusableReason
      if (n.lagMs !== undefined) health.lagMs = n.lagMs
      if (!n.usable && n.lastError !== undefined) health.error = n.lastError
      nodes[sharded ? `${n.cluster}/${n.name}` : n.name] = health
    }
    const clusters: Record<string, { primary: string | null; readsFallingBack: boolean }> = {}
    for (const c of stats.clusters) {
      clusters[c.name] = { primary: c.primary ?? null, readsFallingBack: c.fallingBack }
      const primary = stats.nodes.find((n) => n.cluster === c.name && n.name === c.primary)
      if (primary === undefined || !primary.usable) primariesUsable = false
    }
    const status = primariesUsable && !router.closed ? 'up' : 'down'
    const result = { status, closed: router.closed, clusters, nodes } satisfies RoutemateHealth
    return { [key ?? 'database']: result } as Record<Key, RoutemateHealth>
  }
}
Inject(ROUTEMATE_ROUTER)(RoutemateHealthIndicator, undefined, 0)
Injectable()(RoutemateHealthIndicator)
