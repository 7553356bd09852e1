import type { Balancer, BalancerName } from '../balancer/balancer.js'
import { BALANCER_NAMES, createBalancer, isBalancer } from '../balancer/create-balancer.js'
import { createStatementClassifier } from '../classifier/statement-classifier.js'
import { ConfigError } from '../errors/config-error.js'
import {
  checkBoolean,
  checkKeys,
  checkMs,
  checkNumber,
  checkObject,
  checkPool,
  describe,
  didYouMean,
  MAX_TIMER_MS,
} from './config-checks.js'
import { NodeRegistry, type ResolvedClusterNodes, resolveClusterNodes } from './config-nodes.js'
import { resolveSharding } from './config-sharding.js'
import { resolveUrlNodes } from './config-url.js'
import type { Driver } from './driver.js'
import type { HealthCheckConfig, RouterOptions } from './options.js'
import type {
  ResolvedCluster,
  ResolvedConfig,
  ResolvedHealthCheck,
  ResolvedReadYourWrites,
  ResolvedTokens,
} from './resolved-config.js'

/** The keys of the options object, kept in step with {@link RouterOptions} by the compiler. */
const ROUTER_KEYS = Object.keys({
  driver: 1,
  primary: 1,
  replicas: 1,
  nodes: 1,
  url: 1,
  shards: 1,
  sharding: 1,
  balancer: 1,
  healthCheck: 1,
  maxReplicationLagMs: 1,
  fallbackToPrimary: 1,
  readYourWrites: 1,
  tokens: 1,
  retryReads: 1,
  classify: 1,
  queryTimeoutMs: 1,
  connectTimeoutMs: 1,
  pool: 1,
} satisfies Record<keyof RouterOptions, 1>)

const HEALTH_CHECK_KEYS = Object.keys({
  intervalMs: 1,
  timeoutMs: 1,
  failureThreshold: 1,
  successThreshold: 1,
  maxBackoffMs: 1,
  probeConnectionMaxAgeMs: 1,
} satisfies Record<keyof HealthCheckConfig, 1>)

/** The functions a driver must have for the router to start. */
const DRIVER_FUNCTIONS = [
  'createPool',
  'execute',
  'probe',
  'classify',
  'beginSql',
  'savepointSql',
  'positionReached',
  'positionAfterWrite',
  'waitForPosition',
] as const satisfies readonly (keyof Driver)[]

const DEFAULT_INTERVAL_MS = 1000
const DEFAULT_TIMEOUT_MS = 500
const DEFAULT_PROBE_CONNECTION_MAX_AGE_MS = 60_000

/**
 * Validates the options of `createRouter` (untrusted input: plain JavaScript, a config file) and
 * returns them copied, with every default filled in, and deep-frozen. The caller's objects are
 * neither mutated nor retained; only `driver`, a custom balancer and the values inside `pool`
 * objects are kept by reference.
 *
 * Throws a {@link ConfigError} at the first problem, naming its path (`replicas[1].url`), what was
 * expected and what was given; passwords in URLs are redacted from every message. Unknown keys are
 * errors (with a "did you mean" for a likely typo). Defaults are documented in {@link RouterOptions}.
 *
 * @example
 * ```ts
 * const config = resolveConfig({ driver: pgDriver(), primary: 'postgres://app@db1/app', replicas: ['postgres://app@db2/app'] })
 * config.replicas[0].name // 'replica1'
 * resolveConfig({ driver: pgDriver(), primary: 'mysql://db1/app' }) // ConfigError: primary: expected a postgres:// URL ...
 * ```
 */
