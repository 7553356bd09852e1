import type { RouterOptions } from '../router/options.js'
import type { ResolvedConfig } from '../router/resolved-config.js'
import { createRouter, type Router } from '../router/router.js'
import { collectConfigErrors } from './collect-config-errors.js'
import { ConfigFileContext } from './config-file-context.js'
import { fileToRouterOptions } from './file-options.js'
import { type FoundConfigFile, findConfigFile } from './find-config-file.js'
import { parseConfigFile } from './parse-config-file.js'

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** Environment for `${VAR}` references and `ROUTEMATE_CONFIG`. Default: `process.env`. */
  env?: Readonly<Record<string, string | undefined>>
  /** Directory a relative path and the default file names are resolved against. Default: `process.cwd()`. */
  cwd?: string
}

/** A loaded, validated config file (what {@link loadConfigFile} returns). */
export interface LoadedConfigFile {
  /** Options for `createRouter` (with the named driver instantiated). */
  readonly options: RouterOptions
  /** The same options as `createRouter` resolves them: defaults filled in, frozen. */
  readonly resolved: ResolvedConfig
  /** The file: absolute path, display name, format. */
  readonly file: FoundConfigFile
  /** The driver name the file gives (`pg`, `mysql2`). */
  readonly driverName: string
  /** Passwords seen in the file and its environment references, for redacting any later message. */
  readonly secrets: readonly string[]
}

/**
 * Loads and validates a config file, returning the details a tool needs (see {@link loadConfig}
 * for the rules).
 *
 * @example
 * ```ts
 * const { options, resolved, file } = await loadConfigFile('deploy/routemate.config.yaml')
 * ```
 */
export async function loadConfigFile(
  path?: string,
  options: LoadConfigOptions = {},
): Promise<LoadedConfigFile> {
  const env = options.env ?? process.env
  const found = findConfigFile(path, env, options.cwd ?? process.cwd())
  const ctx = new ConfigFileContext(found, env)
  const { data, failedPaths } = await parseConfigFile(ctx)
  const file = await fileToRouterOptions(ctx, data)
  const reported = [...failedPaths, ...file.reported]
  const resolved =
    file.validationDriver === undefined
      ? undefined
      : collectConfigErrors(ctx, data, file.validationDriver, reported)
  ctx.throwIfProblems()
  const { options: routerOptions, driverName } = file
  if (resolved === undefined || routerOptions === undefined || driverName === undefined) {
    throw ctx.fail('', 'the options could not be checked', 'none') // not reached: a problem is always recorded
  }
  for (const s of resolved.secrets) ctx.addSecret(s)
  return Object.freeze({
    options: routerOptions,
    resolved,
    file: found,
    driverName,
    secrets: Object.freeze([...ctx.secrets]),
  })
}

/**
 * Reads a config file (`routemate.config.yaml`, `.yml` or `.json`) into the options of
 * `createRouter`, validated exactly as `createRouter` validates them.
 *
 * - `path` defaults to env `ROUTEMATE_CONFIG`, else the first of `./routemate.config.yaml`,
 *   `./routemate.config.yml`, `./routemate.config.json` that exists. The format follows the extension.
 * - `driver: pg` or `driver: mysql2` names the driver (loaded on demand; its package must be installed).
 * - `${VAR}` and `${VAR:-default}` in string values read the environment (`$${` is a literal `${`);
 *   an unset variable without a default is an error.
 * - `balancer` and `sharding.strategy` must be built-in names; `sharding.lookup` is not allowed
 *   (functions and objects cannot come from a file).
 *
 * Problems are reported together, in one {@link ConfigFileError} (a `ConfigError`) listing every
 * one found in one run, in file order, in `errors`: syntax errors, alias problems, bad references
 * and the options `createRouter` rejects, each naming the file, the option's path and, where
 * known, its line and column; passwords — in URLs or read from the environment — never appear in
 * it. Files are read within {@link CONFIG_FILE_LIMITS} (at most 1 MiB, nesting 64 levels deep,
 * 100 000 values with aliases expanded). Needs the `yaml` package (for JSON files too).
 *
 * @example
 * ```ts
 * // routemate.config.yaml:
 * //   driver: pg
 * //   primary: postgres://app:${DB_PASSWORD}@db1:5432/app
 * //   replicas: [postgres://app:${DB_PASSWORD}@db2:5432/app]
 * const router = createRouter(await loadConfig())
 * ```
 */
export async function loadConfig(path?: string, options?: LoadConfigOptions): Promise<RouterOptions> {
  return (await loadConfigFile(path, options)).options
}

/**
 * {@link loadConfig}, then `createRouter`. Call `router.ready()` to wait for the first probes.
 *
 * @example
 * ```ts
 * const router = await createRouterFromConfig()          // ./routemate.config.yaml
 * await router.ready()
 * ```
 */
export async function createRouterFromConfig(path?: string, options?: LoadConfigOptions): Promise<Router> {
  return createRouter(await loadConfig(path, options))
}
