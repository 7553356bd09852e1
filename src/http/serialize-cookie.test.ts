import { describe, expect, it } from 'vitest'
import { parseCookie } from './parse-cookie.js'
import { isCookieName, isCookiePath, serializeCookie } from './serialize-cookie.js'

describe('serializeCookie', () => {
  it('writes the value and the attributes in a fixed order', () => {
    expect(serializeCookie('rm', 'rm1.abc')).toBe('rm=rm1.abc')
    expect(
      serializeCookie('rm', 'rm1.abc', {
        path: '/',
        maxAgeSeconds: 60,
        sameSite: 'strict',
        secure: true,
        httpOnly: true,
      }),
    ).toBe('rm=rm1.abc; Path=/; Max-Age=60; SameSite=Strict; Secure; HttpOnly')
    expect(serializeCookie('rm', 'v', { sameSite: 'lax', secure: false, httpOnly: false })).toBe(
      'rm=v; SameSite=Lax',
    )
    expect(serializeCookie('rm', 'v', { sameSite: 'none', secure: true })).toBe('rm=v; SameSite=None; Secure')
    expect(serializeCookie('rm', 'v', { maxAgeSeconds: 0 })).toBe('rm=v; Max-Age=0')
  })

  it('percent-encodes a value that is not cookie octets; parseCookie round-trips it', () => {
    const value = 'a b;c,"d"\\é\r\n'
    const header = serializeCookie('rm', value)
    expect(header).not.toMatch(/[\s;,"\\]/u)
    expect(parseCookie(header, 'rm')).toBe(value)
  })

  it('writes a consistency token (URL-safe base64) as is', () => {
    const token = `rm1.${Buffer.from('{"w":1,"p":{"default":"0/1A2B3C"}}').toString('base64url')}`
    expect(serializeCookie('rm', token)).toBe(`rm=${token}`)
  })

  it('throws on a name or attribute that could split or smuggle a header', () => {
    expect(() => serializeCookie('r m', 'v')).toThrow(TypeError)
    expect(() => serializeCookie('rm;', 'v')).toThrow(TypeError)
    expect(() => serializeCookie('', 'v')).toThrow(TypeError)
    expect(() => serializeCookie('rm\r\nX-Evil: 1', 'v')).toThrow(TypeError)
    expect(() => serializeCookie('rm', 'v', { path: '/a; Domain=evil' })).toThrow(TypeError)
    expect(() => serializeCookie('rm', 'v', { path: '/a\r\nX: 1' })).toThrow(TypeError)
    expect(() => serializeCookie('rm', 'v', { path: 'relative' })).toThrow(TypeError)
    expect(() => serializeCookie('rm', 'v', { maxAgeSeconds: 1.5 })).toThrow(TypeError)
    expect(() => serializeCookie('rm', 'v', { maxAgeSeconds: -1 })).toThrow(TypeError)
    expect(() => serializeCookie('rm', 'v', { sameSite: 'constructor' as 'lax' })).toThrow(TypeError)
  })

  it('validates names and paths', () => {
    expect(isCookieName("a!#$%&'*+-.^_`|~9")).toBe(true)
    expect(isCookieName('a=b')).toBe(false)
    expect(isCookieName('a(b)')).toBe(false)
    expect(isCookiePath('/')).toBe(true)
    expect(isCookiePath('/a b/c')).toBe(true)
    expect(isCookiePath('/a\tb')).toBe(false)
    expect(isCookiePath('/é')).toBe(false)
  })
})
