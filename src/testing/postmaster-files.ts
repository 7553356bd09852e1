import fs from 'node:fs'
import path from 'node:path'
import { commandLine, processRef } from './process-control/index.js'

/**
 * The postmaster pid recorded in `<dataDir>/postmaster.pid`, or `undefined` when there is none.
 *
 * @example
 * ```ts
 * readPostmasterPid('/tmp/routemate-pg-x/primary/data') // 12345
 * ```
 */
export function readPostmasterPid(dataDir: string): number | undefined {
  return readPidLine(path.join(dataDir, 'postmaster.pid'))
}

function readPidLine(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').split('\n')[0])
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether `pid` is a live (not zombie) postmaster started on `dataDir`, judged by its command line,
 * so that a reused pid is never taken for our server.
 *
 * @example
 * ```ts
 * isPostmasterOf(12345, dataDir) // true
 * ```
 */
export function isPostmasterOf(pid: number, dataDir: string): boolean {
  const ref = processRef(pid)
  return ref !== undefined && (commandLine(ref)?.includes(dataDir) ?? false)
}

/**
 * Removes the lock files a killed postmaster leaves behind (`postmaster.pid` and the socket's
 * `.lock`): while its pid lingers as a zombie, a new postmaster would take it for a running one and
 * refuse to start. Returns the pid of a postmaster that really still runs there, if any (then
 * nothing is removed).
 *
 * @example
 * ```ts
 * const running = clearStaleLocks(dataDir, socketDir, port)
 * ```
 */
export function clearStaleLocks(dataDir: string, socketDir: string, port: number): number | undefined {
  const pid = readPostmasterPid(dataDir)
  if (pid !== undefined) {
    if (isPostmasterOf(pid, dataDir)) return pid
    fs.rmSync(path.join(dataDir, 'postmaster.pid'), { force: true })
  }
  const socket = path.join(socketDir, `.s.PGSQL.${port}`)
  const lockPid = readPidLine(`${socket}.lock`)
  if (lockPid !== undefined && !isPostmasterOf(lockPid, dataDir)) {
    fs.rmSync(`${socket}.lock`, { force: true })
    fs.rmSync(socket, { force: true })
  }
  return undefined
}
