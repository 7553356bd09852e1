import { describe, expect, it } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import { resolveConfig } from './config.js'
import { configDriver } from './config-driver.test-kit.js'
import type { Scope } from './scope.js'
import { poolDefaultScope } from './target-session-attrs.js'

const pg = configDriver('postgres')
const my = configDriver('mysql')
const URL_3 = 'postgres://app:p%40ss@db3:5433,DB1,[::1]/app?sslmode=require&target_session_attrs=read-only'

function configError(fn: () => unknown): ConfigError {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return err as ConfigError
  }
  throw new Error('expected a ConfigError, nothing was thrown')
}

describe('resolveConfig: url', () => {
  it('makes one discovered node per host, named host:port, with the router-level settings', () => {
    const config = resolveConfig({
      driver: pg,
      url: URL_3,
      pool: { max: 3 },
      queryTimeoutMs: 250,
      connectTimeoutMs: 900,
    })
    const [cluster] = config.clusters
    expect(cluster?.discovery).toBe(true)
    expect(cluster?.primary).toBeUndefined()
    expect(cluster?.replicas).toEqual([
      {
        name: 'db3:5433',
        url: 'postgres://app:p%40ss@db3:5433/app?sslmode=require',
        role: 'replica',
        weight: 1,
        pool: { max: 3 },
        queryTimeoutMs: 250,
        connectTimeoutMs: 900,
      },
      expect.objectContaining({
        name: 'db1:5432',
        url: 'postgres://app:p%40ss@db1:5432/app?sslmode=require',
      }),
      expect.objectContaining({
        name: '[::1]:5432',
        url: 'postgres://app:p%40ss@[::1]:5432/app?sslmode=require',
      }),
    ])
    expect(config.targetSessionAttrs).toBe('read-only')
    expect(config.secrets).toEqual(expect.arrayContaining(['p@ss', 'p%40ss']))
    expect(Object.isFrozen(cluster?.replicas[0])).toBe(true)
  })

  it('without target_session_attrs the pool has no default scope', () => {
    expect(resolveConfig({ driver: pg, url: 'postgres://db1,db2/app' }).targetSessionAttrs).toBeUndefined()
  })

  it('mysql:// and mariadb:// alike', () => {
    const config = resolveConfig({
      driver: my,
      url: 'mariadb://app@m1,m2:3307/shop?target_session_attrs=standby',
    })
    expect(config.clusters[0]?.replicas.map((n) => [n.name, n.url])).toEqual([
      ['m1:3306', 'mariadb://app@m1:3306/shop'],
      ['m2:3307', 'mariadb://app@m2:3307/shop'],
    ])
    expect(config.targetSessionAttrs).toBe('standby')
  })

  it.each([
    ['primary', { primary: 'postgres://db9/app' }, 'primary', 'not allowed with "url"'],
    ['replicas', { replicas: ['postgres://db9/app'] }, 'replicas', 'not allowed with "url"'],
    ['nodes', { nodes: ['postgres://db9/app'] }, 'nodes', 'not allowed with "url"'],
    [
      'shards',
      { shards: { s0: { primary: 'postgres://db9/app' } }, sharding: { strategy: 'hash' } },
      'url',
      'not allowed with "shards"',
    ],
    [
      'healthCheck: false',
      { healthCheck: false },
      'healthCheck',
      'false is not allowed with "url": roles are discovered',
    ],
    ['a bad URL', { url: 'postgres://db1,,db2/app' }, 'url', 'host 2 of 3 is empty'],
    ['the other dialect', { url: 'mysql://app:hunter22@m1,m2/app' }, 'url', '"mysql://app:***@m1,m2/app"'],
    ['a non-string', { url: ['postgres://db1/app'] }, 'url', 'got an array'],
    [
      'an unknown pool option, still checked',
      {
        pool: { nope: 1 },
        driver: {
          ...pg,
          checkPoolOptions: () => {
            throw new ConfigError('pool.nope', 'unknown option "nope"')
          },
        },
      },
      'pool.nope',
      'unknown option',
    ],
  ])('url with %s: ConfigError', (_title, extra, path, message) => {
    const err = configError(() =>
      resolveConfig({ driver: pg, url: 'postgres://app:hunter22@db1,db2/app', ...extra }),
    )
    expect(err.path).toBe(path)
    expect(err.message).toContain(message)
    expect(err.message).not.toContain('hunter22')
  })
})

describe('poolDefaultScope (target_session_attrs)', () => {
  const session = { positions: new Map() } as unknown as Scope['session']
  const shard = {} as Scope['cluster']
  const write: Scope = { mode: 'write', tx: undefined, cluster: shard, session }
  const read: Scope = { mode: 'read', tx: undefined, cluster: undefined, session: undefined }
  const primary: Scope = { mode: 'primary', tx: undefined, cluster: undefined, session: undefined }
  const tx: Scope = { mode: 'write', tx: {} as Scope['tx'], cluster: undefined, session: undefined }

  it('any, read-write, primary and none: no default scope (unscoped statements go to the primary)', () => {
    for (const v of ['any', 'read-write', 'primary', undefined] as const)
      expect(poolDefaultScope(v)).toBeUndefined()
  })

  it.each([
    ['read-only', undefined],
    ['prefer-standby', true],
    ['standby', false],
  ] as const)('%s: unscoped statements read (fallback %s); explicit scopes win', (attrs, fallback) => {
    const scope = poolDefaultScope(attrs)
    expect(scope?.(undefined)).toEqual({
      mode: 'read',
      tx: undefined,
      cluster: undefined,
      session: undefined,
      fallback,
    })
    expect(scope?.(undefined)).toBe(scope?.(undefined)) // one frozen object, no allocation per statement
    // A session or shard scope alone routes nothing: the default applies, shard and session kept.
    expect(scope?.(write)).toEqual({ mode: 'read', tx: undefined, cluster: shard, session, fallback })
    expect(scope?.(read)).toBeUndefined()
    expect(scope?.(primary)).toBeUndefined()
    expect(scope?.(tx)).toBeUndefined()
  })
})
