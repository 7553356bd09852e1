import { describe, expect, it } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import type { Router } from '../router/router.js'
import { checkTokenSupport } from './check-token-support.js'
import { resolveHttpOptions } from './resolve-http-options.js'

const router = (mode: 'off' | 'window' | 'position') => ({ readYourWritesMode: mode }) as unknown as Router

describe('checkTokenSupport', () => {
  it('refuses a token transport (the default header, a header, a cookie) with readYourWrites: false', () => {
    for (const options of [{}, { token: { header: 'x-t' } }, { token: { cookie: 'rm' } }, { auto: true }]) {
      let err: unknown
      try {
        checkTokenSupport(router('off'), resolveHttpOptions(options))
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(ConfigError)
      expect((err as ConfigError).path).toBe('token')
      expect((err as ConfigError).message).toMatch(/readYourWrites: false.*token: false/)
    }
  })

  it('accepts tokens with position or window mode, and token: false with any mode', () => {
    for (const mode of ['position', 'window'] as const)
      expect(() => checkTokenSupport(router(mode), resolveHttpOptions())).not.toThrow()
    for (const mode of ['off', 'position', 'window'] as const)
      expect(() => checkTokenSupport(router(mode), resolveHttpOptions({ token: false }))).not.toThrow()
  })
})
