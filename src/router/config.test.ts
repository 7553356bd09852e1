import { describe, expect, it } from 'vitest'
import type { Balancer } from '../balancer/balancer.js'
import { ConfigError } from '../errors/config-error.js'
import { resolveConfig } from './config.js'
import { didYouMean, editDistance } from './config-checks.js'
import { configDriver as fakeDriver } from './config-driver.test-kit.js'

const driver = fakeDriver()
const PRIMARY = 'postgres://app@10.0.0.1:5432/app'
const R1 = 'postgres://app@10.0.0.2:5432/app'
const R2 = 'postgres://app@10.0.0.3:5432/app'

function configError(fn: () => unknown): ConfigError {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return err as ConfigError
  }
  throw new Error('expected a ConfigError, nothing was thrown')
}

describe('resolveConfig: valid options', () => {
  it('resolves shards with per-shard overrides and prefixed default names', () => {
    const config = resolveConfig({
      driver,
      balancer: 'random',
      shards: {
        s0: { primary: PRIMARY, replicas: [R1] },
        s1: {
          primary: 'postgres://db9/app',
          replicas: [R2],
          balancer: 'least-outstanding',
          fallbackToPrimary: false,
        },
      },
      sharding: { strategy: 'hash', defaultShard: 's1' },
    })
    expect(config.sharding?.resolver.name).toBe('hash')
    expect(config.sharding?.shardNames).toEqual(['s0', 's1'])
    expect(config.sharding?.defaultShard).toBe('s1')
    expect(config.sharded).toBe(true)
    expect(config.clusters.map((c) => [c.name, c.primary?.name, c.replicas.map((r) => r.name)])).toEqual([
      ['s0', 's0.primary', ['s0.replica1']],
      ['s1', 's1.primary', ['s1.replica1']],
    ])
    expect(config.clusters[0]!.balancer().name).toBe('random')
    expect(config.clusters[1]!.balancer().name).toBe('least-outstanding')
    expect(config.clusters.map((c) => c.fallbackToPrimary)).toEqual([true, false])
  })

  it('resolves nodes without roles for discovery', () => {
    const config = resolveConfig({ driver, nodes: [PRIMARY, R1] })
    const c = config.clusters[0]!
    expect(c.discovery).toBe(true)
    expect(c.primary).toBeUndefined()
    expect(c.replicas.map((r) => r.name)).toEqual(['node1', 'node2'])
  })

  it('fills in every default', () => {
    const config = resolveConfig({ driver, primary: PRIMARY })
    const { driver: resolvedDriver, balancer, clusters, ...rest } = config
    expect(resolvedDriver).toBe(driver)
    expect(balancer().name).toBe('round-robin')
    expect(balancer()).not.toBe(balancer()) // one instance per cluster
    const { balancer: clusterBalancer, ...cluster } = clusters[0]!
    expect(clusterBalancer).toBe(balancer)
    expect(clusters).toHaveLength(1)
    expect(cluster).toStrictEqual({
      name: 'default',
      primary: {
        name: 'primary',
        url: PRIMARY,
        role: 'primary',
        weight: 1,
        pool: {},
        queryTimeoutMs: 0,
        connectTimeoutMs: 5000,
      },
      replicas: [],
      discovery: false,
      maxReplicationLagMs: 5000,
      fallbackToPrimary: true,
      defaults: { pool: {}, queryTimeoutMs: 0, connectTimeoutMs: 5000 },
    })
    expect(rest).toStrictEqual({
      sharded: false,
      sharding: undefined,
      classify: undefined,
      targetSessionAttrs: undefined,
      healthCheck: {
        enabled: true,
        intervalMs: 1000,
        timeoutMs: 500,
        failureThreshold: 2,
        successThreshold: 1,
        maxBackoffMs: 10000,
        probeConnectionMaxAgeMs: 60000,
      },
      maxReplicationLagMs: 5000,
      fallbackToPrimary: true,
      readYourWrites: { mode: 'position', maxWaitMs: 0 },
      tokens: { keys: [] },
      retryReads: true,
      secrets: [],
    })
  })

  it('names replicas by position, inherits router-level settings and merges pools (node wins)', () => {
    const config = resolveConfig({
      driver,
      primary: { url: PRIMARY, pool: { max: 20 } },
      replicas: [R1, { url: R2, name: 'r-2', weight: 3, pool: { max: 5, ssl: true }, queryTimeoutMs: 0 }],
      pool: { max: 10, idleTimeoutMillis: 1000 },
      queryTimeoutMs: 2000,
      connectTimeoutMs: 3000,
    })
    expect(config.clusters[0]!.primary!).toStrictEqual({
      name: 'primary',
      url: PRIMARY,
      role: 'primary',
      weight: 1,
      pool: { max: 20, idleTimeoutMillis: 1000 },
      queryTimeoutMs: 2000,
      connectTimeoutMs: 3000,
    })
    expect(config.clusters[0]!.replicas).toStrictEqual([
      {
        name: 'replica1',
        url: R1,
        role: 'replica',
        weight: 1,
        pool: { max: 10, idleTimeoutMillis: 1000 },
        queryTimeoutMs: 2000,
        connectTimeoutMs: 3000,
      },
      {
        name: 'r-2',
        url: R2,
        role: 'replica',
        weight: 3,
        pool: { max: 5, idleTimeoutMillis: 1000, ssl: true },
        queryTimeoutMs: 0, // an explicit 0 (no bound) beats the inherited 2000
        connectTimeoutMs: 3000,
      },
    ])
    expect(config.clusters[0]!.replicas[0]!.pool).not.toBe(config.clusters[0]!.replicas[1]!.pool)
  })

  it('accepts the URL schemes of each dialect', () => {
    expect(resolveConfig({ driver, primary: 'postgresql://db1/app' }).clusters[0]!.primary!.url).toBe(
      'postgresql://db1/app',
    )
    const mysql = resolveConfig({
      driver: fakeDriver('mysql'),
      primary: 'mysql://app@db1:3306/app',
      replicas: ['mariadb://app@db2/app'],
    })
    expect(mysql.clusters[0]!.replicas.map((r) => r.url)).toEqual(['mariadb://app@db2/app'])
  })

  it('accepts weight 0, queryTimeoutMs 0 and maxReplicationLagMs 0', () => {
    const config = resolveConfig({
      driver,
      primary: PRIMARY,
      replicas: [
        { url: R1, weight: 0 },
        { url: R2, weight: 2.5 },
      ],
      maxReplicationLagMs: 0,
      fallbackToPrimary: false,
      retryReads: false,
    })
    expect(config.clusters[0]!.replicas.map((r) => r.weight)).toEqual([0, 2.5])
    expect(config.maxReplicationLagMs).toBe(0)
    expect(config.fallbackToPrimary).toBe(false)
    expect(config.retryReads).toBe(false)
  })

  it('treats undefined values as absent', () => {
    const config = resolveConfig({
      driver,
      primary: { url: PRIMARY, name: undefined, weight: undefined },
      replicas: undefined,
      healthCheck: undefined,
      readYourWrites: undefined,
      balancer: undefined,
      pool: undefined,
    })
    expect(config.clusters[0]!.primary!.name).toBe('primary')
    expect(config.clusters[0]!.replicas).toEqual([])
  })

  it('accepts null-prototype objects (parsed config files) and a driver class instance', () => {
    class Driver {
      readonly dialect = 'postgres'
      readonly name = 'class'
      createPool() {}
      execute() {}
      probe() {}
      classify() {}
      beginSql() {}
      savepointSql() {}
      positionReached() {}
      positionAfterWrite() {}
      waitForPosition() {}
    }
    const options = Object.assign(Object.create(null), { driver: new Driver(), primary: PRIMARY })
    expect(resolveConfig(options).driver).toBeInstanceOf(Driver)
  })

  describe('healthCheck', () => {
    it('false turns active checks off and keeps the default numbers', () => {
      expect(resolveConfig({ driver, primary: PRIMARY, healthCheck: false }).healthCheck).toStrictEqual({
        enabled: false,
        intervalMs: 1000,
        timeoutMs: 500,
        failureThreshold: 2,
        successThreshold: 1,
        maxBackoffMs: 10000,
        probeConnectionMaxAgeMs: 60000,
      })
    })

    it('derives timeoutMs (when not given) and maxBackoffMs from a given intervalMs', () => {
      const short = resolveConfig({ driver, primary: PRIMARY, healthCheck: { intervalMs: 300 } }).healthCheck
      expect(short).toMatchObject({ intervalMs: 300, timeoutMs: 150, maxBackoffMs: 3000 })
      const long = resolveConfig({ driver, primary: PRIMARY, healthCheck: { intervalMs: 5000 } }).healthCheck
      expect(long).toMatchObject({ intervalMs: 5000, timeoutMs: 500, maxBackoffMs: 50000 })
    })

    it('keeps explicit values', () => {
      const healthCheck = {
        intervalMs: 2000,
        timeoutMs: 1999,
        failureThreshold: 3,
        successThreshold: 2,
        maxBackoffMs: 2000,
        probeConnectionMaxAgeMs: 0,
      }
      expect(resolveConfig({ driver, primary: PRIMARY, healthCheck }).healthCheck).toStrictEqual({
        enabled: true,
        ...healthCheck,
      })
    })
  })

  it('resolves readYourWrites with defaults', () => {
    const rw = (readYourWrites: unknown) =>
      resolveConfig({ driver, primary: PRIMARY, readYourWrites }).readYourWrites
    expect(rw(undefined)).toStrictEqual({ mode: 'position', maxWaitMs: 0 }) // sessions honour tokens by default
    expect(rw(false)).toStrictEqual({ mode: 'off' })
    expect(rw({ mode: 'window' })).toStrictEqual({ mode: 'window', windowMs: 2000 })
    expect(rw({ mode: 'window', windowMs: 50 })).toStrictEqual({ mode: 'window', windowMs: 50 })
    expect(rw({ mode: 'position' })).toStrictEqual({ mode: 'position', maxWaitMs: 0 })
    expect(rw({ mode: 'position', maxWaitMs: 100 })).toStrictEqual({ mode: 'position', maxWaitMs: 100 })
  })

  it('resolves token secrets: one key, or a rotation list (the first signs)', () => {
    const keys = (tokens: unknown) => resolveConfig({ driver, primary: PRIMARY, tokens }).tokens.keys
    expect(keys(undefined)).toStrictEqual([])
    expect(keys({ secret: 'k'.repeat(16) })).toStrictEqual(['k'.repeat(16)])
    expect(keys({ secret: ['new'.repeat(6), 'old'.repeat(6)] })).toStrictEqual([
      'new'.repeat(6),
      'old'.repeat(6),
    ])
    // Redacted like passwords, should a secret ever appear in a message.
    const config = resolveConfig({ driver, primary: PRIMARY, tokens: { secret: 'k'.repeat(16) } })
    expect(config.secrets).toContain('k'.repeat(16))
  })

  it('turns every balancer spec into a factory', () => {
    for (const name of ['round-robin', 'weighted-round-robin', 'random', 'least-outstanding']) {
      expect(resolveConfig({ driver, primary: PRIMARY, balancer: name }).balancer().name).toBe(name)
    }
    const custom: Balancer = { name: 'first', pick: (c) => c[0]! }
    expect(resolveConfig({ driver, primary: PRIMARY, balancer: custom }).balancer()).toBe(custom)
    const factory = () => ({ name: 'made', pick: custom.pick })
    const made = resolveConfig({ driver, primary: PRIMARY, balancer: factory }).balancer
    expect(made().name).toBe('made')
  })

  it('collects every password, decoded and percent-encoded, without duplicates', () => {
    const config = resolveConfig({
      driver,
      primary: 'postgres://app:p%40ss%2Fword@db1/app',
      replicas: [
        'postgres://app:plain@db2/app',
        'postgres://app:plain@db3/app',
        'postgres://app@db4/app?password=q%26p',
      ],
    })
    expect(config.secrets).toEqual(['p@ss/word', 'p%40ss%2Fword', 'plain', 'q&p', 'q%26p'])
  })

  it('collects passwords given in pool options too (router, shard and node level)', () => {
    const config = resolveConfig({
      driver,
      primary: 'postgres://app@db1/app',
      replicas: [{ url: 'postgres://app@db2/app', pool: { password: 'node-pw' } }],
      pool: { password: 'router-pw', max: 3 },
    })
    expect([...config.secrets].sort()).toEqual(['node-pw', 'router-pw'])
  })

  it("passes each pool object to the driver's checkPoolOptions with its path, before any pool is made", () => {
    const seen: Array<[string, Record<string, unknown>]> = []
    const checking = {
      ...fakeDriver(),
      checkPoolOptions(pool: Readonly<Record<string, unknown>>, path: string) {
        seen.push([path, { ...pool }])
        if (pool.bad !== undefined) throw new ConfigError(`${path}.bad`, 'unknown option "bad"')
      },
    }
    resolveConfig({
      driver: checking,
      primary: { url: 'postgres://app@db1/app', pool: { a: 1 } },
      replicas: ['postgres://app@db2/app', { url: 'postgres://app@db3/app', pool: { b: 2 } }],
      pool: { max: 3 },
    })
    expect(seen).toEqual([
      ['pool', { max: 3 }],
      ['primary.pool', { a: 1 }],
      ['replicas[1].pool', { b: 2 }],
    ])
    expect(() =>
      resolveConfig({
        driver: checking,
        shards: { s1: { primary: 'postgres://app@db1/app', pool: { bad: 1 } } },
        sharding: { strategy: 'hash' },
      }),
    ).toThrow('shards.s1.pool.bad: unknown option "bad"')
  })

  it('returns a deep-frozen result', () => {
    const config = resolveConfig({
      driver,
      primary: PRIMARY,
      replicas: [{ url: R1, pool: { max: 1 } }],
      pool: { max: 2 },
      healthCheck: { intervalMs: 2000 },
      readYourWrites: { mode: 'window' },
    })
    for (const part of [
      config,
      config.clusters[0]!.primary!,
      config.clusters[0]!.primary!.pool,
      config.clusters[0]!.replicas,
      config.clusters[0]!.replicas[0],
      config.clusters[0]!.replicas[0]!.pool,
      config.healthCheck,
      config.readYourWrites,
      config.secrets,
    ]) {
      expect(Object.isFrozen(part)).toBe(true)
    }
    expect(() => {
      ;(config.clusters[0]!.primary!.pool as Record<string, unknown>).max = 99
    }).toThrow(TypeError)
  })

  it('neither mutates nor retains the caller objects', () => {
    const replica = { url: R1, pool: { max: 1 }, weight: 2 }
    const healthCheck = { intervalMs: 2000 }
    const pool = { max: 5 }
    const readYourWrites = { mode: 'window' as const, windowMs: 100 }
    const options = { driver, primary: PRIMARY, replicas: [replica], healthCheck, pool, readYourWrites }
    const before = JSON.stringify(options)
    const frozenCopy = structuredClone({ ...options, driver: undefined })
    deepFreeze(frozenCopy)
    resolveConfig({ ...frozenCopy, driver }) // a frozen input resolves: nothing is written to it

    const config = resolveConfig(options)
    expect(JSON.stringify(options)).toBe(before)
    const snapshot = JSON.stringify(config)
    replica.pool.max = 99
    replica.weight = 7
    replica.url = R2
    options.replicas.push({ url: R2, pool: { max: 1 }, weight: 1 })
    healthCheck.intervalMs = 10
    pool.max = 0
    readYourWrites.windowMs = 1
    expect(JSON.stringify(config)).toBe(snapshot)
    expect(config.clusters[0]!.primary!.pool).not.toBe(pool)
  })
})

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null) return
  Object.freeze(value)
  for (const child of Object.values(value)) deepFreeze(child)
}

