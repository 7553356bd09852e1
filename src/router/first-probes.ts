import { RouterClosedError } from '../errors/router-closed-error.js'
import type { Cluster } from './cluster.js'
import type { ReadyDeps } from './router-core.js'

/**
 * Resolves once no replica of `cluster` is still in its first probe (`firstProbesPending`), so that
 * a read issued at startup — before `ready()` — goes to the first replica found healthy instead of
 * falling back to the primary (or failing with `NoHealthyReplicaError`) while the probes run. A
 * first probe always ends within `healthCheck.timeoutMs`; rejects with `RouterClosedError` if the
 * router is closed meanwhile.
 */
export function afterFirstProbes(
  core: Pick<ReadyDeps, 'closed' | 'monitor'>,
  cluster: Cluster,
): Promise<void> {
  if (core.closed) return Promise.reject(new RouterClosedError())
  if (!cluster.firstProbesPending) return Promise.resolve()
  return new Promise<void>((resolve, reject) => {
    const off = core.monitor.onProbe(() => {
      if (core.closed) {
        off()
        reject(new RouterClosedError())
      } else if (!cluster.firstProbesPending || cluster.candidates.length > 0) {
        off()
        resolve()
      }
    })
  })
}
