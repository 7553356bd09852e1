import type { FieldPacket } from 'mysql2/promise'
import type { QueryResult } from '../router/driver.js'

/**
 * What `router.query` and `tx.query` results carry beside `rows` and `rowCount` with the mysql2
 * driver (see {@link toQueryResult}): `fields` for a result set; `insertId`, `affectedRows`,
 * `changedRows`, `info`, `warningStatus` (mysql2's `ResultSetHeader`) for a statement without one.
 * Types as mysql2 declares them (`insertId` is a string with `supportBigNumbers` on big values;
 * `fields` of several result sets is mysql2's array of them).
 *
 * @example
 * ```ts
 * const r = await router.query('INSERT INTO users (name) VALUES (?)', ['ada'])
 * r.insertId     // number | undefined
 * r.affectedRows // number | undefined
 * ```
 */
export interface Mysql2ResultFields {
  /** Column definitions of a result set; absent for a statement without one. */
  fields?: FieldPacket[]
  /** `AUTO_INCREMENT` id of a write (`ResultSetHeader.insertId`). */
  insertId?: number
  /** Rows matched by a write (`ResultSetHeader.affectedRows`; `rowCount` has the same value). */
  affectedRows?: number
  /** Rows really changed by an `UPDATE` (`ResultSetHeader.changedRows`, deprecated by mysql2). */
  changedRows?: number
  /** The server's info string of a write (`ResultSetHeader.info`). */
  info?: string
  /** Warnings of a write (`ResultSetHeader.warningStatus`). */
  warningStatus?: number
}

/** Where a {@link toQueryResult} keeps mysql2's own `[result, fields]` (non-enumerable), for the pool facade. */
const NATIVE = Symbol('routemate.mysql2.native')

/** mysql2's native resolution of a query: `[rows | ResultSetHeader | results[], fields]`. */
export type NativeResult = [result: unknown, fields: unknown]

/** The fields of a `ResultSetHeader` (the result of a statement without a result set). */
interface Header {
  affectedRows: number
  /** A number as mysql2 types it (a string for big values with `supportBigNumbers`). */
  insertId?: number
  changedRows?: number
  info?: string
  warningStatus?: number
}

function isHeader(x: unknown): x is Header {
  return (
    typeof x === 'object' && x !== null && !Array.isArray(x) && typeof (x as Header).affectedRows === 'number'
  )
}

/** Several result sets (multiple statements, `CALL`): an array of row arrays and/or headers. */
function isMulti(result: unknown[], fields: unknown): boolean {
  if (Array.isArray(fields) && fields.some((f) => f === undefined || f === null || Array.isArray(f)))
    return true
  return result.some(isHeader)
}

/** A result set's routemate result, as a plain object would be made (see {@link ResultSet}). */
type ResultSetFields = QueryResult & Mysql2ResultFields

/**
 * Makes a result set's `{ rows, rowCount, fields }` with `new` instead of an object literal: V8 can
 * decide to allocate all objects of a literal site in the old generation (allocation-site
 * pretenuring, taken early in a process's life and kept). A pretenured result object keeps every
 * read's rows and column definitions alive through young-generation collections and promotes them
 * (measured: 3x the scavenge survivors and 4x the promoted bytes of raw mysql2, the bulk of the
 * router's extra CPU per read). `new` of a plain function has no allocation site. The prototype is
 * `Object.prototype`: the result is indistinguishable from a literal.
 */
const ResultSet = function (
  this: ResultSetFields,
  rows: Record<string, unknown>[],
  rowCount: number | null,
  fields: FieldPacket[] | undefined,
) {
  this.rows = rows
  this.rowCount = rowCount
  this.fields = fields
} as unknown as new (
  rows: Record<string, unknown>[],
  rowCount: number | null,
  fields: FieldPacket[] | undefined,
) => ResultSetFields
ResultSet.prototype = Object.prototype

/**
 * Turns mysql2's `[result, fields]` into routemate's uniform result:
 * - a result set (SELECT, SHOW...): `{ rows, rowCount: rows.length, fields }`;
 * - a statement without one (INSERT, UPDATE, DDL...: a `ResultSetHeader`): `{ rows: [], rowCount:
 *   affectedRows, insertId, affectedRows, changedRows, info, warningStatus }`;
 * - several results (`multipleStatements`, `CALL`): `{ rows: [...the results as mysql2 returns
 *   them], rowCount: null, fields }`.
 *
 * For a statement without a result set the native pair stays attached (non-enumerable) for the
 * pool facade, which hands it back unchanged; for result sets it is `[rows, fields]` of the result.
 *
 * @example
 * ```ts
 * toQueryResult({ affectedRows: 1, insertId: 7, changedRows: 0, info: '', warningStatus: 0 }, undefined)
 * // { rows: [], rowCount: 1, insertId: 7, affectedRows: 1, changedRows: 0, info: '', warningStatus: 0 }
 * ```
 */
export function toQueryResult(result: unknown, fields: unknown): QueryResult & Mysql2ResultFields {
  let out: QueryResult & Mysql2ResultFields
  if (isHeader(result)) {
    out = {
      rows: [],
      rowCount: result.affectedRows,
      insertId: result.insertId,
      affectedRows: result.affectedRows,
      changedRows: result.changedRows,
      info: result.info,
      warningStatus: result.warningStatus,
    }
  } else if (Array.isArray(result)) {
    // A result set (or several): the native pair is `[rows, fields]` of the result itself, which
    // `nativeResult` rebuilds, so nothing more is attached (a `defineProperty` per read costs a
    // runtime call and a map change).
    const rows = result as Record<string, unknown>[]
    return new ResultSet(
      rows,
      isMulti(result, fields) ? null : rows.length,
      fields as FieldPacket[] | undefined,
    )
  } else {
    out = { rows: [], rowCount: null, result, fields: fields as FieldPacket[] | undefined }
  }
  Object.defineProperty(out, NATIVE, { value: [result, fields] satisfies NativeResult })
  return out
}

/**
 * mysql2's own `[result, fields]` behind a result made by {@link toQueryResult}: the attached pair
 * of a statement without a result set; for a result set (and any other result), `[rows, fields]`
 * rebuilt from it — the very arrays mysql2 returned.
 *
 * @example
 * ```ts
 * const [rows, fields] = nativeResult(await router.query('SELECT 1 AS x'))
 * ```
 */
export function nativeResult(res: QueryResult): NativeResult {
  const native = (res as { [NATIVE]?: NativeResult })[NATIVE]
  return native ?? [res.rows, res.fields]
}
