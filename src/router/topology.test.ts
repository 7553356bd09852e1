import { describe, expect, it } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import { RoutemateError } from '../errors/routemate-error.js'
import { UnknownNodeError } from '../errors/unknown-node-error.js'
import { fakeDriver } from './fake-driver.test-kit.js'
import { createRouter } from './router.js'

describe('runtime topology errors (fake driver)', () => {
  it('an unknown node name is UnknownNodeError naming it and the known nodes; a bad weight is ConfigError', async () => {
    const router = createRouter({
      driver: fakeDriver().driver,
      primary: 'postgres://db1/app',
      replicas: ['postgres://db2/app'],
      healthCheck: false,
    })
    try {
      for (const call of [
        () => router.removeReplica('nope'),
        () => router.drain('nope'),
        async () => router.setWeight('nope', 1),
      ]) {
        const err = (await call().catch((e: unknown) => e)) as UnknownNodeError
        expect(err).toBeInstanceOf(UnknownNodeError)
        expect(err).toBeInstanceOf(RoutemateError)
        expect(err.code).toBe('ROUTEMATE_UNKNOWN_NODE')
        expect(err.node).toBe('nope')
        expect(err.message).toBe('unknown node "nope"; nodes: primary, replica1')
      }
      expect(() => router.setWeight('replica1', -1)).toThrow(ConfigError)
      expect(() => router.setWeight('replica1', Number.NaN)).toThrow(
        'weight: expected a finite number >= 0, got NaN',
      )
    } finally {
      await router.close()
    }
  })
})
