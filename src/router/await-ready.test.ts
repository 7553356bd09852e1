import { afterEach, describe, expect, it, vi } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import { RouterClosedError } from '../errors/router-closed-error.js'
import { RouterNotReadyError } from '../errors/router-not-ready-error.js'
import { FakeConnectError, fakeDriver } from './fake-driver.test-kit.js'
import { createRouter } from './router.js'

const SECRET = 's3cr3t-pw'

function router(kit: ReturnType<typeof fakeDriver>, healthCheck: Record<string, number> | false = {}) {
  return createRouter({
    driver: kit.driver,
    primary: { name: 'primary', url: `postgres://app:${SECRET}@db1/app` },
    replicas: [{ name: 'replica1', url: `postgres://app:${SECRET}@db2/app` }],
    healthCheck: healthCheck === false ? false : { intervalMs: 100, timeoutMs: 50, ...healthCheck },
  })
}

/** Settles `p` into a tuple so fake time can be advanced while it is pending. */
function settle<T>(p: Promise<T>): { done: () => boolean; value: () => T | undefined; error: () => unknown } {
  let done = false
  let value: T | undefined
  let error: unknown
  p.then(
    (v) => {
      done = true
      value = v
    },
    (e: unknown) => {
      done = true
      error = e
    },
  )
  return { done: () => done, value: () => value, error: () => error }
}

describe('router.ready (fake driver, fake timers)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('ready() resolves after the first probes even when nothing is reachable; ready({ timeoutMs }) rejects with every node', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver({ primary: 'refusing', replica1: 'hung' })
    const r = router(kit)
    const plain = settle(r.ready())
    const strict = settle(r.ready({ timeoutMs: 300 }))
    await vi.advanceTimersByTimeAsync(60) // the hung replica's probe gives up at 50 ms
    expect(plain.done()).toBe(true)
    expect(plain.error()).toBeUndefined()
    expect(strict.done()).toBe(false)
    await vi.advanceTimersByTimeAsync(250)
    expect(strict.done()).toBe(true)
    const err = strict.error() as RouterNotReadyError
    expect(err).toBeInstanceOf(RouterNotReadyError)
    expect(err.code).toBe('ROUTEMATE_NOT_READY')
    expect(err.timeoutMs).toBe(300)
    expect(err.message).toMatch(
      /^router not ready after 300 ms: the primary of cluster "default" \("primary"\)/,
    )
    expect(err.message).toContain('primary (primary, postgres://app:***@db1/app): down: connect ECONNREFUSED')
    expect(err.message).toContain(
      'replica1 (replica, postgres://app:***@db2/app): not-probed-yet (down): probe timed out',
    )
    expect(Object.keys(err.nodes)).toEqual(['primary', 'replica1'])
    expect(err.nodes.primary).toMatch(/^down: connect ECONNREFUSED/)
    expect(err.cause).toBeInstanceOf(FakeConnectError)
    expect(JSON.stringify({ m: err.message, n: err.nodes, s: err.stack })).not.toContain(SECRET)
    await r.close()
  })

  it('ready({ timeoutMs }) resolves as soon as the primary passes a probe within the timeout', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver({ primary: 'refusing', replica1: 'refusing' })
    const r = router(kit)
    const strict = settle(r.ready({ timeoutMs: 1000 }))
    await vi.advanceTimersByTimeAsync(250)
    expect(strict.done()).toBe(false)
    kit.modes.primary = 'up'
    await vi.advanceTimersByTimeAsync(100) // the next probe round
    expect(strict.done()).toBe(true)
    expect(strict.error()).toBeUndefined()
    await r.close()
  })

  it('ready({ timeoutMs }) with a healthy primary but a replica still in its first probe waits for that probe', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver({ replica1: 'hung' })
    const r = router(kit)
    const strict = settle(r.ready({ timeoutMs: 1000 }))
    await vi.advanceTimersByTimeAsync(20)
    expect(strict.done()).toBe(false) // the first round is not done
    await vi.advanceTimersByTimeAsync(40)
    expect(strict.done()).toBe(true)
    expect(strict.error()).toBeUndefined()
    // and with a timeout shorter than the replica's probe, the primary being good is enough
    const r2 = router(fakeDriver({ replica1: 'hung' }))
    const short = settle(r2.ready({ timeoutMs: 10 }))
    await vi.advanceTimersByTimeAsync(15)
    expect(short.done()).toBe(true)
    expect(short.error()).toBeUndefined()
    await r.close()
    await r2.close()
  })

  it('with healthCheck: false, ready() resolves at once and ready({ timeoutMs }) probes the primary itself', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = fakeDriver({ primary: 'refusing' })
    const r = router(kit, false)
    await r.ready()
    expect(kit.probes).toEqual({})
    const strict = settle(r.ready({ timeoutMs: 2000 }))
    await vi.advanceTimersByTimeAsync(1)
    expect(kit.probes.primary?.length).toBe(1)
    await vi.advanceTimersByTimeAsync(1200)
    expect(strict.done()).toBe(false)
    expect(kit.probes.primary?.length).toBeGreaterThanOrEqual(2)
    kit.modes.primary = 'up'
    await vi.advanceTimersByTimeAsync(600)
    expect(strict.done()).toBe(true)
    expect(strict.error()).toBeUndefined()
    expect(kit.probes.replica1).toBeUndefined() // only the primary is needed
    await r.close()
  })

  it('ready({ timeoutMs }) rejects with RouterClosedError when the router is closed meanwhile, ConfigError for a bad timeout', async () => {
    vi.useFakeTimers({ now: 0 })
    const r = router(fakeDriver({ primary: 'refusing' }))
    const strict = settle(r.ready({ timeoutMs: 5000 }))
    await vi.advanceTimersByTimeAsync(10)
    await r.close()
    await vi.advanceTimersByTimeAsync(1)
    expect(strict.error()).toBeInstanceOf(RouterClosedError)
    await expect(r.ready({ timeoutMs: -1 })).rejects.toBeInstanceOf(ConfigError)
    await expect(r.ready({ timeoutMs: -1 })).rejects.toThrow(
      /ready\(options\)\.timeoutMs: expected an integer >= 0/,
    )
    await expect(r.ready({ timeout: 1 } as never)).rejects.toThrow(/unknown option "timeout"/)
  })
})
