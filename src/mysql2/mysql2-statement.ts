import type { QueryOptions } from 'mysql2/promise'

/** Marks a statement object that the driver must run as a prepared statement (`execute`). */
const PREPARED = Symbol('routemate.mysql2.prepared')

/**
 * The SQL text of a statement: the string itself, or the object's `sql` (or `text`); `''` when it
 * has none.
 *
 * @example
 * ```ts
 * sqlOf({ sql: 'SELECT 1', rowsAsArray: true }) // 'SELECT 1'
 * ```
 */
export function sqlOf(stmt: unknown): string {
  if (typeof stmt === 'string') return stmt
  if (typeof stmt === 'object' && stmt !== null) {
    const s = (stmt as { sql?: unknown; text?: unknown }).sql ?? (stmt as { text?: unknown }).text
    if (typeof s === 'string') return s
  }
  return ''
}

/**
 * Builds fresh mysql2 query options from a statement (never mutating the caller's object): its SQL
 * (or `sql` to replace it), `values` (used when given, else the statement's own), and the node's
 * query timeout unless the statement sets its own `timeout`.
 *
 * @example
 * ```ts
 * queryOptions('SELECT ?', [1], 5000) // { sql: 'SELECT ?', values: [1], timeout: 5000 }
 * ```
 */
export function queryOptions(stmt: unknown, values: unknown, timeoutMs: number, sql?: string): QueryOptions {
  const base = typeof stmt === 'object' && stmt !== null ? { ...(stmt as Record<string, unknown>) } : {}
  const out = base as Record<string, unknown>
  out.sql = sql ?? sqlOf(stmt)
  if ('text' in out && !('sql' in (stmt as object))) delete out.text
  if (values !== undefined) out.values = values
  if (out.timeout === undefined && timeoutMs > 0) out.timeout = timeoutMs
  return out as unknown as QueryOptions
}

/**
 * Marks a statement to run as a prepared statement (mysql2 `execute`) when routed through the
 * router; the pool facade's `pool.execute` uses it.
 *
 * @example
 * ```ts
 * await host.query(asPrepared({ sql: 'SELECT ?', values: [1] }))
 * ```
 */
export function asPrepared<T extends object>(options: T): T {
  return Object.defineProperty({ ...options }, PREPARED, { value: true }) as T
}

/**
 * Whether a facade statement is plain text with an array of values or none: mysql2's common call,
 * which then goes to mysql2 in its text form (`query(sql, values, cb)`), not as a query options
 * object. mysql2 3.x copies an options object with two spreads, which on Node 20 takes ~3 µs of
 * client CPU per statement against ~0.1 µs for the text form (bench/README §4).
 *
 * @example
 * ```ts
 * isPlainText('SELECT ?', [1]) // true
 * isPlainText({ sql: 'SELECT ?', rowsAsArray: true }, [1]) // false
 * ```
 */
export function isPlainText(sql: unknown, values: unknown): sql is string {
  return typeof sql === 'string' && (values === undefined || Array.isArray(values))
}

/**
 * A prepared statement that is only its text (the pool facade's `execute(sql, values)` with an
 * array of values or none, its common case): the driver runs it with mysql2's
 * `execute(sql, values, cb)` as it comes, and its values travel as the statement's parameters: no
 * query options object for mysql2 to copy (see {@link isPlainText}).
 *
 * @example
 * ```ts
 * await host.queryAs(new PreparedText('SELECT ? AS x'), [1], nativeResult)
 * ```
 */
export class PreparedText {
  /** The statement's SQL text. */
  readonly sql: string

  constructor(sql: string) {
    this.sql = sql
  }
}

/**
 * Whether a statement runs as a prepared one: marked by {@link asPrepared}, or a
 * {@link PreparedText}.
 *
 * @example
 * ```ts
 * isPrepared(asPrepared({ sql: 'SELECT 1' })) // true
 * isPrepared(new PreparedText('SELECT 1')) // true
 * ```
 */
export function isPrepared(stmt: unknown): boolean {
  if (stmt instanceof PreparedText) return true
  return typeof stmt === 'object' && stmt !== null && (stmt as { [PREPARED]?: unknown })[PREPARED] === true
}
