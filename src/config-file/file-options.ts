import { BALANCER_NAMES } from '../balancer/create-balancer.js'
import { describe, didYouMean, isPlainObject } from '../router/config-checks.js'
import type { Driver } from '../router/driver.js'
import type { RouterOptions } from '../router/options.js'
import { SHARDING_STRATEGIES } from '../sharding/create-shard-resolver.js'
import type { ConfigFileContext } from './config-file-context.js'

/** The drivers a config file can name, and how to load each (lazily: the core imports no driver). */
const DRIVERS: Readonly<Record<string, () => Promise<Driver>>> = {
  pg: async () => (await import('../pg/index.js')).pgDriver(),
  mysql2: async () => (await import('../mysql2/index.js')).mysql2Driver(),
}

/** The npm package each driver needs. */
const DRIVER_PACKAGES: Readonly<Record<string, string>> = { pg: 'pg', mysql2: 'mysql2' }

/** Words people write for a driver, and the driver name they mean. */
const DRIVER_ALIASES: Readonly<Record<string, string>> = {
  postgres: 'pg',
  postgresql: 'pg',
  pgdriver: 'pg',
  mysql: 'mysql2',
  mariadb: 'mysql2',
  mysql2driver: 'mysql2',
}

/** The driver names a config file accepts. */
export const CONFIG_FILE_DRIVERS: readonly string[] = Object.freeze(Object.keys(DRIVERS))

const IN_CODE = 'cannot come from a config file; pass it to createRouter() in code'

/** What {@link fileToRouterOptions} made of a file's data. */
export interface FileRouterOptions {
  /** Options for `createRouter`, with the named driver; `undefined` when that driver is not to be had. */
  readonly options: RouterOptions | undefined
  /** The driver name the file gives, when it is one. */
  readonly driverName: string | undefined
  /**
   * A driver to check the other options with: the named one, else (a problem already reported) the
   * one a misspelt name or the URLs' schemes point to, loaded or a stand-in of its dialect;
   * `undefined` when no dialect can be told.
   */
  readonly validationDriver: Driver | undefined
  /** Paths of the problems reported here (the later validation is not to report them again). */
  readonly reported: readonly string[]
}

/**
 * Turns a config file's data into `createRouter` options: checks what only a file restricts
 * (`driver` is a name; `balancer` and `sharding.strategy` are built-in names, since functions and
 * objects cannot come from a file; no `sharding.lookup`), then loads the named driver. Everything
 * else is left to `resolveConfig`. Problems are recorded in `ctx`, all of them.
 */
export async function fileToRouterOptions(
  ctx: ConfigFileContext,
  data: Record<string, unknown>,
): Promise<FileRouterOptions> {
  const reported: string[] = []
  const report = (
    path: string,
    reason: string,
    where: 'key' | 'value' | 'none' = 'value',
    cause?: unknown,
  ) => {
    ctx.report(path, reason, where, cause)
    reported.push(path)
  }
  const { name: driverName, guess } = checkDriverName(report, data.driver, data)
  checkBalancer(report, data.balancer, 'balancer')
  if (isPlainObject(data.shards)) {
    for (const [name, shard] of Object.entries(data.shards)) {
      if (isPlainObject(shard)) checkBalancer(report, shard.balancer, `shards.${name}.balancer`)
    }
  }
  if (isPlainObject(data.sharding)) checkSharding(report, data.sharding)
  let driver: Driver | undefined
  if (driverName !== undefined) {
    try {
      driver = await DRIVERS[driverName]!()
    } catch (cause) {
      const pkg = DRIVER_PACKAGES[driverName]!
      const code = (cause as { code?: string }).code
      const why =
        code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND'
          ? `needs the "${pkg}" package: npm install ${pkg}`
          : `could not be loaded: ${cause instanceof Error ? cause.message : String(cause)}`
      report('driver', `driver "${driverName}" ${why}`, 'value', cause)
    }
  }
  const stand = driverName ?? guess
  const validationDriver = driver ?? (stand === undefined ? undefined : standInDriver(stand))
  return {
    options: driver === undefined ? undefined : ({ ...data, driver } as RouterOptions),
    driverName,
    validationDriver,
    reported,
  }
}

