import { rmSync } from 'node:fs'

const pids = new Set<number>()
const dirs = new Set<string>()
let installed = false

function onExit(): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  for (const dir of dirs) {
    try {
      rmSync(dir, { recursive: true, force: true })
    } catch {
      // best effort
    }
  }
}

function install(): void {
  if (installed) return
  installed = true
  process.on('exit', onExit)
}

/**
 * Registers a server pid to be SIGKILLed by a synchronous `process.on('exit')` hook, so a test run
 * that forgets `stop()` leaves no server behind. Best effort: nothing runs when this process itself
 * is killed with SIGKILL, or dies of a signal it does not handle.
 *
 * @example
 * ```ts
 * trackServerPid(child.pid); child.once('exit', () => untrackServerPid(child.pid))
 * ```
 */
export function trackServerPid(pid: number): void {
  install()
  pids.add(pid)
}

/**
 * Forgets a pid registered with {@link trackServerPid} (call it once the server has exited).
 *
 * @example
 * ```ts
 * untrackServerPid(pid)
 * ```
 */
export function untrackServerPid(pid: number): void {
  pids.delete(pid)
}

/**
 * Registers a dir to be removed (recursively, synchronously) by the exit hook, after the servers
 * are killed. Only for dirs the cluster created itself.
 *
 * @example
 * ```ts
 * trackTempDir(baseDir) // ... later, after a clean stop: untrackTempDir(baseDir)
 * ```
 */
export function trackTempDir(dir: string): void {
  install()
  dirs.add(dir)
}

/**
 * Forgets a dir registered with {@link trackTempDir}.
 *
 * @example
 * ```ts
 * untrackTempDir(baseDir)
 * ```
 */
export function untrackTempDir(dir: string): void {
  dirs.delete(dir)
}
