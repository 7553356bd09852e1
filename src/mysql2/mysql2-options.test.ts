import { describe, expect, it } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import type { DriverNodeOptions } from '../router/driver.js'
import { createRouter } from '../router/router.js'
import { mysql2Driver } from './mysql2-driver.js'
import { poolOptions, probeConnectionOptions, urlOptions } from './mysql2-options.js'

function node(url: string, extra: Partial<DriverNodeOptions> = {}): DriverNodeOptions {
  return { name: 'n1', url, pool: {}, connectTimeoutMs: 5000, queryTimeoutMs: 0, readOnly: false, ...extra }
}

describe('urlOptions', () => {
  it('maps user, decoded password, host, port and database', () => {
    expect(urlOptions(node('mysql://app:s%40cr%2Fet%3A@db1.example.com:3307/app'))).toEqual({
      host: 'db1.example.com',
      port: 3307,
      user: 'app',
      password: 's@cr/et:',
      database: 'app',
    })
  })
  it('defaults the port to 3306 and accepts mariadb://', () => {
    expect(urlOptions(node('mariadb://app@db2/shop'))).toEqual({
      host: 'db2',
      port: 3306,
      user: 'app',
      database: 'shop',
    })
  })
  it('strips IPv6 brackets', () => {
    expect(urlOptions(node('mysql://app@[::1]:3306/app')).host).toBe('::1')
  })
  it('leaves out what the URL does not give', () => {
    expect(urlOptions(node('mysql://db3'))).toEqual({ host: 'db3', port: 3306 })
  })
  it('supports a Unix socket URL', () => {
    expect(urlOptions(node('mysql://app@localhost/app?socketPath=/run/mysqld/mysqld.sock'))).toEqual({
      host: 'localhost',
      port: 3306,
      user: 'app',
      database: 'app',
      socketPath: '/run/mysqld/mysqld.sock',
    })
  })
  it('decodes a percent-encoded database name', () => {
    expect(urlOptions(node('mysql://h/my%20db')).database).toBe('my db')
  })
  it('types query options', () => {
    const o = urlOptions(
      node(
        'mysql://h/app?charset=utf8mb4&timezone=Z&supportBigNumbers=true&dateStrings=1&connectionLimit=5' +
          '&multipleStatements=false&nestTables=_',
      ),
    )
    expect(o).toMatchObject({
      charset: 'utf8mb4',
      timezone: 'Z',
      supportBigNumbers: true,
      dateStrings: true,
      connectionLimit: 5,
      multipleStatements: false,
      nestTables: '_',
    })
  })
  it('maps ssl', () => {
    expect(urlOptions(node('mysql://h/app?ssl=true')).ssl).toEqual({})
    expect(urlOptions(node('mysql://h/app?ssl=false')).ssl).toBeUndefined()
    expect(
      urlOptions(node(`mysql://h/app?ssl=${encodeURIComponent('{"rejectUnauthorized":false}')}`)).ssl,
    ).toEqual({ rejectUnauthorized: false })
    expect(urlOptions(node('mysql://h/app?ssl=Amazon%20RDS')).ssl).toBe('Amazon RDS')
  })
  it('rejects bad URLs and options without printing the password', () => {
    const bad = [
      'not a url',
      'postgres://app:secret@h/app',
      'mysql://app:secret@h/app?foo=1',
      'mysql://app:secret@h/app?connectTimeout=5',
      'mysql://app:secret@h/app?compress=yes',
      'mysql://app:secret@h/app?connectionLimit=-1',
      'mysql://app:secret@h/app?ssl=%7Bbroken',
      'mysql://app:%E0%A4%A@h/app',
    ]
    for (const url of bad) {
      let message = ''
      try {
        urlOptions(node(url))
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError)
        expect((err as ConfigError).path).toBe('url (node "n1")')
        message = (err as Error).message
      }
      expect(message, url).toMatch(/^url \(node "n1"\): /)
      expect(message).not.toContain('secret')
    }
  })
  it('makes createRouter throw a ConfigError for a bad URL option, as every other bad option', () => {
    const bad = () =>
      createRouter({ driver: mysql2Driver(), primary: 'mysql://app:secret@127.0.0.1:1/app?compress=yes' })
    expect(bad).toThrow(ConfigError)
    expect(bad).toThrow('url (node "primary"): URL option "compress": expected true or false, got "yes"')
  })
})

describe('poolOptions', () => {
  it('puts connectTimeoutMs after the URL and the node pool options last', () => {
    const o = poolOptions(
      node('mysql://app:pw@h/app?connectionLimit=5', {
        connectTimeoutMs: 1234,
        pool: { connectionLimit: 20, decimalNumbers: true },
      }),
    )
    expect(o).toEqual({
      host: 'h',
      port: 3306,
      user: 'app',
      password: 'pw',
      database: 'app',
      connectTimeout: 1234,
      connectionLimit: 20,
      decimalNumbers: true,
    })
  })
})

describe('probeConnectionOptions', () => {
  it('keeps what connecting needs and forces the probe deadline', () => {
    const o = probeConnectionOptions(
      node('mysql://app:pw@h:3310/app?connectionLimit=5&charset=utf8mb4&rowsAsArray=true', {
        connectTimeoutMs: 300,
        pool: { connectTimeout: 9999, ssl: { rejectUnauthorized: false }, typeCast: false, queueLimit: 3 },
      }),
    )
    expect(o).toEqual({
      host: 'h',
      port: 3310,
      user: 'app',
      password: 'pw',
      database: 'app',
      charset: 'utf8mb4',
      ssl: { rejectUnauthorized: false },
      connectTimeout: 300,
    })
  })
})
