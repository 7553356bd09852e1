import { rmSync } from 'node:fs'

/** Registered cleanups, in registration order; run newest first. */
const live = new Set<() => void>()
let installed = false

function onExit(): void {
  for (const cleanup of [...live].reverse()) {
    try {
      cleanup()
    } catch {
      // best effort: the process is exiting anyway
    }
  }
  live.clear()
}

/**
 * Registers `cleanup` with one shared, synchronous `process.on('exit')` hook, so a test run that
 * crashes or forgets `stop()` leaves no orphan server and no temp dir. Cleanups run newest first
 * (servers registered after their dir are killed before the dir is removed); each must be
 * synchronous and a throw is ignored. Returns the function that unregisters it (call it after a
 * clean stop). Best effort: nothing runs when this process is SIGKILLed or dies of a signal it
 * does not handle.
 *
 * @example
 * ```ts
 * const untrack = onExitSync(() => signalProcesses([server], 'SIGKILL'))
 * // ... after a clean stop:
 * untrack()
 * ```
 */
export function onExitSync(cleanup: () => void): () => void {
  // A wrapper, so that registering the same function twice gives two independent registrations.
  const entry = (): void => cleanup()
  live.add(entry)
  if (!installed) {
    installed = true
    process.on('exit', onExit)
  }
  return () => {
    live.delete(entry)
  }
}

/**
 * Registers `dir` to be removed (recursively, synchronously) by the exit hook; returns the function
 * that unregisters it. Only for dirs the caller created itself.
 *
 * @example
 * ```ts
 * const untrack = removeOnExit(baseDir) // ... after a clean stop and rm: untrack()
 * ```
 */
export function removeOnExit(dir: string): () => void {
  return onExitSync(() => rmSync(dir, { recursive: true, force: true }))
}