type BadCase = [title: string, options: unknown, path: string, fragment: string]

const base = { driver, primary: PRIMARY }
const { probe: _probe, ...driverWithoutProbe } = driver

const badConfigs: BadCase[] = [
  // the options object
  ['null options', null, '', 'expected the router options object'],
  ['undefined options', undefined, '', 'got undefined'],
  ['a string as options', 'postgres://db/app', '', 'got "postgres://db/app"'],
  ['an array as options', [base], '', 'got an array'],
  ['a Map as options', new Map(), '', 'got a Map'],
  [
    'unknown top-level key, close',
    { ...base, replica: [R1] },
    'replica',
    'unknown option "replica" (did you mean "replicas"?); expected one of: driver, primary, replicas, nodes, url, shards, sharding, balancer',
  ],
  ['unknown top-level key, far', { ...base, zzz: {} }, 'zzz', 'unknown option "zzz"; expected one of:'],
  [
    'shards and primary together',
    { driver, primary: PRIMARY, shards: { s0: { primary: R1 } } },
    'primary',
    'not allowed with "shards"',
  ],
  ['no shard', { driver, shards: {} }, 'shards', 'at least one shard'],
  ['shards not an object', { driver, shards: [] }, 'shards', 'got an array'],
  [
    'a shard without primary',
    { driver, shards: { s0: { replicas: [R1] } } },
    'shards.s0.primary',
    'required',
  ],
  [
    'a shard with an unknown key',
    { driver, shards: { s0: { primary: PRIMARY, replica: [] } } },
    'shards.s0.replica',
    'unknown option "replica"',
  ],
  ['a bad shard name', { driver, shards: { 'a b': { primary: PRIMARY } } }, 'shards.a b', 'shard name'],
  [
    'one server in two shards',
    { driver, shards: { s0: { primary: PRIMARY }, s1: { primary: PRIMARY } } },
    'shards.s1.primary',
    'same server',
  ],
  [
    'a bad shard balancer',
    { driver, shards: { s0: { primary: PRIMARY, balancer: 'rr' } } },
    'shards.s0.balancer',
    'expected one of',
  ],
  [
    'shards without sharding',
    { driver, shards: { s0: { primary: PRIMARY } } },
    'sharding',
    'required with shards',
  ],
  [
    'sharding without shards',
    { driver, primary: PRIMARY, sharding: { strategy: 'hash' } },
    'sharding',
    'only with "shards"',
  ],
  [
    'unknown sharding strategy',
    { driver, shards: { s0: { primary: PRIMARY } }, sharding: { strategy: 'modulo' } },
    'sharding.strategy',
    "unknown sharding strategy 'modulo'",
  ],
  [
    'range without ranges',
    { driver, shards: { s0: { primary: PRIMARY } }, sharding: { strategy: 'range' } },
    'sharding.strategy',
    'needs the ranges option',
  ],
  [
    'range naming an unknown shard',
    {
      driver,
      shards: { s0: { primary: PRIMARY } },
      sharding: { strategy: 'range', ranges: [{ shard: 's9' }] },
    },
    'sharding.strategy',
    's9',
  ],
  [
    'lookup without lookup',
    { driver, shards: { s0: { primary: PRIMARY } }, sharding: { strategy: 'lookup' } },
    'sharding.strategy',
    'needs the lookup option',
  ],
  [
    'unknown defaultShard',
    { driver, shards: { s0: { primary: PRIMARY } }, sharding: { strategy: 'hash', defaultShard: 's9' } },
    'sharding.defaultShard',
    'expected one of the shard names (s0)',
  ],
  [
    'unknown sharding key',
    { driver, shards: { s0: { primary: PRIMARY } }, sharding: { strategy: 'hash', default: 's0' } },
    'sharding.default',
    'unknown option "default"',
  ],
  [
    'classify not boolean',
    { driver, primary: PRIMARY, classify: 'yes' },
    'classify',
    'expected true, false or { writeFunctions',
  ],
  [
    'classify bad writeFunctions',
    { driver, primary: PRIMARY, classify: { writeFunctions: [42] } },
    'classify.writeFunctions[0]',
    'expected a function name',
  ],
  ['nodes with primary', { driver, primary: PRIMARY, nodes: [R1] }, 'primary', 'not allowed with "nodes"'],
  ['empty nodes', { driver, nodes: [] }, 'nodes', 'non-empty array'],
  ['nodes not an array', { driver, nodes: R1 }, 'nodes', 'non-empty array'],
  ['a bad node in nodes', { driver, nodes: [R1, 'http://x/y'] }, 'nodes[1]', 'expected a postgres:// URL'],
  [
    'nodes with healthCheck: false (no probes, so no primary would ever be found)',
    { driver, nodes: [PRIMARY, R1], healthCheck: false },
    'healthCheck',
    'false is not allowed with "nodes": roles are discovered by the probes',
  ],
  [
    "a shard's nodes with healthCheck: false",
    {
      driver,
      shards: { s0: { primary: PRIMARY }, s1: { nodes: [R1, R2] } },
      sharding: { strategy: 'hash' },
      healthCheck: false,
    },
    'healthCheck',
    'false is not allowed with "shards.s1.nodes"',
  ],
  ['unknown key, case typo', { ...base, healthcheck: false }, 'healthcheck', 'did you mean "healthCheck"?'],
  [
    'unknown key that is not an identifier',
    { ...base, 'foo bar': 1 },
    '["foo bar"]',
    'unknown option "foo bar"',
  ],
  // driver
  [
    'missing driver',
    { primary: PRIMARY },
    'driver',
    "required; pass pgDriver() from 'routemate/pg' or mysql2Driver() from 'routemate/mysql2'",
  ],
  ['driver factory not called', { ...base, driver: fakeDriver }, 'driver', 'got a function (call it'],
  ['driver a string', { ...base, driver: 'pg' }, 'driver', 'expected a Driver object'],
  [
    'driver of unknown dialect',
    { ...base, driver: { ...driver, dialect: 'oracle' } },
    'driver.dialect',
    'expected "postgres" or "mysql", got "oracle"',
  ],
  [
    'driver without a name',
    { ...base, driver: { ...driver, name: '' } },
    'driver.name',
    'expected a non-empty string, got ""',
  ],
  [
    'driver without probe',
    { ...base, driver: driverWithoutProbe },
    'driver.probe',
    'expected a function, got undefined',
  ],
  // The members the router calls later (transactions, read-your-writes) are checked at startup too.
  ...(['savepointSql', 'positionReached', 'positionAfterWrite', 'waitForPosition'] as const).map(
    (fn): BadCase => [
      `driver without ${fn}`,
      { ...base, driver: { ...driver, [fn]: undefined } },
      `driver.${fn}`,
      'expected a function, got undefined',
    ],
  ),
  // primary
  [
    'missing primary',
    { driver },
    'primary',
    'required; expected a postgres:// URL (or postgresql://) or a node object',
  ],
  ['primary null', { driver, primary: null }, 'primary', 'got null'],
  ['primary a number', { driver, primary: 5432 }, 'primary', 'got 5432'],
  ['primary an array', { driver, primary: [PRIMARY] }, 'primary', 'got an array'],
  [
    'malformed URL',
    { driver, primary: 'not a url' },
    'primary',
    'expected a postgres:// URL (or postgresql://), got "not a url"',
  ],
  [
    'port out of range',
    { driver, primary: 'postgres://db:99999/app' },
    'primary',
    'bad port "99999" in "postgres://db:99999/app": expected a number from 0 to 65535',
  ],
  [
    'wrong protocol',
    { driver, primary: 'mysql://db1/app' },
    'primary',
    'got "mysql://db1/app" (the driver speaks postgres, not mysql)',
  ],
  ['http URL', { driver, primary: 'http://db1/app' }, 'primary', 'expected a postgres:// URL'],
  [
    'postgres URL for mysql',
    { driver: fakeDriver('mysql'), primary: PRIMARY },
    'primary',
    'expected a mysql:// URL (or mariadb://)',
  ],
  [
    'URL without a host',
    { driver, primary: 'postgres:///app' },
    'primary',
    'expected a postgres:// URL (or postgresql://) with a host',
  ],
  [
    'node object without url',
    { driver, primary: { name: 'main' } },
    'primary.url',
    'required; expected a postgres:// URL',
  ],
  [
    'node object with bad url',
    { driver, primary: { url: 'mysql://db1/app' } },
    'primary.url',
    'expected a postgres:// URL',
  ],
  ['node url a number', { driver, primary: { url: 1 } }, 'primary.url', 'got 1'],
  // replicas
  [
    'replicas an object',
    { ...base, replicas: { r1: R1 } },
    'replicas',
    'expected an array of URLs or node objects, got an object',
  ],
  ['replicas a single string', { ...base, replicas: R1 }, 'replicas', `got "${R1}"`],
  ['replica null', { ...base, replicas: [null] }, 'replicas[0]', 'got null'],
  ['replica an array', { ...base, replicas: [[R1]] }, 'replicas[0]', 'got an array'],
  [
    'replica bad URL string',
    { ...base, replicas: [R1, 'db2:5432'] },
    'replicas[1]',
    'expected a postgres:// URL',
  ],
  [
    'replica bad url',
    { ...base, replicas: [R1, { url: 'postgres://' }] },
    'replicas[1].url',
    'got "postgres://"',
  ],
  [
    'unknown key in replicas[0]',
    { ...base, replicas: [{ url: R1, wieght: 2 }] },
    'replicas[0].wieght',
    'unknown option "wieght" (did you mean "weight"?); expected one of: name, url, weight, pool, queryTimeoutMs, connectTimeoutMs',
  ],
  // names
  [
    'duplicate explicit names',
    {
      ...base,
      replicas: [
        { url: R1, name: 'r1' },
        { url: R2, name: 'r1' },
      ],
    },
    'replicas[1].name',
    'duplicate name "r1", already used by replicas[0].name',
  ],
  [
    'explicit name = an earlier default name',
    { ...base, replicas: [R1, { url: R2, name: 'replica1' }] },
    'replicas[1].name',
    'duplicate name "replica1", already the default name of replicas[0]',
  ],
  [
    'explicit name = a later default name',
    { ...base, replicas: [{ url: R1, name: 'replica2' }, R2] },
    'replicas[0].name',
    'duplicate name "replica2": it is also the default name of replicas[1]',
  ],
  [
    'replica named primary',
    { ...base, replicas: [{ url: R1, name: 'primary' }] },
    'replicas[0].name',
    'already the default name of primary',
  ],
  [
    'name with a space',
    { ...base, replicas: [{ url: R1, name: 'my node' }] },
    'replicas[0].name',
    'expected a name of 1 to 64 characters from [A-Za-z0-9_.:-], got "my node"',
  ],
  ['empty name', { driver, primary: { url: PRIMARY, name: '' } }, 'primary.name', 'got ""'],
  [
    'name too long',
    { driver, primary: { url: PRIMARY, name: 'n'.repeat(65) } },
    'primary.name',
    'expected a name of 1 to 64 characters',
  ],
  ['name a number', { driver, primary: { url: PRIMARY, name: 1 } }, 'primary.name', 'got 1'],
  // duplicate servers
  [
    'replica = primary',
    { ...base, replicas: [PRIMARY] },
    'replicas[0]',
    'same server as primary (10.0.0.1:5432/app)',
  ],
  [
    'same server, other spelling',
    { driver, primary: 'postgres://a@DB1/app', replicas: [{ url: 'postgresql://b:pw@db1:5432/app' }] },
    'replicas[0].url',
    'same server as primary (db1:5432/app)',
  ],
  [
    'two replicas on one server',
    { ...base, replicas: [R1, R2, `${R1}?sslmode=require`] },
    'replicas[2]',
    'same server as replicas[0]',
  ],
  // numbers
  [
    'negative weight',
    { ...base, replicas: [R1, { url: R2, weight: -1 }] },
    'replicas[1].weight',
    'expected a number >= 0, got -1',
  ],
  [
    'string weight',
    { ...base, replicas: [{ url: R1, weight: '2' }] },
    'replicas[0].weight',
    'expected a number >= 0, got "2"',
  ],
  ['NaN weight', { ...base, replicas: [{ url: R1, weight: Number.NaN }] }, 'replicas[0].weight', 'got NaN'],
  [
    'Infinity weight',
    { ...base, replicas: [{ url: R1, weight: Number.POSITIVE_INFINITY }] },
    'replicas[0].weight',
    'got Infinity',
  ],
  ['null weight', { ...base, replicas: [{ url: R1, weight: null }] }, 'replicas[0].weight', 'got null'],
  [
    'negative queryTimeoutMs',
    { ...base, queryTimeoutMs: -1 },
    'queryTimeoutMs',
    'expected an integer >= 0, got -1',
  ],
  [
    'connectTimeoutMs 0',
    { ...base, connectTimeoutMs: 0 },
    'connectTimeoutMs',
    'expected an integer > 0, got 0',
  ],
  [
    'fractional node connectTimeoutMs',
    { driver, primary: { url: PRIMARY, connectTimeoutMs: 1.5 } },
    'primary.connectTimeoutMs',
    'expected an integer > 0, got 1.5',
  ],
  [
    'queryTimeoutMs past the timer limit',
    { ...base, queryTimeoutMs: 2 ** 31 },
    'queryTimeoutMs',
    'expected an integer <= 2147483647 (the largest timer delay), got 2147483648',
  ],
  [
    'negative maxReplicationLagMs',
    { ...base, maxReplicationLagMs: -5 },
    'maxReplicationLagMs',
    'expected a number >= 0, got -5',
  ],
  [
    'string maxReplicationLagMs',
    { ...base, maxReplicationLagMs: '5000' },
    'maxReplicationLagMs',
    'got "5000"',
  ],
  // pools
  [
    'pool an array',
    { ...base, pool: [] },
    'pool',
    'expected a plain object of driver pool options, e.g. { max: 10 }, got an array',
  ],
  ['node pool null', { ...base, replicas: [{ url: R1, pool: null }] }, 'replicas[0].pool', 'got null'],
  // balancer
  [
    'unknown balancer name',
    { ...base, balancer: 'round_robin' },
    'balancer',
    'expected one of "round-robin", "weighted-round-robin", "random", "least-outstanding", a Balancer object or a factory function, got "round_robin" (did you mean "round-robin"?)',
  ],
  [
    'balancer object without pick',
    { ...base, balancer: { name: 'x' } },
    'balancer',
    'got an object without a pick() function',
  ],
  ['balancer a number', { ...base, balancer: 1 }, 'balancer', 'factory function, got 1'],
  // healthCheck
  [
    'healthCheck true',
    { ...base, healthCheck: true },
    'healthCheck',
    'expected an object { intervalMs?, timeoutMs?, ... } or false to turn active checks off, got true',
  ],
  ['healthCheck an array', { ...base, healthCheck: [] }, 'healthCheck', 'got an array'],
  [
    'timeout >= interval',
    { ...base, healthCheck: { intervalMs: 1000, timeoutMs: 1500 } },
    'healthCheck.timeoutMs',
    'expected an integer below healthCheck.intervalMs (1000), got 1500',
  ],
  [
    'timeout >= default interval',
    { ...base, healthCheck: { timeoutMs: 1000 } },
    'healthCheck.timeoutMs',
    'below healthCheck.intervalMs (1000, the default), got 1000',
  ],
  [
    'timeout 0',
    { ...base, healthCheck: { timeoutMs: 0 } },
    'healthCheck.timeoutMs',
    'expected an integer > 0, got 0',
  ],
  [
    'interval a string',
    { ...base, healthCheck: { intervalMs: '1000' } },
    'healthCheck.intervalMs',
    'got "1000"',
  ],
  [
    'interval 1 (no room for a timeout)',
    { ...base, healthCheck: { intervalMs: 1 } },
    'healthCheck.intervalMs',
    'expected an integer >= 2, got 1',
  ],
  [
    'failureThreshold 0',
    { ...base, healthCheck: { failureThreshold: 0 } },
    'healthCheck.failureThreshold',
    'expected an integer >= 1, got 0',
  ],
  [
    'successThreshold 1.5',
    { ...base, healthCheck: { successThreshold: 1.5 } },
    'healthCheck.successThreshold',
    'got 1.5',
  ],
  [
    'maxBackoffMs below interval',
    { ...base, healthCheck: { maxBackoffMs: 500 } },
    'healthCheck.maxBackoffMs',
    'expected an integer >= healthCheck.intervalMs (1000, the default), got 500',
  ],
  [
    'probeConnectionMaxAgeMs negative',
    { ...base, healthCheck: { probeConnectionMaxAgeMs: -1 } },
    'healthCheck.probeConnectionMaxAgeMs',
    'expected an integer >= 0, got -1',
  ],
  [
    'probeConnectionMaxAgeMs a string',
    { ...base, healthCheck: { probeConnectionMaxAgeMs: '60s' } },
    'healthCheck.probeConnectionMaxAgeMs',
    'got "60s"',
  ],
  [
    'unknown key in healthCheck',
    { ...base, healthCheck: { interval: 1000 } },
    'healthCheck.interval',
    'unknown option "interval" (did you mean "intervalMs"?); expected one of: intervalMs, timeoutMs',
  ],
  // booleans
  [
    'fallbackToPrimary a string',
    { ...base, fallbackToPrimary: 'false' },
    'fallbackToPrimary',
    'expected true or false, got "false"',
  ],
  ['retryReads 1', { ...base, retryReads: 1 }, 'retryReads', 'expected true or false, got 1'],
  ['retryReads null', { ...base, retryReads: null }, 'retryReads', 'got null'],
  // readYourWrites
  [
    'readYourWrites true',
    { ...base, readYourWrites: true },
    'readYourWrites',
    'expected false, { mode: "window", windowMs? } or { mode: "position", maxWaitMs? }, got true',
  ],
  [
    'readYourWrites without mode',
    { ...base, readYourWrites: {} },
    'readYourWrites.mode',
    'required; expected "window" or "position"',
  ],
  [
    'readYourWrites unknown mode',
    { ...base, readYourWrites: { mode: 'session' } },
    'readYourWrites.mode',
    'expected "window" or "position", got "session"',
  ],
  [
    'readYourWrites mode typo',
    { ...base, readYourWrites: { mode: 'windows' } },
    'readYourWrites.mode',
    '(did you mean "window"?)',
  ],
  [
    'readYourWrites key of the other mode',
    { ...base, readYourWrites: { mode: 'window', maxWaitMs: 5 } },
    'readYourWrites.maxWaitMs',
    'unknown option "maxWaitMs"; expected one of: mode, windowMs',
  ],
  [
    'readYourWrites windowMs 0',
    { ...base, readYourWrites: { mode: 'window', windowMs: 0 } },
    'readYourWrites.windowMs',
    'expected an integer > 0, got 0',
  ],
  [
    'readYourWrites maxWaitMs -1',
    { ...base, readYourWrites: { mode: 'position', maxWaitMs: -1 } },
    'readYourWrites.maxWaitMs',
    'expected an integer >= 0, got -1',
  ],
  // tokens
  ['tokens not an object', { ...base, tokens: 'secret' }, 'tokens', 'expected an object { secret }'],
  ['tokens without secret', { ...base, tokens: {} }, 'tokens.secret', 'required'],
  [
    'tokens unknown key',
    { ...base, tokens: { secrets: 'x'.repeat(20) } },
    'tokens.secrets',
    'did you mean "secret"',
  ],
  [
    'tokens.secret too short',
    { ...base, tokens: { secret: 'short' } },
    'tokens.secret',
    'expected a string of at least 16 characters, got a string of 5 characters',
  ],
  ['tokens.secret empty list', { ...base, tokens: { secret: [] } }, 'tokens.secret', 'got an empty list'],
  [
    'tokens.secret list with a bad key',
    { ...base, tokens: { secret: ['k'.repeat(16), 42] } },
    'tokens.secret[1]',
    'got a number',
  ],
]

