import { type MariaDbTarget, mariaDbQuery } from './mariadb-client.js'
import type { MariaDbServer } from './mariadb-server.js'
import { sleep } from './process-control/index.js'

/** One row of `SHOW SLAVE STATUS`. */
export type MariaDbSlaveStatus = Record<string, unknown>

/**
 * Reads `SHOW SLAVE STATUS` on a node as a superuser; `undefined` when no replication is configured.
 *
 * @example
 * ```ts
 * (await readMariaDbSlaveStatus({ port, user: 'root', password }))?.Slave_SQL_Running // 'Yes'
 * ```
 */
export async function readMariaDbSlaveStatus(
  superuser: MariaDbTarget,
): Promise<MariaDbSlaveStatus | undefined> {
  const rows = await mariaDbQuery(superuser, 'SHOW SLAVE STATUS', [], { timeoutMs: 5000 })
  return rows[0] as MariaDbSlaveStatus | undefined
}

/**
 * The replication state worth showing in an error: thread states, last errors, GTID position.
 *
 * @example
 * ```ts
 * describeMariaDbSlaveStatus(status) // ' (Slave_IO_Running=Connecting, Slave_SQL_Running=Yes, ...)'
 * ```
 */
export function describeMariaDbSlaveStatus(status: MariaDbSlaveStatus | undefined): string {
  if (!status) return ' (SHOW SLAVE STATUS: no replication configured or no answer)'
  const keys = ['Slave_IO_Running', 'Slave_SQL_Running', 'Last_IO_Error', 'Last_SQL_Error', 'Gtid_IO_Pos']
  return ` (${keys.map((k) => `${k}=${String(status[k] ?? '')}`).join(', ')})`
}

/**
 * Polls `SELECT 1` (127.0.0.1, connect timeout 1 s, every 50 ms) until the server answers. Fails
 * fast, with its error log, if the server exits meanwhile; on `timeoutMs` throws a
 * `MariaDbClusterError` naming the node, the last client error and the log's last lines.
 *
 * @example
 * ```ts
 * server.start(); await waitForMariaDbReady(server, { port, user: 'root', password }, 30_000)
 * ```
 */
export async function waitForMariaDbReady(
  server: MariaDbServer,
  superuser: MariaDbTarget,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    await server.assertRunning()
    try {
      await mariaDbQuery(superuser, 'SELECT 1', [], { connectTimeoutMs: 1000, timeoutMs: 2000 })
      return
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) {
      const why = last instanceof Error ? ` (last error: ${last.message})` : ''
      throw await server.failure(`not ready after ${timeoutMs} ms${why}`, last)
    }
    await sleep(50)
  }
}

/**
 * Polls `SHOW SLAVE STATUS` until the SQL thread runs and the IO thread is connected; while
 * `primaryUp()` says the primary is down or paused, an IO thread that is still `Connecting` is
 * accepted. Throws a `MariaDbClusterError` with the threads' state and last errors on `timeoutMs`.
 *
 * @example
 * ```ts
 * await waitForMariaDbReplicating(server, { port, user: 'root', password }, () => true, 30_000)
 * ```
 */
export async function waitForMariaDbReplicating(
  server: MariaDbServer,
  superuser: MariaDbTarget,
  primaryUp: () => boolean,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    await server.assertRunning()
    const status = await readMariaDbSlaveStatus(superuser).catch(() => undefined)
    const io = status?.Slave_IO_Running
    if (status?.Slave_SQL_Running === 'Yes' && (io === 'Yes' || (!primaryUp() && io === 'Connecting'))) return
    if (Date.now() > deadline) {
      throw await server.failure(
        `replication not running after ${timeoutMs} ms${describeMariaDbSlaveStatus(status)}`,
      )
    }
    await sleep(50)
  }
}
