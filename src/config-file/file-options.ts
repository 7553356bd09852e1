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

/**
 * Turns a config file's data into `createRouter` options: checks what only a file restricts
 * (`driver` is a name; `balancer` and `sharding.strategy` are built-in names, since functions and
 * objects cannot come from a file; no `sharding.lookup`), then loads the named driver. Everything
 * else is left to `resolveConfig`.
 */
export async function fileToRouterOptions(
  ctx: ConfigFileContext,
  data: Record<string, unknown>,
): Promise<{ options: RouterOptions; driverName: string }> {
  const driverName = checkDriverName(ctx, data.driver)
  checkBalancer(ctx, data.balancer, 'balancer')
  if (isPlainObject(data.shards)) {
    for (const [name, shard] of Object.entries(data.shards)) {
      if (isPlainObject(shard)) checkBalancer(ctx, shard.balancer, `shards.${name}.balancer`)
    }
  }
  if (isPlainObject(data.sharding)) checkSharding(ctx, data.sharding)
  let driver: Driver
  try {
    driver = await DRIVERS[driverName]!()
  } catch (cause) {
    const pkg = DRIVER_PACKAGES[driverName]!
    const code = (cause as { code?: string }).code
    const why =
      code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND'
        ? `needs the "${pkg}" package: npm install ${pkg}`
        : `could not be loaded: ${cause instanceof Error ? cause.message : String(cause)}`
    throw ctx.fail('driver', `driver "${driverName}" ${why}`, 'value', cause)
  }
  return { options: { ...data, driver } as RouterOptions, driverName }
}

function checkDriverName(ctx: ConfigFileContext, value: unknown): string {
  const names = CONFIG_FILE_DRIVERS.map((n) => `"${n}"`).join(' or ')
  if (value === undefined) {
    throw ctx.fail('driver', `required; expected ${names}`, 'none')
  }
  if (typeof value === 'string' && Object.hasOwn(DRIVERS, value)) return value
  let hint = ''
  if (typeof value === 'string') {
    const alias = DRIVER_ALIASES[value.toLowerCase().replace(/[^a-z0-9]/g, '')]
    const close = alias ?? didYouMean(value, CONFIG_FILE_DRIVERS)
    if (close !== undefined) hint = ` (did you mean "${close}"?)`
  }
  throw ctx.fail('driver', `unknown driver ${describe(value)}${hint}; expected ${names}`)
}

function checkBalancer(ctx: ConfigFileContext, value: unknown, path: string): void {
  if (value === undefined || typeof value === 'string') return // names are checked by resolveConfig
  const names = BALANCER_NAMES.map((n) => `"${n}"`).join(', ')
  throw ctx.fail(path, `expected one of ${names}, got ${describe(value)} (a custom balancer ${IN_CODE})`)
}

function checkSharding(ctx: ConfigFileContext, sharding: Record<string, unknown>): void {
  const names = SHARDING_STRATEGIES.map((n) => `"${n}"`).join(', ')
  const strategy = sharding.strategy
  if (strategy === 'lookup') {
    throw ctx.fail(
      'sharding.strategy',
      `"lookup" needs a Map or a function, which ${IN_CODE}; in a file use one of ${names}`,
    )
  }
  if (strategy !== undefined && typeof strategy !== 'string') {
    throw ctx.fail(
      'sharding.strategy',
      `expected one of ${names}, got ${describe(strategy)} (a function or a ShardResolver ${IN_CODE})`,
    )
  }
  if (typeof strategy === 'string' && !(SHARDING_STRATEGIES as readonly string[]).includes(strategy)) {
    const hint = didYouMean(strategy, SHARDING_STRATEGIES)
    throw ctx.fail(
      'sharding.strategy',
      `unknown strategy ${describe(strategy)}${hint ? ` (did you mean "${hint}"?)` : ''}; expected one of ${names}`,
    )
  }
  if (sharding.lookup !== undefined) {
    throw ctx.fail('sharding.lookup', `a lookup is a Map or a function, which ${IN_CODE}`, 'key')
  }
}
