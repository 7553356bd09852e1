import { describe, expect, it } from 'vitest'
import { Session } from './session.js'

describe('Session tokens', () => {
  it('round-trips the last write time and positions per cluster', () => {
    const s = new Session()
    s.lastWriteAt = 1_700_000_000_000
    s.positions.set('default', '0/3000060')
    s.positions.set('s1', '0-1-42,1-1-7')
    const token = s.toToken()
    expect(token).toMatch(/^rm1\.[A-Za-z0-9_-]+$/)
    const back = Session.fromToken(token)
    expect(back.lastWriteAt).toBe(s.lastWriteAt)
    expect([...back.positions]).toEqual([...s.positions])
  })

  it.each([
    undefined,
    '',
    'garbage',
    'rm1.',
    'rm1.!!!',
    `rm1.${Buffer.from('[1,2]').toString('base64url')}`,
    42,
  ])('an invalid token %j gives an empty session', (token) => {
    const s = Session.fromToken(token)
    expect(s.lastWriteAt).toBe(0)
    expect(s.positions.size).toBe(0)
  })

  it('ignores ill-typed fields', () => {
    const bad = `rm1.${Buffer.from(JSON.stringify({ w: 'x', p: { a: 1, b: '0/1' } })).toString('base64url')}`
    const s = Session.fromToken(bad)
    expect(s.lastWriteAt).toBe(0)
    expect([...s.positions]).toEqual([['b', '0/1']])
  })
})