export function resolveConfig(options: unknown): ResolvedConfig {
  const o = checkObject(options, '', 'the router options object { driver, primary, replicas?, ... }')
  checkKeys(o, '', ROUTER_KEYS)
  const driver = checkDriver(o.driver)
  const checkPoolOptions =
    typeof driver.checkPoolOptions === 'function' ? driver.checkPoolOptions.bind(driver) : undefined
  const defaults = {
    pool: Object.freeze(checkPool(o.pool, 'pool', checkPoolOptions)),
    queryTimeoutMs: checkMs(o.queryTimeoutMs, 'queryTimeoutMs', 0, false, 0),
    connectTimeoutMs: checkMs(o.connectTimeoutMs, 'connectTimeoutMs', 0, true, 5000),
  }
  const balancer = resolveBalancer(o.balancer, 'balancer')
  const maxReplicationLagMs = checkNumber(o.maxReplicationLagMs, 'maxReplicationLagMs', {
    min: 0,
    default: 5000,
  })
  const fallbackToPrimary = checkBoolean(o.fallbackToPrimary, 'fallbackToPrimary', true)
  const registry = new NodeRegistry()
  const clusters: ResolvedCluster[] = []
  let targetSessionAttrs: ResolvedConfig['targetSessionAttrs']
  if (o.shards !== undefined) {
    for (const key of ['primary', 'replicas', 'nodes', 'url'] as const) {
      if (o[key] !== undefined) {
        throw new ConfigError(key, 'not allowed with "shards": give each shard its own primary and replicas')
      }
    }
    const shards = checkObject(o.shards, 'shards', 'an object of shards { name: { primary, replicas } }')
    const names = Object.keys(shards)
    if (names.length === 0) throw new ConfigError('shards', 'expected at least one shard')
    for (const name of names) {
      const path = `shards.${name}`
      if (!SHARD_NAME.test(name)) {
        throw new ConfigError(
          path,
          `expected a shard name of 1 to 64 characters from [A-Za-z0-9_.:-], got "${name}"`,
        )
      }
      const shard = checkObject(shards[name], path, 'a shard object { primary, replicas?, ... }')
      checkKeys(shard, path, SHARD_KEYS)
      const shardDefaults = {
        pool: Object.freeze({ ...defaults.pool, ...checkPool(shard.pool, `${path}.pool`, checkPoolOptions) }),
        queryTimeoutMs: checkMs(
          shard.queryTimeoutMs,
          `${path}.queryTimeoutMs`,
          0,
          false,
          defaults.queryTimeoutMs,
        ),
        connectTimeoutMs: checkMs(
          shard.connectTimeoutMs,
          `${path}.connectTimeoutMs`,
          0,
          true,
          defaults.connectTimeoutMs,
        ),
      }
      const nodes = resolveClusterNodes(
        shard,
        path,
        `${name}.`,
        driver.dialect,
        shardDefaults,
        registry,
        checkPoolOptions,
      )
      clusters.push(
        Object.freeze({
          name,
          ...nodes,
          balancer:
            shard.balancer === undefined ? balancer : resolveBalancer(shard.balancer, `${path}.balancer`),
          maxReplicationLagMs: checkNumber(shard.maxReplicationLagMs, `${path}.maxReplicationLagMs`, {
            min: 0,
            default: maxReplicationLagMs,
          }),
          fallbackToPrimary: checkBoolean(
            shard.fallbackToPrimary,
            `${path}.fallbackToPrimary`,
            fallbackToPrimary,
          ),
          defaults: Object.freeze(shardDefaults),
        }),
      )
    }
  } else {
    if (o.sharding !== undefined) {
      throw new ConfigError('sharding', 'only with "shards": configure the shards the keys are spread over')
    }
    let nodes: ResolvedClusterNodes
    if (o.url === undefined) {
      nodes = resolveClusterNodes(o, '', '', driver.dialect, defaults, registry, checkPoolOptions)
    } else {
      const fromUrl = resolveUrlNodes(o, driver.dialect, defaults, registry, checkPoolOptions)
      nodes = fromUrl.nodes
      targetSessionAttrs = fromUrl.targetSessionAttrs
    }
    clusters.push(
      Object.freeze({
        name: 'default',
        ...nodes,
        balancer,
        maxReplicationLagMs,
        fallbackToPrimary,
        defaults: Object.freeze(defaults),
      }),
    )
  }
  // In the order the checks always ran: sharding, then health checks.
  const sharding =
    o.shards === undefined
      ? undefined
      : resolveSharding(o.sharding, Object.freeze(clusters.map((c) => c.name)))
  const healthCheck = resolveHealthCheck(o.healthCheck)
  if (!healthCheck.enabled) {
    const discovering = clusters.find((c) => c.discovery)
    if (discovering !== undefined) {
      const where =
        o.shards !== undefined
          ? `"shards.${discovering.name}.nodes"`
          : o.url !== undefined
            ? '"url"'
            : '"nodes"'
      throw new ConfigError(
        'healthCheck',
        `false is not allowed with ${where}: roles are discovered by the probes, so without them no primary would ever be found; keep health checks on, or give "primary" and "replicas"`,
      )
    }
  }
  const tokens = resolveTokens(o.tokens)
  for (const key of tokens.keys) registry.secrets.add(key) // redacted like passwords, should one ever show
  return Object.freeze({
    driver,
    clusters: Object.freeze(clusters),
    sharded: o.shards !== undefined,
    sharding,
    balancer,
    healthCheck,
    maxReplicationLagMs,
    fallbackToPrimary,
    readYourWrites: resolveReadYourWrites(o.readYourWrites),
    tokens,
    retryReads: checkBoolean(o.retryReads, 'retryReads', true),
    classify: resolveClassify(o.classify, driver.dialect),
    targetSessionAttrs,
    secrets: Object.freeze([...registry.secrets]),
  })
}

