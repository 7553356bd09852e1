// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts with ${ENV} references
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import { Router } from '../router/router.js'
import { BAD_FILES, SECRET } from './bad-config-files.case.js'
import { ConfigFileError, createRouterFromConfig, loadConfig, loadConfigFile } from './index.js'

const root = mkdtempSync(join(tmpdir(), 'routemate-config-'))
let n = 0
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** A fresh directory holding the given files. */
function dirWith(files: Record<string, string>): string {
  const dir = join(root, String(n++))
  mkdirSync(dir)
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return dir
}

async function failure(promise: Promise<unknown>): Promise<ConfigError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!(err instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(err)}`)
  return err
}

describe('loadConfig: bad files', () => {
  it('has at least 20 cases', () => {
    expect(BAD_FILES.length).toBeGreaterThanOrEqual(20)
  })

  it.each(BAD_FILES.map((c) => [c.title, c] as const))('%s', async (_title, c) => {
    const cwd = dirWith({ [c.name]: c.text })
    const err = await failure(loadConfig(undefined, { env: c.env ?? {}, cwd }))
    expect(err).toBeInstanceOf(ConfigFileError)
    expect(err.code).toBe('ROUTEMATE_CONFIG')
    expect(err.message).toBe(c.message)
    expect(err.message.startsWith(c.name)).toBe(true)
    const everything = `${err.message}\n${err.stack}\n${JSON.stringify(err)}\n${String((err as ConfigFileError).reason)}`
    expect(everything).not.toContain(SECRET)
    for (const value of Object.values(c.env ?? {})) expect(everything).not.toContain(value)
    const fileError = err as ConfigFileError
    expect(fileError.file).toBe(join(cwd, c.name))
    if (fileError.line !== undefined) expect(c.message).toContain(`:${fileError.line}:${fileError.column} `)
  })

  it('names the path and the line of an error in a sharded file', async () => {
    const cwd = dirWith({
      'routemate.config.yaml': [
        'driver: pg',
        'shards:',
        '  eu.1:',
        `    primary: postgres://app:${SECRET}@eu1/app`,
        '    replicas:',
        `      - url: postgres://app:${SECRET}@eu2/app`,
        '        weight: -1',
        'sharding: { strategy: hash }',
      ].join('\n'),
    })
    const err = (await failure(loadConfig(undefined, { env: {}, cwd }))) as ConfigFileError
    expect(err.message).toBe(
      'routemate.config.yaml:7:17 shards.eu.1.replicas[0].weight: expected a number >= 0, got -1',
    )
    expect([err.path, err.line, err.column, err.reason]).toEqual([
      'shards.eu.1.replicas[0].weight',
      7,
      17,
      'expected a number >= 0, got -1',
    ])
  })

  it('lists what it tried when no file is found', async () => {
    const cwd = dirWith({})
    const err = await failure(loadConfig(undefined, { env: {}, cwd }))
    expect(err.message).toBe(
      `no config file found in ${cwd}: tried ./routemate.config.yaml, ./routemate.config.yml, ./routemate.config.json; pass a path or set ROUTEMATE_CONFIG`,
    )
  })

  it('names ROUTEMATE_CONFIG when the file it names is missing', async () => {
    const cwd = dirWith({})
    const err = await failure(loadConfig(undefined, { env: { ROUTEMATE_CONFIG: 'deploy/db.yaml' }, cwd }))
    expect(err.message).toBe('config file not found: deploy/db.yaml (from ROUTEMATE_CONFIG)')
  })

  it('rejects an unknown extension', async () => {
    const cwd = dirWith({ 'routemate.toml': 'driver = "pg"' })
    const err = await failure(loadConfig('routemate.toml', { env: {}, cwd }))
    expect(err.message).toBe('routemate.toml: expected a .yaml, .yml or .json file, got ".toml"')
  })
})

