import { describe, expect, it } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import type { DriverNodeOptions } from '../router/driver.js'
import { mariadbDriver } from './mariadb-driver.js'
import { classifyMariadbError } from './mariadb-errors.js'
import {
  checkMariadbPoolOptions,
  knownMariadbPoolOptions,
  mariadbNodeOptions,
  mariadbProbeOptions,
  mariadbUrlOptions,
} from './mariadb-options.js'
import { nativeMariadbResult, toMariadbResult } from './mariadb-result.js'

const node = (url: string, extra: Partial<DriverNodeOptions> = {}): DriverNodeOptions => ({
  name: 'n1',
  url,
  pool: {},
  connectTimeoutMs: 1500,
  queryTimeoutMs: 0,
  readOnly: false,
  ...extra,
})

describe('mariadb URL and pool options', () => {
  it('parses a mysql:// or mariadb:// URL, percent-decoded, with typed query options', () => {
    expect(
      mariadbUrlOptions(
        node('mariadb://app:s%40cret@db1:3307/app?charset=utf8mb4&compress=true&socketTimeout=500'),
      ),
    ).toEqual({
      host: 'db1',
      port: 3307,
      user: 'app',
      password: 's@cret',
      database: 'app',
      charset: 'utf8mb4',
      compress: true,
      socketTimeout: 500,
    })
    expect(mariadbUrlOptions(node('mysql://app@[::1]/app')).host).toBe('::1')
    expect(mariadbUrlOptions(node('mysql://app@db/app?ssl=true')).ssl).toBe(true)
  })

  it('refuses a bad URL without printing it', () => {
    for (const url of [
      'postgres://app:hunter2@db/app',
      'mariadb://app:hunter2@db/app?conectTimeout=5',
      'not a url hunter2',
    ]) {
      let err: unknown
      try {
        mariadbUrlOptions(node(url))
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(ConfigError)
      expect(String((err as Error).message)).not.toContain('hunter2')
    }
    expect(() => mariadbUrlOptions(node('mariadb://a@db/app?conectTimeout=5'))).toThrow(
      /did you mean "connectTimeout"/,
    )
  })

  it('merges URL, connectTimeoutMs and pool options; splits off the pool sizing; read-only pools get no multi-statements', () => {
    const { connection, limits } = mariadbNodeOptions(
      node('mariadb://app@db/app?multipleStatements=true', {
        pool: { connectionLimit: 4, acquireTimeout: 250, timezone: 'Z' },
        readOnly: true,
      }),
    )
    expect(limits).toEqual({ connectionLimit: 4, acquireTimeout: 250, idleTimeout: 1800 })
    expect(connection).toMatchObject({
      host: 'db',
      connectTimeout: 1500,
      timezone: 'Z',
      multipleStatements: false,
    })
    expect(connection).not.toHaveProperty('connectionLimit')
    expect(mariadbNodeOptions(node('mariadb://app@db/app')).limits).toEqual({
      connectionLimit: 10,
      acquireTimeout: 10_000,
      idleTimeout: 1800,
    })
  })

  it('a probe connection keeps only what it takes to log in', () => {
    const probe = mariadbProbeOptions(
      node('mariadb://app:pw@db/app?rowsAsArray=true', { pool: { connectionLimit: 3 } }),
    )
    expect(probe).toEqual({
      host: 'db',
      port: 3306,
      user: 'app',
      password: 'pw',
      database: 'app',
      connectTimeout: 1500,
    })
  })

  it('checks pool option names: a typo, an unimplemented connector pool option, a non-string password', () => {
    const known = knownMariadbPoolOptions([])
    const at = (k: string) => `pool.${k}`
    expect(() => checkMariadbPoolOptions({ conectionLimit: 3 }, at, known)).toThrow(
      /pool\.conectionLimit.*did you mean "connectionLimit"/,
    )
    expect(() => checkMariadbPoolOptions({ minimumIdle: 3 }, at, known)).toThrow(
      /unsupported option "minimumIdle"/,
    )
    expect(() => checkMariadbPoolOptions({ password: 123456 }, at, known)).toThrow(
      /pool\.password: expected a string/,
    )
    expect(() => checkMariadbPoolOptions({ connectionLimit: 3, timezone: 'Z' }, at, known)).not.toThrow()
    expect(() =>
      checkMariadbPoolOptions({ brandNew: 1 }, at, knownMariadbPoolOptions(['brandNew'])),
    ).not.toThrow()
    expect(() => mariadbDriver().checkPoolOptions?.({ max: 5 }, 'replicas[1].pool')).toThrow(
      /replicas\[1\]\.pool\.max.*connectionLimit/,
    )
  })
})

describe('classifyMariadbError', () => {
  it('the connector’s socket and closed-connection errors are connection errors', () => {
    for (const code of [
      'ER_SOCKET_UNEXPECTED_CLOSE',
      'ER_CONNECTION_TIMEOUT',
      'ER_CMD_CONNECTION_CLOSED',
      'ER_SOCKET_TIMEOUT',
    ])
      expect(classifyMariadbError({ code, errno: 45000, fatal: true, sql: 'SELECT 1' })).toBe('connection')
    expect(classifyMariadbError({ code: 'ECONNREFUSED', errno: -111, fatal: true, sql: null })).toBe(
      'connection',
    )
  })

  it('server errors as for mysql2: read-only refusals, login errors without a statement, statement errors', () => {
    expect(
      classifyMariadbError({ errno: 1792, code: 'ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION', sql: 'INSERT' }),
    ).toBe('read-only')
    expect(
      classifyMariadbError({
        errno: 1290,
        message: 'The MariaDB server is running with the --read-only option',
        sql: 'INSERT',
      }),
    ).toBe('read-only')
    expect(classifyMariadbError({ errno: 1049, code: 'ER_BAD_DB_ERROR', sql: null, fatal: true })).toBe(
      'connection',
    )
    expect(classifyMariadbError({ errno: 1064, code: 'ER_PARSE_ERROR', sql: 'SELEC 1', fatal: false })).toBe(
      'statement',
    )
    expect(classifyMariadbError({ errno: 1317, code: 'ER_QUERY_INTERRUPTED', sql: 'SELECT SLEEP(5)' })).toBe(
      'statement',
    )
    expect(classifyMariadbError(new Error('boom'))).toBe('statement')
  })
})

describe('toMariadbResult', () => {
  it('rows with meta, an OK packet, several results; the native result stays for the facade', () => {
    const rows = Object.assign([{ x: 1 }], { meta: [{ name: 'x' }] })
    const r = toMariadbResult(rows)
    expect(r.rows).toBe(rows)
    expect(r.rowCount).toBe(1)
    expect(r.meta).toEqual([{ name: 'x' }])
    expect(nativeMariadbResult(r)).toBe(rows)
    const ok = { affectedRows: 2, insertId: 7n, warningStatus: 0 }
    expect(toMariadbResult(ok)).toEqual({
      rows: [],
      rowCount: 2,
      insertId: 7n,
      affectedRows: 2,
      warningStatus: 0,
    })
    expect(nativeMariadbResult(toMariadbResult(ok))).toBe(ok)
    expect(toMariadbResult([[{ a: 1 }], ok]).rowCount).toBeNull()
  })
})