function resolveClassify(value: unknown, dialect: Driver['dialect']): ResolvedConfig['classify'] {
  if (value === undefined || value === false) return undefined
  if (value === true) return createStatementClassifier({ dialect })
  const o = checkObject(value, 'classify', 'true, false or { writeFunctions: [...] }')
  checkKeys(o, 'classify', ['writeFunctions'])
  try {
    return createStatementClassifier({
      dialect,
      writeFunctions: o.writeFunctions as readonly string[] | undefined,
    })
  } catch (err) {
    if (err instanceof ConfigError)
      throw new ConfigError(`classify.${err.path}`, err.message.slice(err.path.length + 2))
    throw err
  }
}

const SHARD_NAME = /^[A-Za-z0-9_.:-]{1,64}$/

/** The keys of a shard object. */
const SHARD_KEYS = [
  'primary',
  'replicas',
  'nodes',
  'balancer',
  'maxReplicationLagMs',
  'fallbackToPrimary',
  'pool',
  'queryTimeoutMs',
  'connectTimeoutMs',
]

function checkDriver(value: unknown): Driver {
  if (value === undefined) {
    throw new ConfigError(
      'driver',
      "required; pass pgDriver() from 'routemate/pg' or mysql2Driver() from 'routemate/mysql2'",
    )
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const hint = typeof value === 'function' ? ' (call it: pgDriver() rather than pgDriver)' : ''
    throw new ConfigError(
      'driver',
      `expected a Driver object such as pgDriver() from 'routemate/pg', got ${describe(value)}${hint}`,
    )
  }
  const driver = value as Record<string, unknown>
  const dialect = driver.dialect
  if (dialect !== 'postgres' && dialect !== 'mysql') {
    throw new ConfigError('driver.dialect', `expected "postgres" or "mysql", got ${describe(dialect)}`)
  }
  if (typeof driver.name !== 'string' || driver.name === '') {
    throw new ConfigError('driver.name', `expected a non-empty string, got ${describe(driver.name)}`)
  }
  for (const fn of DRIVER_FUNCTIONS) {
    const member = driver[fn]
    if (typeof member !== 'function') {
      throw new ConfigError(`driver.${fn}`, `expected a function, got ${describe(member)}`)
    }
  }
  return value as Driver
}

function resolveBalancer(value: unknown, path: string): () => Balancer {
  if (value === undefined) return createBalancer('round-robin')
  if (typeof value === 'string' && (BALANCER_NAMES as readonly string[]).includes(value)) {
    return createBalancer(value as BalancerName)
  }
  if (typeof value === 'function') return createBalancer(value as () => Balancer)
  if (isBalancer(value)) return createBalancer(value)
  let given = describe(value)
  if (typeof value === 'string') {
    const hint = didYouMean(value, BALANCER_NAMES)
    if (hint) given += ` (did you mean "${hint}"?)`
  } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    given += ' without a pick() function'
  }
  const names = BALANCER_NAMES.map((name) => `"${name}"`).join(', ')
  throw new ConfigError(
    path,
    `expected one of ${names}, a Balancer object or a factory function, got ${given}`,
  )
}

