import { afterEach, describe, expect, it, vi } from 'vitest'
import { NoHealthyReplicaError } from '../errors/no-healthy-replica-error.js'
import { PrimaryUnavailableError } from '../errors/primary-unavailable-error.js'
import { FakeConnectError, fakeDriver } from './fake-driver.test-kit.js'
import { createRouter } from './router.js'

const SECRET = 's3cr3t-pw'

describe('errors at startup (fake driver)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  for (const healthCheck of [{ intervalMs: 100, timeoutMs: 50 }, false] as const) {
    it(`a fresh router whose primary refuses: the first write is PrimaryUnavailableError with the driver error as cause (healthCheck ${healthCheck === false ? 'off' : 'on'})`, async () => {
      vi.useFakeTimers({ now: 0 })
      const kit = fakeDriver({ primary: 'refusing' })
      const router = createRouter({
        driver: kit.driver,
        primary: { name: 'primary', url: `postgres://app:${SECRET}@db1/app` },
        healthCheck,
      })
      try {
        for (const attempt of [1, 2]) {
          const err = (await router.query('INSERT INTO t VALUES (1)').catch((e: unknown) => e)) as Error
          expect(err, `attempt ${attempt}`).toBeInstanceOf(PrimaryUnavailableError)
          expect(err.cause).toBeInstanceOf(FakeConnectError)
          expect((err as PrimaryUnavailableError).cluster).toBe('default')
          expect(err.message).not.toContain(SECRET)
        }
        await router.session(async () => {
          await expect(router.query('INSERT INTO t VALUES (1)')).rejects.toBeInstanceOf(
            PrimaryUnavailableError,
          )
        })
        const tx = (await router.transaction(async () => 1).catch((e: unknown) => e)) as Error
        expect(tx).toBeInstanceOf(PrimaryUnavailableError)
        expect(tx.cause).toBeInstanceOf(FakeConnectError)
        expect(kit.executed).toEqual({}) // nothing was sent
        // Once the primary answers, writes run; later failures of a reached primary are no longer mapped.
        kit.modes.primary = 'up'
        // marked down by those failures: back after a probe
        for (let i = 0; i < 300 && router.stats().nodes[0]?.state !== 'up'; i++)
          await vi.advanceTimersByTimeAsync(10)
        await expect(router.query('INSERT INTO t VALUES (1)')).resolves.toMatchObject({ rowCount: 1 })
        kit.modes.primary = 'refusing'
        const later = await router.query('INSERT INTO t VALUES (1)').catch((e: unknown) => e)
        expect(later).toBeInstanceOf(FakeConnectError)
      } finally {
        await router.close()
      }
    })
  }

  it('a fresh router whose primary refuses: the first transaction is PrimaryUnavailableError too (its checkout failed)', async () => {
    const router = createRouter({
      driver: fakeDriver({ primary: 'refusing' }).driver,
      primary: { name: 'primary', url: 'postgres://db1/app' },
      healthCheck: false,
    })
    try {
      const err = (await router.transaction(async () => 1).catch((e: unknown) => e)) as Error
      expect(err).toBeInstanceOf(PrimaryUnavailableError)
      expect(err.message).toMatch(
        /^the primary of cluster "default" \("primary"\) cannot be reached: connect ECONNREFUSED/,
      )
      expect(err.cause).toBeInstanceOf(FakeConnectError)
    } finally {
      await router.close()
    }
  })

  it('replicas unreachable at start with fallbackToPrimary: false: reads fail with NoHealthyReplicaError, before and after ready()', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver({ replica1: 'refusing', replica2: 'hung' })
    const router = createRouter({
      driver: kit.driver,
      primary: { name: 'primary', url: 'postgres://db1/app' },
      replicas: [
        { name: 'replica1', url: 'postgres://db2/app' },
        { name: 'replica2', url: 'postgres://db3/app' },
      ],
      fallbackToPrimary: false,
      healthCheck: { intervalMs: 100, timeoutMs: 50 },
    })
    try {
      // A read before ready() waits for the first probes (the hung one gives up at 50 ms), then fails.
      let before: unknown = 'pending'
      void router
        .readOnly(() => router.query('SELECT 1'))
        .catch((e: unknown) => {
          before = e
        })
      await vi.advanceTimersByTimeAsync(20)
      expect(before).toBe('pending')
      const ready = router.ready()
      await vi.advanceTimersByTimeAsync(40)
      await ready
      expect(before).toBeInstanceOf(NoHealthyReplicaError)
      expect((before as Error).message).toContain('replica1: not-probed-yet, replica2: not-probed-yet')
      const after = await router.readOnly(() => router.query('SELECT 1')).catch((e: unknown) => e)
      expect(after).toBeInstanceOf(NoHealthyReplicaError)
      expect(kit.executed).toEqual({})
    } finally {
      await router.close()
    }
  })
})
