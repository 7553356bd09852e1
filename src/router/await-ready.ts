import { RouterClosedError } from '../errors/router-closed-error.js'
import { RouterNotReadyError } from '../errors/router-not-ready-error.js'
import type { Cluster } from './cluster.js'
import { checkKeys, checkMs, checkObject } from './config-checks.js'
import type { ReadyDeps } from './router-core.js'
import type { RouterNode } from './router-node.js'

/** Options of `router.ready`. */
export interface ReadyOptions {
  /**
   * Also wait, up to this many ms, until the primary of every cluster has passed a health probe
   * (reachable, logged into, reporting the primary role); reject with `RouterNotReadyError`
   * (every node's state and last error) if one has not by then. Without it, `ready()` waits only
   * for the first probe of every node and never rejects.
   */
  timeoutMs?: number
}

/**
 * Whether the cluster's primary takes writes now and is known good: found, not down, trusted,
 * and past a successful probe (with health checks off: reached at least once).
 */
export function primaryReady(cluster: Cluster): boolean {
  const p = cluster.primary
  return p?.available === true && p.seenHealthy && !p.awaitingProbe
}

/**
 * `router.ready(options)`: `first` (the first probe round) alone without `timeoutMs`; with it,
 * also every cluster's primary past a probe, polled after each finished probe, else a
 * `RouterNotReadyError` at the deadline. With health checks off, the primaries are probed here
 * (every half `intervalMs`) since nothing else probes them. The deadline timer is ref'd: the
 * caller is waiting on it.
 */
export async function awaitReady(core: ReadyDeps, first: Promise<void>, options: unknown): Promise<void> {
  const o = checkObject(options ?? {}, 'ready(options)', 'an object { timeoutMs? }')
  checkKeys(o, 'ready(options)', ['timeoutMs'])
  if (o.timeoutMs === undefined) return first
  const timeoutMs = checkMs(o.timeoutMs, 'ready(options).timeoutMs', 0, false, 0)
  const deadline = Date.now() + timeoutMs
  let firstDone = false
  let wake: (() => void) | undefined
  let timer: NodeJS.Timeout | undefined
  void first.then(() => {
    firstDone = true
    wake?.()
  })
  const unsubscribe = core.monitor.onProbe(() => wake?.())
  try {
    for (;;) {
      if (core.closed) throw new RouterClosedError()
      const left = deadline - Date.now()
      if (core.clusters.every(primaryReady) && (firstDone || left <= 0)) return
      if (left <= 0) throw notReadyError(core, timeoutMs)
      const wait = core.config.healthCheck.enabled ? left : Math.min(left, probePrimaries(core))
      await new Promise<void>((resolve) => {
        wake = resolve
        timer = setTimeout(resolve, wait)
      })
      clearTimeout(timer)
      wake = undefined
    }
  } finally {
    unsubscribe()
    clearTimeout(timer)
  }
}

/**
 * With health checks off: probes each primary not known good yet (one probe at a time, when
 * due); returns how long until the next one is due (`Infinity` when none is).
 */
function probePrimaries(core: ReadyDeps): number {
  const now = Date.now()
  let next = Number.POSITIVE_INFINITY
  for (const c of core.clusters) {
    const p = c.primary
    if (p === undefined || primaryReady(c) || p.probing) continue
    if (now >= p.nextProbeAt) void core.monitor.probeNode(c, p)
    else next = Math.min(next, p.nextProbeAt - now)
  }
  return next
}

/** Where a node stands, e.g. `usable`, `down: connect ECONNREFUSED 10.0.0.1:5432`, `not-probed-yet (suspect): ...`. */
function standingOf(cluster: Cluster, node: RouterNode): string {
  let reason: string
  if (node === cluster.primary) {
    if (node.state === 'down') reason = 'down'
    else if (!node.trusted) reason = 'role-mismatch'
    else if (node.awaitingProbe || !node.seenHealthy) reason = 'not-probed-yet'
    else reason = 'usable'
  } else {
    reason = cluster.unusableReason(node) ?? 'usable'
  }
  if (reason === 'usable') return reason
  const state = node.state === 'up' || reason === 'down' ? '' : ` (${node.state})`
  return `${reason}${state}${node.lastError === undefined ? '' : `: ${node.lastError}`}`
}

/** The error of a `ready({ timeoutMs })` that gave up: what is missing, then every node's standing (URLs redacted). */
function notReadyError(core: ReadyDeps, timeoutMs: number): RouterNotReadyError {
  const nodes: Record<string, string> = {}
  const lines: string[] = []
  for (const c of core.clusters) {
    for (const n of c.nodes) {
      const standing = standingOf(c, n)
      nodes[n.name] = standing
      const where = c.name === 'default' ? '' : `${c.name}, `
      lines.push(
        `${n.name} (${where}${n === c.primary ? 'primary' : 'replica'}, ${n.redactedUrl}): ${standing}`,
      )
    }
  }
  const missing = core.clusters.filter((c) => !primaryReady(c))
  const what = missing.map((c) =>
    c.primary === undefined
      ? `no node of cluster "${c.name}" reports being the primary`
      : `the primary of cluster "${c.name}" ("${c.primary.name}") has not passed a health probe`,
  )
  const cause = missing.find((c) => c.primary?.lastFailure !== undefined)?.primary?.lastFailure
  return new RouterNotReadyError(
    `router not ready after ${timeoutMs} ms: ${what.join('; ')}. Nodes: ${lines.join('; ')}`,
    timeoutMs,
    nodes,
    cause === undefined ? undefined : { cause },
  )
}
