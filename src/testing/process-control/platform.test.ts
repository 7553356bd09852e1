import { describe, expect, it } from 'vitest'
import { unsupportedPlatform } from './platform.js'

describe('unsupportedPlatform', () => {
  it('accepts Linux and names what is missing elsewhere', () => {
    expect(unsupportedPlatform('linux')).toBeUndefined()
    for (const platform of ['darwin', 'win32', 'freebsd'] as const) {
      const message = unsupportedPlatform(platform)
      expect(message).toMatch(/^routemate\/testing runs on Linux only \(it reads \/proc/)
      expect(message).toMatch(new RegExp(`this is ${platform}$`))
    }
  })
})
