/**
 * Read-your-writes decisions for a session's reads in `position` mode: which replica has (or may
 * soon have) replayed the session's position, and the wait for one to reach it. Pure decisions
 * over a narrow view of nodes and of the driver, so that the router's read path only runs what is
 * decided here (no import of router internals).
 */

/** What a catch-up decision needs of a replica (a `RouterNode` implements it). */
export interface PositionedNode {
  /** Last replication position known (from probes, or checked on a connection); undefined until known. */
  readonly position: string | undefined
  /** Replication lag in ms, undefined until measured. */
  readonly lagMs: number | undefined
}

/** What a catch-up decision needs of the driver (a `Driver` implements it). */
export interface PositionDriver<Conn = unknown> {
  /** Whether replay position `replay` has reached `target`. */
  positionReached(replay: string, target: string): boolean
  /** Waits up to `timeoutMs` for the server on `conn` to replay `target`; returns its replay position. */
  waitForPosition(conn: Conn, target: string, timeoutMs: number): Promise<string | undefined>
}

/** The part of {@link PositionDriver} that compares positions. */
export type PositionOrder = Pick<PositionDriver, 'positionReached'>

/** Whether `node`'s last known replay position has reached `token`. */
export function hasReplayed(driver: PositionOrder, node: PositionedNode, token: string): boolean {
  return node.position !== undefined && driver.positionReached(node.position, token)
}

/** The first of `candidates` (other than `except`) known to have replayed `token`. */
export function caughtUpReplica<N extends PositionedNode>(
  driver: PositionOrder,
  candidates: readonly N[],
  token: string,
  except?: N,
): N | undefined {
  for (const n of candidates) if (n !== except && hasReplayed(driver, n, token)) return n
  return undefined
}

/**
 * Where a session's read at `token` goes, among `candidates` (`picked`: the balancer's choice
 * among them): `{ node, known: true }` for a replica known to have replayed it (`picked` first);
 * else `{ node, known: false }` for the replica least behind (by lag; `picked` on a tie), whose
 * connection must be checked with {@link waitForCatchUp} before the read runs there.
 */
export function chooseCatchUp<N extends PositionedNode>(
  driver: PositionOrder,
  candidates: readonly N[],
  picked: N,
  token: string,
): { node: N; known: boolean } {
  if (hasReplayed(driver, picked, token)) return { node: picked, known: true }
  const known = caughtUpReplica(driver, candidates, token)
  if (known !== undefined) return { node: known, known: true }
  let best = picked
  for (const n of candidates)
    if ((n.lagMs ?? Number.POSITIVE_INFINITY) < (best.lagMs ?? Number.POSITIVE_INFINITY)) best = n
  return { node: best, known: false }
}

/**
 * Waits (up to `maxWaitMs`) for the server on `conn` to replay `token`: returns its replay
 * position if it got there, else `undefined` (not in time; or a statement error, meaning the
 * token is no position this server understands — a tampered or foreign token — so the read goes
 * to the primary). Errors for which `nodeFailure` is true (the connection or node failed) are
 * thrown.
 */
export async function waitForCatchUp<Conn>(
  driver: PositionDriver<Conn>,
  conn: Conn,
  token: string,
  maxWaitMs: number,
  nodeFailure: (err: unknown) => boolean,
): Promise<string | undefined> {
  let replay: string | undefined
  try {
    replay = await driver.waitForPosition(conn, token, maxWaitMs)
  } catch (err) {
    if (nodeFailure(err)) throw err
    return undefined
  }
  return replay !== undefined && driver.positionReached(replay, token) ? replay : undefined
}
