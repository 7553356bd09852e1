import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The directory of routemate's own package.json, found by walking up from this module (`src/cli`
 * in a checkout, `dist/cli` or a bundle chunk in an installed package); `undefined` if not found.
 */
export function packageRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const file = join(dir, 'package.json')
    if (existsSync(file)) {
      try {
        if ((JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === 'routemate') return dir
      } catch {
        // not ours; keep walking
      }
    }
    const parent = dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

/** routemate's version from its package.json (`'unknown'` if it cannot be read). */
export function packageVersion(): string {
  const root = packageRoot()
  if (root === undefined) return 'unknown'
  try {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown }
    return typeof version === 'string' ? version : 'unknown'
  } catch {
    return 'unknown'
  }
}
