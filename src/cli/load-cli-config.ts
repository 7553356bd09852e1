import { interpolate } from '../config-file/interpolate.js'
import { type LoadConfigOptions, loadConfigFile } from '../config-file/load-config.js'
import { ConfigError } from '../errors/config-error.js'
import { resolveConfig } from '../router/config.js'
import { quote } from '../router/config-checks.js'
import type { Driver } from '../router/driver.js'
import type { RouterOptions } from '../router/options.js'
import type { ResolvedConfig } from '../router/resolved-config.js'
import { passwordsIn, redactUrlValue } from '../util/redact.js'

/** What `check` and `status` work on: a loaded config file, or a router made of one URL. */
export interface CliConfig {
  /** Options for `createRouter`. */
  readonly options: RouterOptions
  /** The options as `createRouter` resolves them. */
  readonly resolved: ResolvedConfig
  /** How messages name it: the file's display name, or the URL with its password redacted. */
  readonly file: { readonly displayName: string }
  /** Passwords to redact from any later message. */
  readonly secrets: readonly string[]
}

/** A URL rather than a file path: a scheme and `//`. */
const URL_ARGUMENT = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//

/** The driver each URL scheme needs, and how to load it (on demand: the CLI imports no driver up front). */
const DRIVER_OF_SCHEME: Readonly<Record<string, { name: string; load: () => Promise<Driver> }>> = {
  postgres: { name: 'pg', load: async () => (await import('../pg/index.js')).pgDriver() },
  postgresql: { name: 'pg', load: async () => (await import('../pg/index.js')).pgDriver() },
  mysql: { name: 'mysql2', load: async () => (await import('../mysql2/index.js')).mysql2Driver() },
  mariadb: { name: 'mysql2', load: async () => (await import('../mysql2/index.js')).mysql2Driver() },
}

/**
 * The `[config]` argument of `check` and `status`: a config file (see `loadConfigFile`), or a
 * connection URL — one host or several, libpq's multi-host syntax — which becomes
 * `createRouter({ driver, url })` with the driver its scheme needs (`postgres://` → `pg`,
 * `mysql://`/`mariadb://` → `mysql2`). `${VAR}` and `${VAR:-default}` in the URL read the
 * environment as in config files, so a single-quoted URL keeps the password out of the process
 * list. Problems are `ConfigError`s (path `url`), passwords redacted.
 *
 * @example
 * ```ts
 * await loadCliConfig('postgres://app:${DB_PASSWORD}@db1,db2/app', { env: process.env })
 * // { options: { driver, url }, resolved, file: { displayName: 'postgres://app:***@db1,db2/app' }, secrets }
 * ```
 */
export async function loadCliConfig(arg: string | undefined, options: LoadConfigOptions): Promise<CliConfig> {
  if (arg === undefined || !URL_ARGUMENT.test(arg)) return loadConfigFile(arg, options)
  const interpolated = interpolate(arg, options.env ?? process.env)
  if (!interpolated.ok) throw new ConfigError('url', interpolated.message)
  const url = interpolated.value
  const scheme = /^[^:]*/.exec(url)?.[0].toLowerCase() ?? ''
  const driver = DRIVER_OF_SCHEME[scheme]
  if (driver === undefined) {
    throw new ConfigError(
      'url',
      `expected a postgres://, postgresql://, mysql:// or mariadb:// URL (or a config file), got ${quote(arg)}`,
    )
  }
  let loaded: Driver
  try {
    loaded = await driver.load()
  } catch (cause) {
    const code = (cause as { code?: string }).code
    const why =
      code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND'
        ? `needs the "${driver.name}" package: npm install ${driver.name}`
        : `could not be loaded: ${cause instanceof Error ? cause.message : String(cause)}`
    throw new ConfigError('driver', `driver "${driver.name}" (for ${scheme}:// URLs) ${why}`, { cause })
  }
  const routerOptions: RouterOptions = { driver: loaded, url }
  const resolved = resolveConfig(routerOptions)
  return Object.freeze({
    options: routerOptions,
    resolved,
    file: Object.freeze({ displayName: redactUrlValue(arg) }),
    secrets: Object.freeze([...new Set([...resolved.secrets, ...passwordsIn(url)])]),
  })
}