type Report = (path: string, reason: string, where?: 'key' | 'value' | 'none', cause?: unknown) => void

/**
 * A driver of the given one's dialect that passes the driver check (every member a function), to
 * validate the other options with when the real one is missing; it cannot be used.
 */
function standInDriver(name: string): Driver {
  const base = { name, dialect: DIALECTS[name] }
  const fail = () => {
    throw new Error(`the "${name}" driver is not loaded`)
  }
  return new Proxy(base, {
    get: (target, key) => {
      if (key in target) return target[key as keyof typeof target]
      return typeof key === 'string' && key !== 'then' ? fail : undefined
    },
  }) as unknown as Driver
}

/** The dialect of each driver a file can name. */
const DIALECTS: Readonly<Record<string, 'postgres' | 'mysql'>> = { pg: 'postgres', mysql2: 'mysql' }

/** The driver the first URL in the data speaks to, if any. */
function driverOfUrls(data: unknown): string | undefined {
  const stack = [data]
  while (stack.length > 0) {
    const value = stack.pop()
    if (typeof value === 'string') {
      const scheme = /^(postgres|postgresql|mysql|mariadb):\/\//i.exec(value)?.[1]?.toLowerCase()
      if (scheme !== undefined) return scheme.startsWith('postgres') ? 'pg' : 'mysql2'
    } else if (Array.isArray(value)) {
      stack.push(...[...value].reverse())
    } else if (isPlainObject(value)) {
      stack.push(...Object.values(value).reverse())
    }
  }
  return undefined
}

function checkDriverName(
  report: Report,
  value: unknown,
  data: Record<string, unknown>,
): { name?: string; guess?: string } {
  const names = CONFIG_FILE_DRIVERS.map((n) => `"${n}"`).join(' or ')
  if (value === undefined) {
    report('driver', `required; expected ${names}`, 'none')
    return { guess: driverOfUrls(data) }
  }
  if (typeof value === 'string' && Object.hasOwn(DRIVERS, value)) return { name: value }
  let hint = ''
  let close: string | undefined
  if (typeof value === 'string') {
    const alias = DRIVER_ALIASES[value.toLowerCase().replace(/[^a-z0-9]/g, '')]
    close = alias ?? didYouMean(value, CONFIG_FILE_DRIVERS)
    if (close !== undefined) hint = ` (did you mean "${close}"?)`
  }
  report('driver', `unknown driver ${describe(value)}${hint}; expected ${names}`)
  return { guess: close ?? driverOfUrls(data) }
}

function checkBalancer(report: Report, value: unknown, path: string): void {
  if (value === undefined || typeof value === 'string') return // names are checked by resolveConfig
  const names = BALANCER_NAMES.map((n) => `"${n}"`).join(', ')
  report(path, `expected one of ${names}, got ${describe(value)} (a custom balancer ${IN_CODE})`)
}

function checkSharding(report: Report, sharding: Record<string, unknown>): void {
  const names = SHARDING_STRATEGIES.map((n) => `"${n}"`).join(', ')
  const strategy = sharding.strategy
  if (strategy === 'lookup') {
    report(
      'sharding.strategy',
      `"lookup" needs a Map or a function, which ${IN_CODE}; in a file use one of ${names}`,
    )
  } else if (strategy !== undefined && typeof strategy !== 'string') {
    report(
      'sharding.strategy',
      `expected one of ${names}, got ${describe(strategy)} (a function or a ShardResolver ${IN_CODE})`,
    )
  } else if (typeof strategy === 'string' && !(SHARDING_STRATEGIES as readonly string[]).includes(strategy)) {
    const hint = didYouMean(strategy, SHARDING_STRATEGIES)
    report(
      'sharding.strategy',
      `unknown strategy ${describe(strategy)}${hint ? ` (did you mean "${hint}"?)` : ''}; expected one of ${names}`,
    )
  }
  if (sharding.lookup !== undefined) {
    report('sharding.lookup', `a lookup is a Map or a function, which ${IN_CODE}`, 'key')
  }
}
