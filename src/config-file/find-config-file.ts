import { existsSync } from 'node:fs'
import { extname, isAbsolute, relative, resolve } from 'node:path'
import { ConfigError } from '../errors/config-error.js'

/** The file names looked for in the working directory, in order. */
export const CONFIG_FILE_NAMES: readonly string[] = Object.freeze([
  'routemate.config.yaml',
  'routemate.config.yml',
  'routemate.config.json',
])

/** A config file's format, from its extension. */
export type ConfigFileFormat = 'yaml' | 'json'

/** A config file found on disk. */
export interface FoundConfigFile {
  /** Absolute path. */
  readonly file: string
  /** Shown in messages: relative to `cwd` when inside it, else absolute. */
  readonly displayName: string
  readonly format: ConfigFileFormat
}

/**
 * Finds the config file: `path` if given (relative to `cwd`), else env `ROUTEMATE_CONFIG`, else
 * the first of `routemate.config.yaml`, `.yml`, `.json` in `cwd` that exists. Throws a
 * {@link ConfigError} saying what was tried when none exists, or when the extension is not
 * `.yaml`, `.yml` or `.json`.
 *
 * @example
 * ```ts
 * findConfigFile(undefined, process.env, process.cwd()).file // '/srv/app/routemate.config.yaml'
 * ```
 */
export function findConfigFile(
  path: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): FoundConfigFile {
  let given = path
  let source = ''
  if (given === undefined && env.ROUTEMATE_CONFIG) {
    given = env.ROUTEMATE_CONFIG
    source = ' (from ROUTEMATE_CONFIG)'
  }
  if (given !== undefined) {
    const file = resolve(cwd, given)
    if (!existsSync(file)) throw new ConfigError('', `config file not found: ${given}${source}`)
    return { file, displayName: displayName(file, cwd), format: formatOf(file, given) }
  }
  for (const name of CONFIG_FILE_NAMES) {
    const file = resolve(cwd, name)
    if (existsSync(file)) return { file, displayName: name, format: formatOf(file, name) }
  }
  const tried = CONFIG_FILE_NAMES.map((n) => `./${n}`).join(', ')
  throw new ConfigError(
    '',
    `no config file found in ${cwd}: tried ${tried}; pass a path or set ROUTEMATE_CONFIG`,
  )
}

function formatOf(file: string, given: string): ConfigFileFormat {
  const ext = extname(file).toLowerCase()
  if (ext === '.yaml' || ext === '.yml') return 'yaml'
  if (ext === '.json') return 'json'
  throw new ConfigError('', `${given}: expected a .yaml, .yml or .json file, got "${ext || 'no extension'}"`)
}

function displayName(file: string, cwd: string): string {
  const rel = relative(cwd, file)
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file
}
