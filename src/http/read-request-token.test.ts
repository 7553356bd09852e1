import { describe, expect, it } from 'vitest'
import { asToken, readRequestToken } from './read-request-token.js'
import { resolveHttpOptions } from './resolve-http-options.js'

const TOKEN = `rm1.${Buffer.from('{"w":1,"p":{}}').toString('base64url')}`

describe('readRequestToken', () => {
  it('reads the default header', () => {
    const o = resolveHttpOptions()
    expect(readRequestToken(o, { 'x-routemate-token': TOKEN })).toBe(TOKEN)
    expect(readRequestToken(o, { 'x-routemate-token': ` ${TOKEN} ` })).toBe(TOKEN)
    expect(readRequestToken(o, { 'x-routemate-token': [TOKEN, 'other'] })).toBe(TOKEN)
    expect(readRequestToken(o, {})).toBeUndefined()
    expect(readRequestToken(o, { cookie: `rm=${TOKEN}` })).toBeUndefined()
  })

  it('reads the cookie; the header wins when both are on; a bad header falls back to the cookie', () => {
    const cookieOnly = resolveHttpOptions({ token: { cookie: 'rm' } })
    expect(readRequestToken(cookieOnly, { cookie: `a=1; rm=${TOKEN}` })).toBe(TOKEN)
    expect(readRequestToken(cookieOnly, { 'x-routemate-token': TOKEN })).toBeUndefined()
    const both = resolveHttpOptions({ token: { header: 'x-t', cookie: 'rm' } })
    expect(readRequestToken(both, { 'x-t': 'rm1.fromHeader', cookie: `rm=${TOKEN}` })).toBe('rm1.fromHeader')
    expect(readRequestToken(both, { 'x-t': 'garbage!!', cookie: `rm=${TOKEN}` })).toBe(TOKEN)
  })

  it('reads nothing with token: false', () => {
    expect(
      readRequestToken(resolveHttpOptions({ token: false }), { 'x-routemate-token': TOKEN }),
    ).toBeUndefined()
  })

  it('drops garbage: other characters, joined duplicates, empty, oversized', () => {
    const o = resolveHttpOptions()
    for (const bad of ['', '   ', 'a b', `${TOKEN}, ${TOKEN}`, '<script>', 'rm1.%00', 'x'.repeat(8193)])
      expect(readRequestToken(o, { 'x-routemate-token': bad })).toBeUndefined()
    expect(asToken('x'.repeat(8192))).toHaveLength(8192)
    expect(asToken(undefined)).toBeUndefined()
  })
})
