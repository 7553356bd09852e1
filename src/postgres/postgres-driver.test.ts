import { describe, expect, it } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import { classifyPostgresError } from './postgres-errors.js'
import { checkPostgresPoolOptions } from './postgres-options.js'
import { beginOptionsOf } from './postgres-sql-facade.js'

const at = (key: string) => `pool.${key}`

describe('checkPostgresPoolOptions', () => {
  it('gives postgres.js defaults and routemate limits', () => {
    expect(checkPostgresPoolOptions({}, at)).toEqual({
      max: 10,
      idleTimeoutSeconds: 0,
      maxLifetimeSeconds: 0,
      maxWaiting: Number.POSITIVE_INFINITY,
      connectionTimeoutMillis: 0,
    })
    expect(checkPostgresPoolOptions({ max: 3, idle_timeout: 20, ssl: 'require' }, at).max).toBe(3)
  })

  it('refuses an unknown key with a did-you-mean, a URL-owned key with why, and bad values', () => {
    expect(() => checkPostgresPoolOptions({ maxx: 1 }, at)).toThrow(/pool\.maxx.*did you mean "max"/)
    expect(() => checkPostgresPoolOptions({ host: 'x' }, at)).toThrow(ConfigError)
    expect(() => checkPostgresPoolOptions({ types: {} }, at)).toThrow(/postgresDriver\(\{ types \}\)/)
    expect(() => checkPostgresPoolOptions({ max: 0 }, at)).toThrow(/pool\.max/)
    expect(() => checkPostgresPoolOptions({ connection: 'x' }, at)).toThrow(/pool\.connection/)
  })
})

describe('classifyPostgresError', () => {
  it('classifies SQLSTATEs and postgres.js connection codes', () => {
    expect(classifyPostgresError({ code: '25006' })).toBe('read-only')
    expect(classifyPostgresError({ code: '57P01' })).toBe('connection')
    expect(classifyPostgresError({ code: '08006' })).toBe('connection')
    expect(classifyPostgresError({ code: 'CONNECTION_CLOSED' })).toBe('connection')
    expect(classifyPostgresError({ code: 'CONNECT_TIMEOUT' })).toBe('connection')
    expect(classifyPostgresError({ code: 'ECONNREFUSED' })).toBe('connection')
    expect(classifyPostgresError({ code: '57014' })).toBe('statement')
    expect(classifyPostgresError({ code: '23505' })).toBe('statement')
    expect(classifyPostgresError(new Error('x'))).toBe('statement')
    expect(classifyPostgresError(undefined)).toBe('statement')
  })
})

describe('beginOptionsOf (sql.begin options)', () => {
  it('reads read only / read write / isolation level', () => {
    expect(beginOptionsOf('')).toEqual({})
    expect(beginOptionsOf('read only')).toEqual({ readOnly: true })
    expect(beginOptionsOf('READ WRITE')).toEqual({ readOnly: false })
    expect(beginOptionsOf('isolation level serializable read only')).toEqual({
      isolation: 'serializable',
      readOnly: true,
    })
  })

  it('refuses what routemate cannot honour', () => {
    expect(() => beginOptionsOf('deferrable')).toThrow(/unsupported transaction option/)
  })
})
