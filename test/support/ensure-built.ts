/**
 * Tests that run the built package (`dist/`) call {@link ensureBuilt} first: it runs `npx tsup --silent`
 * when `dist/` is missing or older than the sources, at most once per test process.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The built entry points every test of `dist/` needs. */
const ENTRIES = [
  'dist/index.js',
  'dist/index.cjs',
  'dist/pg/index.js',
  'dist/testing/index.js',
  'dist/cli/main.js',
]

/** Set on `globalThis` (not a module variable) so the guard holds across isolated module graphs. */
const GUARD = Symbol.for('routemate.test.ensureBuilt')

/** Newest modification time (ms) of the files the build reads: `src/` (tests excluded) and tsup.config.ts. */
function newestSourceMtime(): number {
  let newest = fs.statSync(path.join(REPO_ROOT, 'tsup.config.ts')).mtimeMs
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.isFile() && !entry.name.endsWith('.test.ts'))
        newest = Math.max(newest, fs.statSync(full).mtimeMs)
    }
  }
  walk(path.join(REPO_ROOT, 'src'))
  return newest
}

/** Oldest modification time (ms) of the built entry points, or -1 when one is missing. */
function oldestBuildMtime(): number {
  let oldest = Number.POSITIVE_INFINITY
  for (const entry of ENTRIES) {
    const file = path.join(REPO_ROOT, entry)
    if (!fs.existsSync(file)) return -1
    oldest = Math.min(oldest, fs.statSync(file).mtimeMs)
  }
  return oldest
}

/** Whether `dist/` is missing or older than any source file. */
export function isBuildStale(): boolean {
  return oldestBuildMtime() < newestSourceMtime()
}

/**
 * Builds `dist/` with `npx tsup --silent` (synchronously) when it is missing or stale. Runs the
 * check, and the build, at most once per test process; throws with tsup's output when the build fails.
 *
 * @example
 * ```ts
 * beforeAll(() => ensureBuilt())
 * ```
 */
export function ensureBuilt(): void {
  const g = globalThis as { [GUARD]?: true }
  if (g[GUARD]) return
  g[GUARD] = true
  if (!isBuildStale()) return
  try {
    execFileSync('npx', ['tsup', '--silent'], { cwd: REPO_ROOT, stdio: 'pipe', timeout: 180_000 })
  } catch (err) {
    g[GUARD] = undefined
    const e = err as { stdout?: Buffer; stderr?: Buffer; message: string }
    throw new Error(
      `npx tsup --silent failed: ${e.message}\n${e.stdout?.toString() ?? ''}${e.stderr?.toString() ?? ''}`,
    )
  }
  if (oldestBuildMtime() < 0) throw new Error(`npx tsup --silent did not produce ${ENTRIES.join(', ')}`)
}
