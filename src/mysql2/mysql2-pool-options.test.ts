import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import { createRouter } from '../router/router.js'
import { mysql2Driver } from './mysql2-driver.js'
import { checkMysql2PoolOptions, knownMysql2PoolOptions, MYSQL2_POOL_OPTIONS } from './mysql2-pool-options.js'

const known = knownMysql2PoolOptions([])
const at = (key: string) => `replicas[0].pool.${key}`

function errorOf(fn: () => void): ConfigError {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return err as ConfigError
  }
  throw new Error('expected a ConfigError')
}

describe('checkMysql2PoolOptions', () => {
  it("knows every option of the installed mysql2's validOptions (but the internal pool and isServer)", () => {
    const file = join(
      dirname(createRequire(import.meta.url).resolve('mysql2')),
      'lib',
      'connection_config.js',
    )
    const source = readFileSync(file, 'utf8')
    const block = source.slice(
      source.indexOf('const validOptions = {'),
      source.indexOf('};', source.indexOf('const validOptions = {')),
    )
    const names = [...block.matchAll(/^\s+(\w+): 1,/gm)].map((m) => m[1] as string)
    expect(names.length).toBeGreaterThan(40)
    expect(names.filter((n) => !known.has(n))).toEqual(['isServer', 'pool'])
  })

  it('rejects a misspelled option with a "did you mean", at its path', () => {
    const err = errorOf(() => checkMysql2PoolOptions({ conectionLimit: 5 }, at, known))
    expect(err.path).toBe('replicas[0].pool.conectionLimit')
    expect(err.message).toMatch(
      /^replicas\[0\]\.pool\.conectionLimit: unknown option "conectionLimit" \(did you mean "connectionLimit"\?\)/,
    )
    expect(errorOf(() => checkMysql2PoolOptions({ queuelimit: 5 }, at, known)).message).toContain(
      '(did you mean "queueLimit"?)',
    )
    expect(errorOf(() => checkMysql2PoolOptions({ idleTimeoutMillis: 5 }, at, known)).message).toContain(
      'unknown option "idleTimeoutMillis": use "idleTimeout" (ms)',
    )
  })

  it('says mysql2 has no checkout timeout for acquireTimeout / connectionTimeoutMillis, and what to use', () => {
    for (const key of ['acquireTimeout', 'connectionTimeoutMillis']) {
      const err = errorOf(() => checkMysql2PoolOptions({ [key]: 500 }, at, known))
      expect(err.message).toContain(`unknown option "${key}": mysql2's pool has no checkout timeout`)
      expect(err.message).toContain('queueLimit')
    }
    expect(errorOf(() => checkMysql2PoolOptions({ max: 5 }, at, known)).message).toContain(
      'use "connectionLimit"',
    )
  })

  it('accepts mysql2 options, and the extra names given', () => {
    expect(() =>
      checkMysql2PoolOptions(
        {
          connectionLimit: 5,
          queueLimit: 10,
          waitForConnections: false,
          ssl: {},
          password: 'pw',
          typeCast: false,
        },
        at,
        known,
      ),
    ).not.toThrow()
    expect(() =>
      checkMysql2PoolOptions({ brandNew: 1 }, at, knownMysql2PoolOptions(['brandNew'])),
    ).not.toThrow()
    expect(MYSQL2_POOL_OPTIONS).toContain('queueLimit')
  })

  it('rejects a password that is not a string without printing it', () => {
    const err = errorOf(() => checkMysql2PoolOptions({ password: 123456 }, at, known))
    expect(err.path).toBe('replicas[0].pool.password')
    expect(err.message).toContain('expected a string (quote it in a YAML or JSON file), got a number')
    expect(err.message).not.toContain('123456')
  })

  it('createRouter and createPool check the pool options', () => {
    const driver = mysql2Driver()
    const err = errorOf(() =>
      createRouter({
        driver,
        primary: 'mysql://app@127.0.0.1:1/app',
        replicas: [{ url: 'mysql://app@127.0.0.1:2/app', pool: { waitForConnection: false } }],
        healthCheck: false,
      }),
    )
    expect(err.path).toBe('replicas[0].pool.waitForConnection')
    expect(err.message).toContain('(did you mean "waitForConnections"?)')
    const node = {
      name: 'n1',
      url: 'mysql://app@127.0.0.1:1/app',
      pool: { conectTimeout: 1 },
      connectTimeoutMs: 100,
      queryTimeoutMs: 0,
      readOnly: false,
    }
    expect(() => driver.createPool(node, () => {})).toThrow('pool.conectTimeout (node "n1"): unknown option')
  })

  it('mysql2Driver rejects a malformed extraPoolOptions', () => {
    expect(() => mysql2Driver({ extraPoolOptions: 'x' as unknown as string[] })).toThrow(ConfigError)
  })
})
