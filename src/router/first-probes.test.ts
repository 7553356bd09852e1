import { afterEach, describe, expect, it, vi } from 'vitest'
import { RouterClosedError } from '../errors/router-closed-error.js'
import type { ProbeResult } from './driver.js'
import { fakeDriver } from './fake-driver.test-kit.js'
import { createRouter } from './router.js'

/** A fake driver whose probes of `slow` take `ms` (fake time). */
function slowProbes(slow: string, ms: number) {
  const kit = fakeDriver()
  const probe = kit.driver.probe.bind(kit.driver)
  kit.driver.probe = (node, signal) =>
    node.name !== slow
      ? probe(node, signal)
      : new Promise<ProbeResult>((resolve, reject) =>
          setTimeout(() => probe(node, signal).then(resolve, reject), ms),
        )
  return kit
}

function router(kit: ReturnType<typeof fakeDriver>) {
  return createRouter({
    driver: kit.driver,
    primary: { name: 'primary', url: 'postgres://db1/app' },
    replicas: [{ name: 'replica1', url: 'postgres://db2/app' }],
    healthCheck: { intervalMs: 100, timeoutMs: 50 },
  })
}

describe('reads issued while the first probes run (fake driver, fake timers)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('wait for them and go to the first replica found healthy, not to the primary', async () => {
    vi.useFakeTimers({ now: 0 })
    const kit = slowProbes('replica1', 30)
    const r = router(kit)
    const reads = [1, 2, 3].map(() =>
      r.readOnly(() => r.query<{ node: string }>('SELECT 1')).then((x) => x.rows[0]?.node),
    )
    const tx = r.transaction(async (t) => t.node, { readOnly: true })
    await vi.advanceTimersByTimeAsync(10)
    expect(kit.executed).toEqual({}) // nothing ran on the primary meanwhile
    await vi.advanceTimersByTimeAsync(30)
    expect(await Promise.all(reads)).toEqual(['replica1', 'replica1', 'replica1'])
    expect(await tx).toBe('replica1')
    expect(kit.executed.primary).toBeUndefined()
    await r.close()
  })

  it('reject with RouterClosedError when the router is closed meanwhile', async () => {
    vi.useFakeTimers({ now: 0 })
    const r = router(slowProbes('replica1', 30))
    const read = r.readOnly(() => r.query('SELECT 1')).catch((e: unknown) => e)
    await vi.advanceTimersByTimeAsync(5)
    await r.close()
    expect(await read).toBeInstanceOf(RouterClosedError)
  })
})
