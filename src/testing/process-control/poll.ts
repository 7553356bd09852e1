/**
 * Resolves after `ms` milliseconds.
 *
 * @example
 * ```ts
 * await sleep(50)
 * ```
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * Calls `check` every `intervalMs` (default 50) until it returns a value other than `undefined`
 * (resolved with that value) or `timeoutMs` has passed (resolved with `undefined`, so the caller can
 * build an error that names what it waited for). A throwing `check` counts as "not yet"; its last
 * error is handed to `onError`.
 *
 * @example
 * ```ts
 * const pid = await pollUntil(async () => readPid(), { timeoutMs: 5000 })
 * if (pid === undefined) throw new Error('no pid after 5 s')
 * ```
 */
export async function pollUntil<T>(
  check: () => Promise<T | undefined> | T | undefined,
  options: { timeoutMs: number; intervalMs?: number; onError?: (err: unknown) => void },
): Promise<T | undefined> {
  const deadline = Date.now() + options.timeoutMs
  const interval = options.intervalMs ?? 50
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (err) {
      options.onError?.(err)
    }
    if (Date.now() >= deadline) return undefined
    await sleep(Math.min(interval, Math.max(1, deadline - Date.now())))
  }
}

/**
 * Like `Promise.all`, but waits for every task to settle before rejecting with the first failure, so
 * nothing is still running when the caller cleans up after it.
 *
 * @example
 * ```ts
 * await settleAll(replicas.map((r) => r.start()))
 * ```
 */
export async function settleAll(tasks: readonly Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(tasks)).find((r) => r.status === 'rejected')
  if (failed !== undefined) throw failed.reason
}