describe('loadConfig: good files', () => {
  const yaml = [
    '# the primary takes writes',
    'driver: pg',
    'primary:',
    '  name: main',
    '  url: postgres://app:${DB_PASSWORD}@${DB_HOST:-db1}:5432/app',
    'replicas:',
    '  - postgres://app:${DB_PASSWORD}@db2:5432/app',
    '  - { name: r2, url: "postgres://app:${DB_PASSWORD}@db3:5432/app", weight: 2 }',
    'balancer: weighted-round-robin',
    'healthCheck: { intervalMs: 300, timeoutMs: 200 }',
    'maxReplicationLagMs: ${MAX_LAG:-2500}',
    'fallbackToPrimary: ${FALLBACK:-false}',
    'readYourWrites: { mode: window, windowMs: 1000 }',
    'pool: { max: 4, application_name: "$${not-a-reference} costs $5" }',
  ].join('\n')

  it('reads YAML with interpolation, defaults, typed whole references and escapes', async () => {
    const cwd = dirWith({ 'routemate.config.yaml': yaml })
    const loaded = await loadConfigFile(undefined, { env: { DB_PASSWORD: SECRET, MAX_LAG: '' }, cwd })
    const { driver, ...rest } = loaded.options
    expect(driver.dialect).toBe('postgres')
    expect(rest).toEqual({
      primary: { name: 'main', url: `postgres://app:${SECRET}@db1:5432/app` },
      replicas: [
        `postgres://app:${SECRET}@db2:5432/app`,
        { name: 'r2', url: `postgres://app:${SECRET}@db3:5432/app`, weight: 2 },
      ],
      balancer: 'weighted-round-robin',
      healthCheck: { intervalMs: 300, timeoutMs: 200 },
      maxReplicationLagMs: 2500,
      fallbackToPrimary: false,
      readYourWrites: { mode: 'window', windowMs: 1000 },
      pool: { max: 4, application_name: '${not-a-reference} costs $5' },
    })
    expect(loaded.driverName).toBe('pg')
    expect(loaded.file.displayName).toBe('routemate.config.yaml')
    expect(loaded.resolved.clusters[0]?.replicas.map((r) => r.name)).toEqual(['replica1', 'r2'])
    expect(loaded.secrets).toContain(SECRET)
  })

  it('reads the same options from JSON', async () => {
    const cwd = dirWith({
      'routemate.config.json': JSON.stringify({
        driver: 'pg',
        primary: { name: 'main', url: 'postgres://app:${DB_PASSWORD}@${DB_HOST:-db1}:5432/app' },
        replicas: ['postgres://app:${DB_PASSWORD}@db2:5432/app'],
        maxReplicationLagMs: 2500,
        pool: { application_name: '$${x}' },
      }),
    })
    const { driver, ...rest } = await loadConfig(undefined, {
      env: { DB_PASSWORD: SECRET, DB_HOST: 'h1' },
      cwd,
    })
    expect(driver.dialect).toBe('postgres')
    expect(rest).toEqual({
      primary: { name: 'main', url: `postgres://app:${SECRET}@h1:5432/app` },
      replicas: [`postgres://app:${SECRET}@db2:5432/app`],
      maxReplicationLagMs: 2500,
      pool: { application_name: '${x}' },
    })
  })

  it('quoted whole references stay strings (and are then checked as such)', async () => {
    const cwd = dirWith({
      'routemate.config.yaml': 'driver: pg\nprimary: postgres://app@db1/app\nmaxReplicationLagMs: "${LAG}"\n',
    })
    const err = await failure(loadConfig(undefined, { env: { LAG: '10' }, cwd }))
    expect(err.message).toBe(
      'routemate.config.yaml:3:22 maxReplicationLagMs: expected a number >= 0, got "10"',
    )
  })

  it('names mysql2 and reads YAML anchors', async () => {
    const cwd = dirWith({
      'routemate.config.yml': [
        'driver: mysql2',
        'pool: &pool { connectionLimit: 5 }',
        'primary: { url: "mysql://app:pw@db1:3306/app", pool: *pool }',
        'replicas: ["mariadb://app:pw@db2:3306/app"]',
      ].join('\n'),
    })
    const loaded = await loadConfigFile(undefined, { env: {}, cwd })
    expect(loaded.resolved.driver.dialect).toBe('mysql')
    expect(loaded.resolved.clusters[0]?.primary?.pool).toEqual({ connectionLimit: 5 })
  })

  it('reads a multi-host url (roles discovered, target_session_attrs kept), its password a secret', async () => {
    const cwd = dirWith({
      'routemate.config.yaml': [
        'driver: pg',
        'url: postgres://app:${DB_PASSWORD}@db1:5432,db2,[::1]:5433/app?target_session_attrs=prefer-standby',
        'pool: { max: 4 }',
      ].join('\n'),
    })
    const loaded = await loadConfigFile(undefined, { env: { DB_PASSWORD: SECRET }, cwd })
    const [cluster] = loaded.resolved.clusters
    expect(cluster?.discovery).toBe(true)
    expect(cluster?.replicas.map((n) => [n.name, n.pool])).toEqual([
      ['db1:5432', { max: 4 }],
      ['db2:5432', { max: 4 }],
      ['[::1]:5433', { max: 4 }],
    ])
    expect(loaded.resolved.targetSessionAttrs).toBe('prefer-standby')
    expect(loaded.secrets).toContain(SECRET)
  })

  it('keeps big integers of range bounds exact', async () => {
    const cwd = dirWith({
      'routemate.config.yaml': [
        'driver: pg',
        'shards:',
        '  s0: { primary: "postgres://app@h0/app" }',
        '  s1: { primary: "postgres://app@h1/app" }',
        'sharding:',
        '  strategy: range',
        '  ranges:',
        '    - { shard: s0, to: 9007199254740993 }',
        '    - { shard: s1, from: 9007199254740993 }',
      ].join('\n'),
    })
    const loaded = await loadConfigFile(undefined, { env: {}, cwd })
    const sharding = loaded.options.sharding as unknown as { ranges: Array<{ to?: unknown }> }
    expect(sharding.ranges[0]?.to).toBe(9007199254740993n)
    expect(loaded.resolved.sharding?.resolver.resolve(9007199254740992n, ['s0', 's1'])).toBe('s0')
    expect(loaded.resolved.sharding?.resolver.resolve(9007199254740993n, ['s0', 's1'])).toBe('s1')
  })

  it('prefers .yaml, then .yml, then .json in the working directory', async () => {
    const good = (host: string) => `{"driver": "pg", "primary": "postgres://app@${host}/app"}`
    const all = dirWith({
      'routemate.config.json': good('json'),
      'routemate.config.yml': good('yml'),
      'routemate.config.yaml': good('yaml'),
    })
    expect((await loadConfig(undefined, { env: {}, cwd: all })).primary).toBe('postgres://app@yaml/app')
    const two = dirWith({ 'routemate.config.json': good('json'), 'routemate.config.yml': good('yml') })
    expect((await loadConfig(undefined, { env: {}, cwd: two })).primary).toBe('postgres://app@yml/app')
  })

  it('reads the file named by ROUTEMATE_CONFIG; an explicit path wins over it', async () => {
    const cwd = dirWith({
      'a.json': '{"driver": "pg", "primary": "postgres://app@a/app"}',
      'b.yaml': 'driver: pg\nprimary: postgres://app@b/app\n',
    })
    const env = { ROUTEMATE_CONFIG: 'a.json' }
    expect((await loadConfig(undefined, { env, cwd })).primary).toBe('postgres://app@a/app')
    expect((await loadConfig('b.yaml', { env, cwd })).primary).toBe('postgres://app@b/app')
    expect((await loadConfig(join(cwd, 'b.yaml'), { env: {}, cwd: root })).primary).toBe(
      'postgres://app@b/app',
    )
  })

  it('createRouterFromConfig makes a router', async () => {
    const cwd = dirWith({
      'routemate.config.yaml': 'driver: pg\nprimary: postgres://app@127.0.0.1:1/app\nhealthCheck: false\n',
    })
    const router = await createRouterFromConfig(undefined, { env: {}, cwd })
    try {
      expect(router).toBeInstanceOf(Router)
      expect(router.stats().nodes.map((node) => node.name)).toEqual(['primary'])
    } finally {
      await router.close()
    }
  })
})
