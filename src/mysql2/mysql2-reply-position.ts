import { mergeGtidPositions } from './gtid.js'

/**
 * Read-your-writes positions that come with a write's reply, at no extra round trip: the server
 * reports the GTID of the connection's own transaction in the OK packet (session-state tracking),
 * and mysql2 parses it into the `ResultSetHeader`'s `stateChanges`:
 * - MariaDB: `session_track_system_variables` including `last_gtid` gives `systemVariables.last_gtid`
 *   (`0-1-42`: one GTID, of the domain the transaction was logged in);
 * - MySQL (5.7+): `session_track_gtids = OWN_GTID` gives `gtids` (`uuid:42`).
 * The driver turns tracking on for each connection of a writable pool as the connection opens
 * (see {@link sessionTrackingSql}); what a reply carries is gathered per connection, merged per
 * domain / as a GTID set, until the router takes it ({@link takeReplyPosition}).
 */

/**
 * What the replies of each core connection reported since the last take: the GTID texts as they
 * came (merged only when taken, so writes nobody takes cost no parsing), or `null` once more than
 * {@link MAX_GATHERED} came (then nothing usable: the router reads the position instead).
 */
const gathered = new WeakMap<object, string[] | null>()

/** Most GTID reports kept per connection between two takes (a session's write usually brings one). */
const MAX_GATHERED = 16

/** mysql2's parsed session-state changes of an OK packet (the parts used here). */
interface StateChanges {
  readonly systemVariables?: Readonly<Record<string, string | undefined>>
  readonly gtids?: readonly string[]
}

function gather(core: object, changes: StateChanges): void {
  const lastGtid = changes.systemVariables?.last_gtid
  const own = changes.gtids !== undefined && changes.gtids.length > 0 ? changes.gtids.join(',') : undefined
  for (const position of [lastGtid, own]) {
    if (position === undefined || position.trim() === '') continue
    const list = gathered.get(core)
    if (list === null) return
    if (list === undefined) gathered.set(core, [position])
    else if (list.length >= MAX_GATHERED) gathered.set(core, null)
    else list.push(position)
  }
}

/**
 * Notes the GTIDs a statement's reply reported on `core` (the connection under a pooled one): a
 * `ResultSetHeader`'s `stateChanges`, or those of each header of several results (multiple
 * statements, `CALL`). Costs one property read for a result set.
 *
 * @example
 * ```ts
 * core.query(sql, (err, result, fields) => { if (!err) noteReply(core, result, fields) })
 * ```
 */
export function noteReply(core: object, result: unknown, fields: unknown): void {
  if (typeof result !== 'object' || result === null) return
  const changes = (result as { stateChanges?: StateChanges | null }).stateChanges
  if (changes !== undefined && changes !== null) {
    gather(core, changes)
    return
  }
  // Several results: mysql2's fields are then one entry per result (an array, or undefined for a header).
  if (!Array.isArray(result) || !Array.isArray(fields) || fields.length === 0) return
  const first = fields[0]
  if (first !== undefined && first !== null && !Array.isArray(first)) return // one result set
  for (const r of result) {
    const c = (r as { stateChanges?: StateChanges | null } | null)?.stateChanges
    if (c !== undefined && c !== null) gather(core, c)
  }
}

/**
 * The merged position of the GTIDs the replies on `core` reported since the last call, and starts
 * a new gathering; `undefined` when none did (no GTID written, or no tracking).
 *
 * @example
 * ```ts
 * takeReplyPosition(core) // discard what an earlier checkout left
 * await run(write)
 * takeReplyPosition(core) // '0-1-42'
 * ```
 */
export function takeReplyPosition(core: object): string | undefined {
  const list = gathered.get(core)
  if (list === undefined) return undefined
  gathered.delete(core)
  if (list === null) return undefined
  let position: string | undefined = list[0]
  for (let i = 1; i < list.length && position !== undefined; i++)
    position = mergeGtidPositions(position, list[i] as string)
  return position
}

/**
 * The statement that turns on GTID session tracking for a server, from its handshake version:
 * MariaDB adds `last_gtid` to `session_track_system_variables` (keeping what is tracked already),
 * MySQL sets `session_track_gtids = OWN_GTID`. `undefined` for an unknown version.
 *
 * @example
 * ```ts
 * sessionTrackingSql('10.11.6-MariaDB-0+deb12u1') // "SET SESSION session_track_system_variables = ..."
 * ```
 */
export function sessionTrackingSql(serverVersion: string | undefined): string | undefined {
  if (typeof serverVersion !== 'string' || serverVersion === '') return undefined
  if (/mariadb/i.test(serverVersion)) {
    const v = '@@SESSION.session_track_system_variables'
    return `SET SESSION session_track_system_variables = IF(${v} = '*' OR FIND_IN_SET('last_gtid', ${v}), ${v}, CONCAT_WS(',', NULLIF(${v}, ''), 'last_gtid'))`
  }
  return 'SET SESSION session_track_gtids = OWN_GTID'
}
