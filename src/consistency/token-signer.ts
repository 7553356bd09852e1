import { createHmac, timingSafeEqual } from 'node:crypto'

/** Length of a key id in a signed token (base64url characters: 48 bits). */
const KEY_ID_CHARS = 8

/** A key id or a MAC: base64url. */
const B64URL = /^[A-Za-z0-9_-]+$/

/**
 * Signs consistency tokens with HMAC-SHA256 and checks their signatures, with key rotation: the
 * first key signs, every key verifies. A signature is `<key id>.<mac>`, where the key id is derived
 * from the key (an HMAC of a fixed label, so it tells nothing about the key) and picks the one key
 * to check, so verifying costs one HMAC whatever the number of keys; the MAC (32 bytes) is
 * compared in constant time.
 *
 * @example
 * ```ts
 * const signer = new TokenSigner(['new secret, 16+ chars', 'old secret, 16+ chars'])
 * const body = 'rm1.eyJ3IjowLCJwIjp7fX0'
 * const [kid, mac] = signer.sign(body).split('.')
 * signer.verify(body, kid, mac) // true
 * ```
 */
export class TokenSigner {
  readonly #keys: ReadonlyMap<string, string>
  readonly #current: string
  readonly #currentId: string

  /** `keys`: at least one; the first signs, all verify. */
  constructor(keys: readonly string[]) {
    const first = keys[0]
    if (first === undefined) throw new TypeError('TokenSigner: expected at least one key')
    const byId = new Map<string, string>()
    for (const key of keys) {
      const id = keyId(key)
      if (!byId.has(id)) byId.set(id, key)
    }
    this.#keys = byId
    this.#current = first
    this.#currentId = keyId(first)
  }

  /** The signature of `body` (a token without its signature) with the current key: `<key id>.<mac>`. */
  sign(body: string): string {
    const signed = `${body}.${this.#currentId}`
    return `${this.#currentId}.${mac(this.#current, signed)}`
  }

  /** Whether `kid` names an accepted key and `tag` is that key's MAC of `body` and `kid`. */
  verify(body: string, kid: string, tag: string): boolean {
    const key = this.#keys.get(kid)
    if (key === undefined || !B64URL.test(tag)) return false
    const expected = Buffer.from(mac(key, `${body}.${kid}`), 'base64url')
    const given = Buffer.from(tag, 'base64url')
    return given.length === expected.length && timingSafeEqual(given, expected)
  }
}

function mac(key: string, text: string): string {
  return createHmac('sha256', key).update(text).digest('base64url')
}

function keyId(key: string): string {
  return mac(key, 'routemate consistency token key id').slice(0, KEY_ID_CHARS)
}
