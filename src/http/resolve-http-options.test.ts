import { describe, expect, it } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import type { RoutemateHttpOptions } from './http-options.js'
import { resolveHttpOptions } from './resolve-http-options.js'

function configError(options: unknown): ConfigError {
  try {
    resolveHttpOptions(options as RoutemateHttpOptions)
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return err as ConfigError
  }
  throw new Error('expected a ConfigError')
}

describe('resolveHttpOptions', () => {
  it('defaults: the token header, no cookie, auto off; frozen', () => {
    const r = resolveHttpOptions()
    expect(r).toEqual({ header: 'x-routemate-token', cookie: undefined, readMethods: undefined })
    expect(Object.isFrozen(r)).toBe(true)
    expect(resolveHttpOptions({ token: {} }).header).toBe('x-routemate-token')
  })

  it('token: false turns both transports off', () => {
    expect(resolveHttpOptions({ token: false })).toEqual({
      header: undefined,
      cookie: undefined,
      readMethods: undefined,
    })
  })

  it('a cookie alone replaces the default header; both can be on; header names are lower-cased', () => {
    const c = resolveHttpOptions({ token: { cookie: 'rm' } })
    expect(c.header).toBeUndefined()
    expect(c.cookie).toEqual({
      name: 'rm',
      path: '/',
      maxAgeSeconds: undefined,
      sameSite: 'lax',
      secure: false,
      httpOnly: true,
    })
    const both = resolveHttpOptions({
      token: {
        header: 'X-Token',
        cookie: {
          name: 'rm',
          path: '/app',
          maxAgeSeconds: 30,
          sameSite: 'none',
          secure: true,
          httpOnly: false,
        },
      },
    })
    expect(both.header).toBe('x-token')
    expect(both.cookie).toEqual({
      name: 'rm',
      path: '/app',
      maxAgeSeconds: 30,
      sameSite: 'none',
      secure: true,
      httpOnly: false,
    })
  })

  it('auto: true reads GET/HEAD/OPTIONS; custom methods are upper-cased', () => {
    expect([...(resolveHttpOptions({ auto: true }).readMethods ?? [])]).toEqual(['GET', 'HEAD', 'OPTIONS'])
    expect([...(resolveHttpOptions({ auto: { readMethods: ['get', 'Search'] } }).readMethods ?? [])]).toEqual(
      ['GET', 'SEARCH'],
    )
    expect([...(resolveHttpOptions({ auto: {} }).readMethods ?? [])]).toEqual(['GET', 'HEAD', 'OPTIONS'])
    expect(resolveHttpOptions({ auto: false }).readMethods).toBeUndefined()
  })

  it('names the bad option', () => {
    expect(configError('nope').path).toBe('')
    expect(configError({ token: 'x-token' }).path).toBe('token')
    expect(configError({ token: { header: 'bad header' } }).path).toBe('token.header')
    expect(configError({ token: { header: 'x\r\ny' } }).path).toBe('token.header')
    expect(configError({ token: { cookie: 'a;b' } }).path).toBe('token.cookie.name')
    expect(configError({ token: { cookie: 42 } }).path).toBe('token.cookie')
    expect(configError({ token: { cookie: { name: 'rm', path: 'x' } } }).path).toBe('token.cookie.path')
    expect(configError({ token: { cookie: { name: 'rm', maxAgeSeconds: -1 } } }).path).toBe(
      'token.cookie.maxAgeSeconds',
    )
    expect(configError({ token: { cookie: { name: 'rm', sameSite: 'Lax' } } }).path).toBe(
      'token.cookie.sameSite',
    )
    expect(configError({ token: { cookie: { name: 'rm', secure: 'yes' } } }).path).toBe('token.cookie.secure')
    expect(configError({ token: { cookie: { name: 'rm', sameSite: 'none' } } }).message).toMatch(
      /token\.cookie\.secure: must be true with sameSite 'none'/,
    )
    expect(configError({ auto: 'yes' }).path).toBe('auto')
    expect(configError({ auto: { readMethods: 'GET' } }).path).toBe('auto.readMethods')
    expect(configError({ auto: { readMethods: ['GET', 'G E T'] } }).path).toBe('auto.readMethods[1]')
  })
})
