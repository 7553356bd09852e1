import type { Session } from '../consistency/session.js'
import { UNKNOWN_POSITION } from '../consistency/token-codec.js'
import type { Cluster } from './cluster.js'
import type { QueryResult } from './driver.js'
import { acquireConnection, requirePrimary, statementFailed, type WriteDeps } from './router-core.js'
import type { RouterNode } from './router-node.js'
import { captureSettlers, type ResultMap, resolveMapped, settleFailure, settlers } from './run-job.js'
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
 * `map`: the result as a pool facade wants it (see `FacadeHost.queryAs`).
 */
export function runOnPrimary(
  core: WriteDeps,
  cluster: Cluster,
  scope: Scope | undefined,
  sql: Statement,
  params: readonly unknown[] | undefined,
  map?: ResultMap,
): Promise<QueryResult> {
  let node: RouterNode
  let session: Session | undefined
  try {
    node = requirePrimary(cluster)
    session =
      scope?.session !== undefined && !READ_KEYWORDS.has(leadingKeyword(textOf(sql)))
        ? scope.session
        : undefined
  } catch (err) {
    return Promise.reject(err)
  }
  if (session === undefined && node.seenHealthy) {
    // The hot path, not `async` (as `ReadPath.read`): one promise; a failure is mapped in a reaction
    // the caller's promise follows (so the error gets the caller's async stack).
    const promise = new Promise<QueryResult>(captureSettlers)
    const resolve = settlers.resolve
    node.runTo(
      sql,
      params,
      false,
      resolveMapped(resolve, map),
      (err: unknown) =>
        settleFailure(
          resolve,
          err,
          (e: unknown) => {
            throw statementFailed(core, cluster, node, e, false)
          },
          map,
        ),
      true,
    )
    return promise
  }
  const result = runOnOwnConnection(core, cluster, node, session, sql, params)
  return map === undefined ? result : (result.then(map) as Promise<QueryResult>)
}

/**
 * A session's write: remember it (and, in position mode, where the primary stood after it). Or
 * the first contact with a primary never reached yet: its checkout is separate, so that a failed
 * connect (nothing sent) is told apart as `PrimaryUnavailableError` (see `acquireConnection`).
 */
async function runOnOwnConnection(
  core: WriteDeps,
  cluster: Cluster,
  node: RouterNode,
  session: Session | undefined,
  sql: Statement,
  params: readonly unknown[] | undefined,
): Promise<QueryResult> {
  const conn = await acquireConnection(core, cluster, node, false, false)
  let destroy = false
  try {
    if (session !== undefined) startWrite(core, conn)
    const result = await node.runOn(conn, sql, params, true)
    if (session !== undefined) recordWrite(core, cluster, session, conn)
    return result
  } catch (err) {
    destroy = mustClose(core.driver, err)
    throw statementFailed(core, cluster, node, err, false)
  } finally {
    node.release(conn, destroy)
  }
}

/** Longest position a session keeps from its writes' replies before reading the primary's instead (a MySQL GTID set of many own transactions). */
const MAX_REPLY_POSITION_CHARS = 1024

/**
 * Before a session's write on `conn`: drops what the replies of an earlier checkout reported, so
 * that `recordWrite` sees only this write's (see `Driver.takeReplyPosition`).
 */
export function startWrite(core: WriteDeps, conn: unknown): void {
  if (core.config.readYourWrites.mode === 'position') core.driver.takeReplyPosition?.(conn)
}

/**
 * Records a session's write on `cluster` (read-your-writes bookkeeping), with no round trip: its
 * time, and in `position` mode where a replica must have got to serve the session's reads:
 * - the position the write's reply carried (MySQL/MariaDB session tracking: see
 *   `Driver.takeReplyPosition`), merged with the session's earlier one (per GTID domain);
 * - else (PostgreSQL; a server that sends none) only a stamp (`PrimaryPosition.stampWrite`): the
 *   session's position becomes `unknown` with a check that, when its first read (or read
 *   connection) needs it, takes the primary's position from a sample started after the write
 *   finished, shared with every session waiting meanwhile (`PrimaryPosition.afterWrite`). With
 *   `maxWaitMs: 0` that read does not wait for it (it goes to the primary; the check runs beside
 *   it, spaced); with a wait it does (the sample then starts at once). A sample that fails leaves
 *   `unknown`: the session then reads from the primary.
 * A write that produced no GTID (a reply without one, on a connection that reports them) still
 * takes the stamp path: correctness never rests on a missing report.
 */
export function recordWrite(core: WriteDeps, cluster: Cluster, session: Session, conn: unknown): void {
  session.lastWriteAt = Date.now()
  session.writes++
  const ryw = core.config.readYourWrites
  if (ryw.mode !== 'position') return
  const name = cluster.name
  const known = cluster.primaryPosition
  const reply = core.driver.takeReplyPosition?.(conn)
  if (reply !== undefined) {
    const prev = session.positions.get(name)
    let position: string | undefined
    if (prev === undefined) position = reply
    else if (prev !== UNKNOWN_POSITION && !session.hasCheck(name))
      position = core.driver.mergePositions?.(prev, reply)
    // (A position still unchecked, or unknown: a sample after this write covers it and this write.)
    if (position !== undefined && position.length <= MAX_REPLY_POSITION_CHARS) {
      session.positions.set(name, position)
      known.observe(reply) // the primary really reached it: tokens up to it are sound
      return
    }
  }
  const stamp = known.stampWrite()
  session.positions.set(name, UNKNOWN_POSITION)
  session.pendingWrites.set(name, stamp)
  session.addCheck(name, async () => {
    // With no wait allowed, no read waits for this (reads go to the primary meanwhile): the
    // sample keeps the spacing, so that a stream of writes costs the primary one small query per
    // spacing, not one per session. With a wait, the session's first read waits for it: at once.
    const position = await known.afterWrite(stamp, ryw.maxWaitMs > 0)
    // Not if a later write of the session took a newer stamp (its own check covers this write).
    if (session.pendingWrites.get(name) !== stamp) return
    session.pendingWrites.delete(name)
    session.positions.set(name, position ?? UNKNOWN_POSITION)
  })
}
