import type { ProbeConnectionOps } from '../health/kept-connection-prober.js'

/**
 * `KILL QUERY <threadId>` from a short-lived side connection opened with `ops` (a driver's probe
 * connection operations), under `signal`: the MySQL/MariaDB cancellation both the `mysql2` and
 * the `mariadb` drivers use. Resolves `true` once the server ran it, `false` when it could not
 * (no valid thread id, connect failure, abort); never rejects. The side connection is closed
 * (destroyed on abort).
 *
 * @example
 * ```ts
 * await killQuery(mysqlProbeOps(lib, node, memo), conn.threadId, signal)
 * ```
 */
export async function killQuery<C extends { readonly conn: { query(sql: string): Promise<unknown> } }>(
  ops: Pick<ProbeConnectionOps<C>, 'connect' | 'close' | 'destroy'>,
  threadId: unknown,
  signal: AbortSignal,
): Promise<boolean> {
  if (typeof threadId !== 'number' || !Number.isSafeInteger(threadId) || threadId <= 0) return false
  let killer: C | undefined
  const abort = (): void => {
    if (killer !== undefined) ops.destroy(killer)
  }
  try {
    killer = await ops.connect(signal)
    signal.addEventListener('abort', abort, { once: true })
    signal.throwIfAborted()
    await killer.conn.query(`KILL QUERY ${threadId}`)
    return true
  } catch {
    return false
  } finally {
    signal.removeEventListener('abort', abort)
    if (killer !== undefined) {
      if (signal.aborted) ops.destroy(killer)
      else ops.close(killer)
    }
  }
}