describe('resolveConfig: invalid options', () => {
  it.each(badConfigs)('%s', (_title, options, path, fragment) => {
    const err = configError(() => resolveConfig(options))
    expect(err.path).toBe(path)
    expect(err.code).toBe('ROUTEMATE_CONFIG')
    expect(err.message).toContain(fragment)
    expect(err.message.startsWith(path ? `${path}: ` : 'expected')).toBe(true)
  })

  it.each([
    ['wrong protocol', { driver, primary: 'mysql://app:s3cr3t-pw@db1/app' }],
    ['bad port', { driver, primary: { url: 'postgres://app:s3cr3t-pw@db1:notaport/app' } }],
    ['no host', { driver, primary: 'postgres://app:s3cr3t-pw@/app' }],
    ['"/" in the password', { driver, primary: 'postgres://app:s3cr3t-pw/x@db1:99999/app' }],
    ['"@" in the password', { driver, primary: 'mysql://app:s3cr3t-pw@x@db1/app' }],
    ['space in the password', { driver, primary: 'mysql://app:s3cr3t-pw x@db1/app' }],
    ['password parameter', { driver, primary: 'mysql://app@db1/app?password=s3cr3t-pw' }],
    [
      'duplicate server',
      { driver, primary: 'postgres://app:s3cr3t-pw@db1/app', replicas: ['postgres://app:s3cr3t-pw@db1/app'] },
    ],
    ['a password as options', 'postgres://app:s3cr3t-pw@db1/app'],
    [
      'a password as a weight',
      { ...base, replicas: [{ url: R1, weight: 'postgres://app:s3cr3t-pw@db1/app' }] },
    ],
  ])('never puts a password in a message (%s)', (_title, options) => {
    const err = configError(() => resolveConfig(options))
    expect(err.message).not.toContain('s3cr3t')
  })

  it('never puts a token secret in a message', () => {
    for (const secret of ['s3cr3t-pw', ['s3cr3t-pw-but-long-enough', 's3cr3t-pw']]) {
      const err = configError(() => resolveConfig({ ...base, tokens: { secret } }))
      expect(err.path).toMatch(/^tokens\.secret/)
      expect(err.message).not.toContain('s3cr3t')
    }
  })

  it('redacts the password but keeps the rest of the URL', () => {
    const err = configError(() => resolveConfig({ driver, primary: 'mysql://app:s3cr3t-pw@db1:3306/app' }))
    expect(err.message).toContain('got "mysql://app:***@db1:3306/app"')
  })

  it('reports the first problem in option order', () => {
    const err = configError(() =>
      resolveConfig({ driver, primary: 'bad', replicas: 'bad', retryReads: 'bad' }),
    )
    expect(err.path).toBe('primary')
  })
})

describe('didYouMean', () => {
  it('suggests only close matches', () => {
    expect(didYouMean('replica', ['primary', 'replicas'])).toBe('replicas')
    expect(didYouMean('HEALTHCHECK', ['healthCheck'])).toBe('healthCheck')
    expect(didYouMean('shards', ['primary', 'replicas', 'pool'])).toBeUndefined()
    expect(didYouMean('ab', ['pool'])).toBeUndefined()
  })

  it('computes the Levenshtein distance', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3)
    expect(editDistance('', 'abc')).toBe(3)
    expect(editDistance('same', 'same')).toBe(0)
  })
})
