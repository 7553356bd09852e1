/** Something that can tear itself down synchronously, from a process 'exit' hook. */
export interface ExitCleanup {
  /** SIGKILL servers, remove directories; must not throw, must not be async. */
  cleanupNowSync(): void
}

const live = new Set<ExitCleanup>()
let installed = false

function onExit(): void {
  for (const cleanup of live) {
    try {
      cleanup.cleanupNowSync()
    } catch {
      // best effort: the process is exiting anyway
    }
  }
  live.clear()
}

/**
 * Registers a live PostgreSQL test cluster with one shared, synchronous `process.on('exit')` hook that
 * SIGKILLs its servers, so a test run that crashes or forgets `stop()` leaves no orphan postgres.
 * Best effort: nothing runs when this process is SIGKILLed or dies of an unhandled signal.
 *
 * @example
 * ```ts
 * trackForExit(cluster) // ... later, after a clean stop: untrackForExit(cluster)
 * ```
 */
export function trackForExit(cleanup: ExitCleanup): void {
  live.add(cleanup)
  if (!installed) {
    installed = true
    process.on('exit', onExit)
  }
}

/** Forgets a cluster registered with {@link trackForExit} (after it stopped cleanly). */
export function untrackForExit(cleanup: ExitCleanup): void {
  live.delete(cleanup)
}
