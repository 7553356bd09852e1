import { describe, expect, it } from 'vitest'
import { resolveHttpOptions } from './resolve-http-options.js'
import { responseTokenHeaders } from './response-token-headers.js'

describe('responseTokenHeaders', () => {
  it('the header by default', () => {
    expect(responseTokenHeaders(resolveHttpOptions(), 'rm1.x')).toEqual([['x-routemate-token', 'rm1.x']])
  })

  it('a cookie with its defaults, or both', () => {
    expect(responseTokenHeaders(resolveHttpOptions({ token: { cookie: 'rm' } }), 'rm1.x')).toEqual([
      ['set-cookie', 'rm=rm1.x; Path=/; SameSite=Lax; HttpOnly'],
    ])
    expect(
      responseTokenHeaders(
        resolveHttpOptions({
          token: { header: 'X-T', cookie: { name: 'rm', maxAgeSeconds: 5, secure: true, httpOnly: false } },
        }),
        'rm1.x',
      ),
    ).toEqual([
      ['x-t', 'rm1.x'],
      ['set-cookie', 'rm=rm1.x; Path=/; Max-Age=5; SameSite=Lax; Secure'],
    ])
  })

  it('nothing with token: false', () => {
    expect(responseTokenHeaders(resolveHttpOptions({ token: false }), 'rm1.x')).toEqual([])
  })
})
