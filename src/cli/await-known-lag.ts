import type { Router } from '../router/router.js'
import type { RouterStats } from '../router/stats.js'

/** How often the stats are read while waiting. */
const POLL_MS = 20

/**
 * After the first probe round, waits for one more probe of each replica whose lag is still
 * unknown although it is up and its primary is up: a replica probed before its primary in the
 * first round has no primary position to be compared with yet. Returns after that probe (or
 * after `waitMs`), so `routemate status` shows a replica's lag as a number whenever it can be
 * measured, and `-` only when it cannot (the replica or its primary down, or no position).
 *
 * @example
 * ```ts
 * await router.ready()
 * await awaitKnownLag(router, intervalMs + timeoutMs)
 * ```
 */
export async function awaitKnownLag(router: Router, waitMs: number): Promise<void> {
  const waiting = unknownLag(router.stats())
  const deadline = Date.now() + waitMs
  while (waiting.size > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    for (const n of router.stats().nodes) {
      const key = `${n.cluster}\n${n.name}`
      const probes = waiting.get(key)
      if (probes !== undefined && (n.probes > probes || n.lagMs !== undefined)) waiting.delete(key)
    }
  }
}

/** Replicas up, of a cluster whose primary is up and trusted, with no lag known: key → probes so far. */
function unknownLag(stats: RouterStats): Map<string, number> {
  const primaryUp = new Set<string>()
  for (const c of stats.clusters) {
    const p = stats.nodes.find((n) => n.cluster === c.name && n.name === c.primary)
    if (p !== undefined && p.state === 'up' && p.trusted) primaryUp.add(c.name)
  }
  const waiting = new Map<string, number>()
  for (const n of stats.nodes) {
    if (n.role === 'replica' && n.state === 'up' && n.lagMs === undefined && primaryUp.has(n.cluster)) {
      waiting.set(`${n.cluster}\n${n.name}`, n.probes)
    }
  }
  return waiting
}
