import type { QueryResult } from '../router/driver.js'

/**
 * What `router.query` and `tx.query` results carry beside `rows` and `rowCount` with the `mariadb`
 * driver: `meta` (column metadata) for a result set; `insertId` (a `bigint`, as the connector gives
 * it unless `insertIdAsNumber`), `affectedRows` and `warningStatus` for a statement without one.
 *
 * @example
 * ```ts
 * const r = await router.query('INSERT INTO users (name) VALUES (?)', ['ada'])
 * r.insertId     // 7n
 * r.affectedRows // 1
 * ```
 */
export interface MariadbResultFields {
  /** Column metadata of a result set (the connector's `meta`). */
  meta?: unknown[]
  /** `AUTO_INCREMENT` id of a write. */
  insertId?: bigint | number
  /** Rows affected by a write (`rowCount` has the same value). */
  affectedRows?: number
  /** Warnings of a write. */
  warningStatus?: number
}

/** Where {@link toMariadbResult} keeps the connector's own result (non-enumerable), for the pool facade. */
const NATIVE = Symbol('routemate.mariadb.native')

interface Upsert {
  affectedRows: number
  insertId?: bigint | number
  warningStatus?: number
}

function isUpsert(x: unknown): x is Upsert {
  return (
    typeof x === 'object' && x !== null && !Array.isArray(x) && typeof (x as Upsert).affectedRows === 'number'
  )
}

/**
 * Turns the connector's result into routemate's uniform result: rows of a result set
 * (`{ rows, rowCount: rows.length, meta }`), an OK packet (`{ rows: [], rowCount: affectedRows,
 * insertId, affectedRows, warningStatus }`), or several results (`{ rows: results, rowCount: null }`).
 * The native result stays attached (non-enumerable) for the pool facade.
 *
 * @example
 * ```ts
 * toMariadbResult({ affectedRows: 1, insertId: 7n, warningStatus: 0 })
 * // { rows: [], rowCount: 1, insertId: 7n, affectedRows: 1, warningStatus: 0 }
 * ```
 */
export function toMariadbResult(result: unknown): QueryResult & MariadbResultFields {
  let out: QueryResult & MariadbResultFields
  if (isUpsert(result)) {
    out = {
      rows: [],
      rowCount: result.affectedRows,
      insertId: result.insertId,
      affectedRows: result.affectedRows,
      warningStatus: result.warningStatus,
    }
  } else if (Array.isArray(result)) {
    const meta = (result as { meta?: unknown[] }).meta
    const multi = meta === undefined && result.some((r) => Array.isArray(r) || isUpsert(r))
    out = multi
      ? { rows: result as Record<string, unknown>[], rowCount: null }
      : { rows: result as Record<string, unknown>[], rowCount: result.length, meta }
  } else {
    out = { rows: [], rowCount: null, result }
  }
  Object.defineProperty(out, NATIVE, { value: result })
  return out
}

/**
 * The connector's own result behind a result made by {@link toMariadbResult} (its rows otherwise).
 *
 * @example
 * ```ts
 * const rows = nativeMariadbResult(await host.query('SELECT 1 AS x')) // [{ x: 1 }] with .meta
 * ```
 */
export function nativeMariadbResult(res: QueryResult): unknown {
  const native = (res as { [NATIVE]?: unknown })[NATIVE]
  return native !== undefined || NATIVE in res ? native : res.rows
}
