import type { Session } from '../consistency/session.js'
import { UNKNOWN_POSITION } from '../consistency/token-codec.js'
import type { Cluster } from './cluster.js'
import type { QueryResult } from './driver.js'
import { acquireConnection, type RouterCore, requirePrimary, statementFailed } from './router-core.js'
import type { Scope } from './scope.js'
import { leadingKeyword } from './sql-guard.js'
import { mustClose, type Statement, textOf } from './statement.js'

export { UNKNOWN_POSITION }

/** Leading keywords of statements that do not make a session "have written". */
const READ_KEYWORDS = new Set(['SELECT', 'SHOW', 'EXPLAIN', 'VALUES', 'TABLE', 'DESCRIBE', 'DESC'])

/**
 * Runs a write, an unscoped statement or a statement in a `primary` scope on the cluster's
 * primary. `PrimaryUnavailableError` (before any I/O) when the primary is down or untrusted, or
 * when a primary never reached yet cannot be connected to (see `acquireConnection`). A
 * session's write runs on a connection of its own so that, in `position` mode, the primary's
 * position after it can be read on that connection (`recordWrite`). Writes are never retried.
 * Bounded by the primary's `queryTimeoutMs` (`QueryTimeoutError`); a connection lost after the
 * statement was sent gives `WriteOutcomeUnknownError` (the write may or may not have been applied).
 */
export async function runOnPrimary(
  core: RouterCore,
  cluster: Cluster,
  scope: Scope | undefined,
  sql: Statement,
  params: readonly unknown[] | undefined,
): Promise<QueryResult> {
  const node = requirePrimary(cluster)
  const session =
    scope?.session !== undefined && !READ_KEYWORDS.has(leadingKeyword(textOf(sql)))
      ? scope.session
      : undefined
  if (session === undefined && node.seenHealthy) {
    try {
      return await node.run(sql, params, false, true)
    } catch (err) {
      throw statementFailed(core, cluster, node, err, false)
    }
  }
  // A session's write: remember it (and, in position mode, where the primary stood after it). Or
  // the first contact with a primary never reached yet: its checkout is separate, so that a failed
  // connect (nothing sent) is told apart as `PrimaryUnavailableError` (see `acquireConnection`).
  const conn = await acquireConnection(core, cluster, node, false, false)
  let destroy = false
  try {
    const started = performance.now()
    const result = await node.execute(conn, sql, params, true)
    node.observe(performance.now() - started)
    if (session !== undefined) await recordWrite(core, cluster, session, conn)
    return result
  } catch (err) {
    node.observe(0, false)
    destroy = mustClose(core.driver, err)
    throw statementFailed(core, cluster, node, err, false)
  } finally {
    node.release(conn, destroy)
  }
}

/**
 * Records a session's write on `cluster` (read-your-writes bookkeeping): its time, and in
 * `position` mode the primary's position read on `conn` (`UNKNOWN_POSITION` if that fails, which
 * sends the session's reads to the primary).
 */
export async function recordWrite(
  core: RouterCore,
  cluster: Cluster,
  session: Session,
  conn: unknown,
): Promise<void> {
  session.lastWriteAt = Date.now()
  session.writes++
  if (core.config.readYourWrites.mode !== 'position') return
  try {
    const position = await core.driver.positionAfterWrite(conn)
    session.positions.set(cluster.name, position)
    cluster.primaryPosition.observe(position) // the primary really reached it: tokens up to it are sound
  } catch {
    session.positions.set(cluster.name, UNKNOWN_POSITION) // the session reads from the primary
  }
}
