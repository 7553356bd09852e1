/**
 * `routemate/config`: router options from a `routemate.config.yaml` (or `.yml`, `.json`) file, with
 * `${ENV}` interpolation and errors that name the file, the option and its line. Needs the `yaml`
 * package; loads the named driver (`pg`, `mysql2`) on demand.
 *
 * @example
 * ```ts
 * import { createRouterFromConfig } from 'routemate/config'
 * const router = await createRouterFromConfig()
 * ```
 *
 * @module
 */
export {
  ConfigFileError,
  type ConfigFileErrorInit,
  type ConfigFileProblem,
  type ConfigFileProblemInit,
} from './config-file-error.js'
export { CONFIG_FILE_LIMITS } from './config-file-limits.js'
export { CONFIG_FILE_DRIVERS } from './file-options.js'
export {
  CONFIG_FILE_NAMES,
  type ConfigFileFormat,
  type FoundConfigFile,
  findConfigFile,
} from './find-config-file.js'
export { type InterpolationResult, interpolate } from './interpolate.js'
export {
  createRouterFromConfig,
  type LoadConfigOptions,
  type LoadedConfigFile,
  loadConfig,
  loadConfigFile,
} from './load-config.js'
