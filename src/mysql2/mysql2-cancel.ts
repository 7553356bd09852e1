import type { PoolConnection } from 'mysql2/promise'
import type { DriverNodeOptions } from '../router/driver.js'
import { coreOf } from './mysql2-internals.js'
import type { Mysql2Module } from './mysql2-node-pool.js'
import { killQuery } from './kill-query.js'
import { mysqlProbeOps, type ProbeMemo } from './mysql2-probe.js'

/**
 * Cancels the statement running on `conn`: `KILL QUERY <its connection id>` from a short-lived
 * connection with the node's credentials (a user may kill its own connections' statements with no
 * extra privilege), opened and run under `signal` (the core aborts it after `connectTimeoutMs`).
 * Resolves `true` once the server ran the `KILL QUERY` — the target's statement fails with 1317
 * (`ER_QUERY_INTERRUPTED`); a kill that finds the connection idle is dropped when its next
 * command starts, so it cannot hit a later statement — and `false` when it could not (connect
 * failure, abort, unknown connection id). Never rejects.
 *
 * @example
 * ```ts
 * const ok = await cancelMysqlQuery(mysql2, conn, node, AbortSignal.timeout(5000), new Map())
 * ```
 */
export async function cancelMysqlQuery(
  lib: Mysql2Module,
  conn: PoolConnection,
  node: DriverNodeOptions,
  signal: AbortSignal,
  memo: ProbeMemo,
): Promise<boolean> {
  return killQuery(mysqlProbeOps(lib, node, memo), coreOf(conn).threadId, signal)
}
