import type { QueryResult } from '../router/driver.js'

/** Where a {@link toQueryResult} keeps mysql2's own `[result, fields]` (non-enumerable), for the pool facade. */
const NATIVE = Symbol('routemate.mysql2.native')

/** mysql2's native resolution of a query: `[rows | ResultSetHeader | results[], fields]`. */
export type NativeResult = [result: unknown, fields: unknown]

/** The fields of a `ResultSetHeader` (the result of a statement without a result set). */
interface Header {
  affectedRows: number
  insertId?: number | bigint | string
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

/**
 * Turns mysql2's `[result, fields]` into routemate's uniform result:
 * - a result set (SELECT, SHOW...): `{ rows, rowCount: rows.length, fields }`;
 * - a statement without one (INSERT, UPDATE, DDL...: a `ResultSetHeader`): `{ rows: [], rowCount:
 *   affectedRows, insertId, affectedRows, changedRows, info, warningStatus }`;
 * - several results (`multipleStatements`, `CALL`): `{ rows: [...the results as mysql2 returns
 *   them], rowCount: null, fields }`.
 *
 * The native pair stays attached (non-enumerable) for the pool facade, which hands it back unchanged.
 *
 * @example
 * ```ts
 * toQueryResult({ affectedRows: 1, insertId: 7, changedRows: 0, info: '', warningStatus: 0 }, undefined)
 * // { rows: [], rowCount: 1, insertId: 7, affectedRows: 1, changedRows: 0, info: '', warningStatus: 0 }
 * ```
 */
export function toQueryResult(result: unknown, fields: unknown): QueryResult {
  let out: QueryResult
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
    out = isMulti(result, fields)
      ? { rows: result as Record<string, unknown>[], rowCount: null, fields }
      : { rows: result as Record<string, unknown>[], rowCount: result.length, fields }
  } else {
    out = { rows: [], rowCount: null, result, fields }
  }
  Object.defineProperty(out, NATIVE, { value: [result, fields] satisfies NativeResult })
  return out
}

/**
 * mysql2's own `[result, fields]` behind a result made by {@link toQueryResult}; for any other
 * result, `[rows, fields]` rebuilt from it.
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
