import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { MariaDbClusterError } from './mariadb-cluster-error.js'

/** Where the MariaDB server binaries of a test cluster were found. */
export interface MariaDbBinaries {
  /** Absolute path of the server (`mariadbd`, or `mysqld` on old installs). */
  readonly mariadbd: string
  /** Absolute path of `mariadb-install-db` (or `mysql_install_db`). */
  readonly installDb: string
  /** The installation's base dir (parent of the server's bin dir), passed as `--basedir`. */
  readonly basedir: string
}

const SERVER_NAMES = ['mariadbd', 'mysqld']
const INSTALL_DB_NAMES = ['mariadb-install-db', 'mysql_install_db']
const DEFAULT_DIRS = ['/usr/sbin', '/usr/bin', '/usr/local/mysql/bin', '/usr/local/mysql/scripts']

/**
 * Finds `mariadbd` and `mariadb-install-db`. The two often live in different dirs (Debian:
 * `/usr/sbin` and `/usr/bin`), so each is looked up on its own.
 *
 * Defaults: with `binDir`, that dir and its siblings `bin`, `sbin` and `scripts` (the layout of a
 * MariaDB tarball); without it, `$ROUTEMATE_MARIADB_BIN`, every dir of `$PATH`, `/usr/sbin`,
 * `/usr/bin` and `/usr/local/mysql/bin`. Throws a {@link MariaDbClusterError} that lists
 * every dir tried when a binary is missing.
 *
 * @example
 * ```ts
 * const { mariadbd, installDb } = findMariaDbBinaries() // { mariadbd: '/usr/sbin/mariadbd', ... }
 * ```
 */
export function findMariaDbBinaries(binDir?: string): MariaDbBinaries {
  const dirs = candidateDirs(binDir)
  const mariadbd = findIn(dirs, SERVER_NAMES)
  const installDb = findIn(dirs, INSTALL_DB_NAMES)
  if (mariadbd === undefined || installDb === undefined) {
    const missing = [
      mariadbd === undefined ? 'mariadbd' : '',
      installDb === undefined ? 'mariadb-install-db' : '',
    ]
      .filter(Boolean)
      .join(' and ')
    throw new MariaDbClusterError(
      `MariaDB: cannot find ${missing}; looked in ${dirs.join(', ')}. ` +
        'Install the server (`apt-get install -y mariadb-server`), or pass `binDir` / set ROUTEMATE_MARIADB_BIN.',
    )
  }
  return { mariadbd, installDb, basedir: dirname(dirname(mariadbd)) }
}

function candidateDirs(binDir: string | undefined): string[] {
  const out: string[] = []
  if (binDir !== undefined) {
    const parent = dirname(binDir)
    out.push(binDir, join(parent, 'bin'), join(parent, 'sbin'), join(parent, 'scripts'))
  } else {
    const env = process.env.ROUTEMATE_MARIADB_BIN
    if (env) out.push(env)
    for (const d of (process.env.PATH ?? '').split(delimiter)) if (d) out.push(d)
    out.push(...DEFAULT_DIRS)
  }
  return [...new Set(out)]
}

function findIn(dirs: readonly string[], names: readonly string[]): string | undefined {
  for (const name of names) {
    for (const dir of dirs) {
      const file = join(dir, name)
      if (isExecutable(file)) return file
    }
  }
  return undefined
}

function isExecutable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}
