import { existsSync, statSync } from 'node:fs'
import { chmod, chown, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { MariaDbClusterError } from './mariadb-cluster-error.js'
import { blockedAncestor, type OsUser, removeOnExit } from './process-control/index.js'

/** The dirs of one test cluster. */
export interface MariaDbBaseDir {
  /** Absolute path holding one sub dir per node. */
  readonly path: string
  /** Whether this dir was created here (then {@link MariaDbBaseDir.remove} deletes it entirely). */
  readonly created: boolean
  /** Dir of the Unix sockets: `path` itself, or a short dir under `/tmp` when `path` is too long. */
  readonly socketDir: string
  /** Makes a sub dir owned by the server's OS user. */
  mkdir(name: string): Promise<string>
  /** Deletes everything made here: the base dir if it was created, else only its contents. */
  remove(): Promise<void>
}

/** Unix socket paths are limited to about 107 bytes; leave room for `/replica12.sock`. */
const MAX_SOCKET_DIR = 90

/**
 * Creates (or takes over) the base dir of a test cluster, owned by the server's OS user when one is
 * given (running as root) and checked to be reachable by it: every parent dir must be traversable,
 * which a project under a `0700` home dir is not.
 *
 * Defaults: a fresh `routemate-mariadb-XXXXXX` dir under `os.tmpdir()`. A given `baseDir` must be
 * empty or not exist yet. Throws a {@link MariaDbClusterError} naming the offending dir.
 *
 * @example
 * ```ts
 * const dir = await prepareMariaDbBaseDir(undefined, await ensureSystemUser('mysql'))
 * await dir.mkdir('primary'); await dir.remove()
 * ```
 */
export async function prepareMariaDbBaseDir(
  baseDir: string | undefined,
  account: OsUser | undefined,
): Promise<MariaDbBaseDir> {
  let path: string
  let created: boolean
  /** Exit-hook registrations of the dirs created here, by dir. */
  const tracked = new Map<string, () => void>()
  const track = (dir: string): void => {
    tracked.set(dir, removeOnExit(dir))
  }
  const untrack = (dir: string): void => {
    tracked.get(dir)?.()
    tracked.delete(dir)
  }
  if (baseDir === undefined) {
    path = await mkdtemp(join(tmpdir(), 'routemate-mariadb-'))
    created = true
    track(path)
  } else {
    path = resolve(baseDir)
    created = !existsSync(path)
    if (!created && (await readdir(path)).length > 0) {
      throw new MariaDbClusterError(`baseDir ${path} is not empty; give an empty or a new dir`)
    }
    await mkdir(path, { recursive: true })
    if (created) track(path)
  }
  const made: string[] = []
  const own = async (dir: string): Promise<void> => {
    await chmod(dir, 0o750)
    if (account) await chown(dir, account.uid, account.gid)
  }
  try {
    await own(path)
    if (account) assertTraversable(dirname(path), account)
    let socketDir = path
    if (path.length > MAX_SOCKET_DIR) {
      socketDir = await mkdtemp('/tmp/rmdb-')
      made.push(socketDir)
      track(socketDir)
      await own(socketDir)
    }
    const remove = async (): Promise<void> => {
      for (const dir of made) {
        await rm(dir, { recursive: true, force: true })
        untrack(dir)
      }
      if (created) {
        await rm(path, { recursive: true, force: true })
        untrack(path)
      } else {
        for (const entry of await readdir(path).catch(() => [])) {
          await rm(join(path, entry), { recursive: true, force: true })
        }
      }
    }
    return {
      path,
      created,
      socketDir,
      remove,
      mkdir: async (name) => {
        const dir = join(path, name)
        await mkdir(dir)
        await own(dir)
        return dir
      },
    }
  } catch (err) {
    for (const dir of [...made, ...(created ? [path] : [])]) {
      await rm(dir, { recursive: true, force: true })
      untrack(dir)
    }
    throw err
  }
}

/** Throws unless `account` may traverse `dir` and every parent of it. */
function assertTraversable(dir: string, account: OsUser): void {
  const blocked = blockedAncestor(dir, account)
  if (blocked === undefined) return
  const mode = (statSync(blocked).mode & 0o777).toString(8)
  throw new MariaDbClusterError(
    `the OS user '${account.name}' that runs mariadbd cannot traverse ${blocked} (mode ${mode}); ` +
      'choose a baseDir whose parent dirs are all world-traversable (e.g. under /tmp)',
  )
}