function resolveHealthCheck(value: unknown): ResolvedHealthCheck {
  if (value === false) {
    return Object.freeze({
      enabled: false,
      intervalMs: DEFAULT_INTERVAL_MS,
      timeoutMs: DEFAULT_TIMEOUT_MS,
      failureThreshold: 2,
      successThreshold: 1,
      maxBackoffMs: 10 * DEFAULT_INTERVAL_MS,
      probeConnectionMaxAgeMs: DEFAULT_PROBE_CONNECTION_MAX_AGE_MS,
    })
  }
  const what = 'an object { intervalMs?, timeoutMs?, ... } or false to turn active checks off'
  const o = value === undefined ? {} : checkObject(value, 'healthCheck', what)
  checkKeys(o, 'healthCheck', HEALTH_CHECK_KEYS)
  // >= 2: a probe's timeoutMs (an integer > 0) must fit below the interval.
  const intervalMs = checkMs(o.intervalMs, 'healthCheck.intervalMs', 2, false, DEFAULT_INTERVAL_MS)
  const interval = `healthCheck.intervalMs (${intervalMs}${o.intervalMs === undefined ? ', the default' : ''})`
  let timeoutMs: number
  if (o.timeoutMs === undefined) {
    // Only an explicit timeout can be wrong: with a short interval the default shrinks to fit.
    timeoutMs = Math.min(DEFAULT_TIMEOUT_MS, Math.floor(intervalMs / 2))
  } else {
    timeoutMs = checkMs(o.timeoutMs, 'healthCheck.timeoutMs', 0, true, DEFAULT_TIMEOUT_MS)
    if (timeoutMs >= intervalMs) {
      throw new ConfigError(
        'healthCheck.timeoutMs',
        `expected an integer below ${interval}, got ${timeoutMs}`,
      )
    }
  }
  const failureThreshold = checkNumber(o.failureThreshold, 'healthCheck.failureThreshold', {
    integer: true,
    min: 1,
    default: 2,
  })
  const successThreshold = checkNumber(o.successThreshold, 'healthCheck.successThreshold', {
    integer: true,
    min: 1,
    default: 1,
  })
  const defaultBackoff = Math.min(10 * intervalMs, MAX_TIMER_MS)
  const maxBackoffMs = checkMs(o.maxBackoffMs, 'healthCheck.maxBackoffMs', 0, true, defaultBackoff)
  if (maxBackoffMs < intervalMs) {
    throw new ConfigError(
      'healthCheck.maxBackoffMs',
      `expected an integer >= ${interval}, got ${maxBackoffMs}`,
    )
  }
  const probeConnectionMaxAgeMs = checkMs(
    o.probeConnectionMaxAgeMs,
    'healthCheck.probeConnectionMaxAgeMs',
    0,
    false,
    DEFAULT_PROBE_CONNECTION_MAX_AGE_MS,
  )
  return Object.freeze({
    enabled: true,
    intervalMs,
    timeoutMs,
    failureThreshold,
    successThreshold,
    maxBackoffMs,
    probeConnectionMaxAgeMs,
  })
}

/** The default of `readYourWrites`: sessions (one per HTTP request with the integrations) honour their tokens. */
const DEFAULT_READ_YOUR_WRITES: ResolvedReadYourWrites = Object.freeze({ mode: 'position', maxWaitMs: 0 })

/** Shortest token secret accepted, in characters. */
const MIN_SECRET_CHARS = 16

function resolveTokens(value: unknown): ResolvedTokens {
  if (value === undefined) return Object.freeze({ keys: Object.freeze([]) })
  const o = checkObject(value, 'tokens', 'an object { secret }')
  checkKeys(o, 'tokens', ['secret'])
  const secret = o.secret
  if (secret === undefined)
    throw new ConfigError(
      'tokens.secret',
      'required; expected a string or a list of strings (the first signs)',
    )
  const list = typeof secret === 'string' ? [secret] : secret
  if (!Array.isArray(list) || list.length === 0)
    throw new ConfigError(
      'tokens.secret',
      `expected a string or a non-empty list of strings, got ${Array.isArray(list) ? 'an empty list' : describeSecret(secret)}`,
    )
  const keys = list.map((key: unknown, i) => {
    const path = typeof secret === 'string' ? 'tokens.secret' : `tokens.secret[${i}]`
    // Never echo a secret: describe it by type and length only.
    if (typeof key !== 'string' || key.length < MIN_SECRET_CHARS)
      throw new ConfigError(
        path,
        `expected a string of at least ${MIN_SECRET_CHARS} characters, got ${describeSecret(key)}`,
      )
    return key
  })
  return Object.freeze({ keys: Object.freeze(keys) })
}

function describeSecret(value: unknown): string {
  if (typeof value === 'string') return `a string of ${value.length} characters`
  if (value === null) return 'null'
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`
}

function resolveReadYourWrites(value: unknown): ResolvedReadYourWrites {
  if (value === undefined) return DEFAULT_READ_YOUR_WRITES
  if (value === false) return Object.freeze({ mode: 'off' })
  const what = `false, { mode: "window", windowMs? } or { mode: "position", maxWaitMs? }`
  const o = checkObject(value, 'readYourWrites', what)
  const mode = o.mode
  if (mode === 'window') {
    checkKeys(o, 'readYourWrites', ['mode', 'windowMs'])
    return Object.freeze({ mode, windowMs: checkMs(o.windowMs, 'readYourWrites.windowMs', 0, true, 2000) })
  }
  if (mode === 'position') {
    checkKeys(o, 'readYourWrites', ['mode', 'maxWaitMs'])
    return Object.freeze({ mode, maxWaitMs: checkMs(o.maxWaitMs, 'readYourWrites.maxWaitMs', 0, false, 0) })
  }
  if (mode === undefined)
    throw new ConfigError('readYourWrites.mode', 'required; expected "window" or "position"')
  const hint = typeof mode === 'string' ? didYouMean(mode, ['window', 'position']) : undefined
  throw new ConfigError(
    'readYourWrites.mode',
    `expected "window" or "position", got ${describe(mode)}${hint ? ` (did you mean "${hint}"?)` : ''}`,
  )
}
