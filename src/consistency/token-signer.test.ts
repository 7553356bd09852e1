import { describe, expect, it } from 'vitest'
import { TokenSigner } from './token-signer.js'

const NEW = 'a new secret of 32 characters ...'
const OLD = 'an old secret, 16+ characters'
const BODY = 'rm1.eyJ3IjoxLCJwIjp7fX0'

const split = (sig: string) => sig.split('.') as [string, string]

describe('TokenSigner', () => {
  it('signs with a key id and a 32-byte MAC that verifies', () => {
    const s = new TokenSigner([NEW])
    const [kid, mac] = split(s.sign(BODY))
    expect(kid).toMatch(/^[A-Za-z0-9_-]{8}$/)
    expect(Buffer.from(mac, 'base64url')).toHaveLength(32)
    expect(s.verify(BODY, kid, mac)).toBe(true)
    expect(s.sign(BODY)).toBe(s.sign(BODY)) // deterministic
  })

  it('rejects an altered body, an altered MAC, a truncated MAC and an unknown key id', () => {
    const s = new TokenSigner([NEW])
    const [kid, mac] = split(s.sign(BODY))
    expect(s.verify(`${BODY}x`, kid, mac)).toBe(false)
    const flipped = Buffer.from(mac, 'base64url')
    flipped[0] = (flipped[0] as number) ^ 1
    expect(s.verify(BODY, kid, flipped.toString('base64url'))).toBe(false)
    expect(s.verify(BODY, kid, mac.slice(0, 20))).toBe(false)
    expect(s.verify(BODY, kid, '')).toBe(false)
    expect(s.verify(BODY, kid, `${mac}!`)).toBe(false)
    expect(s.verify(BODY, 'AAAAAAAA', mac)).toBe(false)
  })

  it('a token of another key is rejected', () => {
    const mine = new TokenSigner([NEW])
    const theirs = new TokenSigner(['somebody else 16 chars+'])
    const [kid, mac] = split(theirs.sign(BODY))
    expect(mine.verify(BODY, kid, mac)).toBe(false)
  })

  it('rotation: the first key signs, every key verifies', () => {
    const before = new TokenSigner([OLD])
    const during = new TokenSigner([NEW, OLD])
    const after = new TokenSigner([NEW])
    const old = split(before.sign(BODY))
    const fresh = split(during.sign(BODY))
    expect(during.verify(BODY, ...old)).toBe(true)
    expect(during.verify(BODY, ...fresh)).toBe(true)
    expect(after.verify(BODY, ...fresh)).toBe(true)
    expect(after.verify(BODY, ...old)).toBe(false)
    expect(fresh[0]).not.toBe(old[0])
    // A MAC made with one key is not accepted under the other key's id.
    expect(during.verify(BODY, old[0], fresh[1])).toBe(false)
  })

  it('needs a key', () => {
    expect(() => new TokenSigner([])).toThrow(TypeError)
  })
})
