import { createHook } from 'node:async_hooks'

/**
 * Promises made per call of `run` (async_hooks `PROMISE` resources; the caller's `await` counts
 * one): the least of three windows of 20 sequential calls, after 5 unmeasured ones (connections
 * opened, statements prepared). Whatever else the process does meanwhile (health probes of other
 * routers, timers) only adds promises, so the least window is the closest to the calls' own. Deterministic where throughput is not: under Node 20's promise hooks, which
 * routemate's `AsyncLocalStorage` turns on, every promise a routed statement makes has a cost.
 *
 * @example
 * ```ts
 * expect(await promisesPerCall(() => router.query('SELECT 1'))).toBeLessThanOrEqual(3)
 * ```
 */
export async function promisesPerCall(run: () => PromiseLike<unknown>): Promise<number> {
  for (let i = 0; i < 5; i++) await run()
  let least = Number.POSITIVE_INFINITY
  for (let w = 0; w < 3; w++) {
    let promises = 0
    const hook = createHook({
      init(_id, type) {
        if (type === 'PROMISE') promises++
      },
    }).enable()
    try {
      for (let i = 0; i < 20; i++) await run()
    } finally {
      hook.disable()
    }
    least = Math.min(least, promises / 20)
  }
  return least
}
