import type { ErrorClass } from '../router/driver.js'
import { classifyMysqlError } from '../mysql2/mysql2-errors.js'

/** `mariadb` connector codes of a connection that failed, closed or timed out at the socket. */
const CONNECTION_CODES = new Set([
  'ER_CONNECTION_ALREADY_CLOSED',
  'ER_CMD_NOT_EXECUTED_DESTROYED',
  'ER_SOCKET_UNEXPECTED_CLOSE',
  'ER_UNEXPECTED_PACKET',
  'ER_CONNECTION_TIMEOUT',
  'ER_CMD_CONNECTION_CLOSED',
  'ER_SOCKET',
  'ER_SOCKET_TIMEOUT',
  'ER_POOL_ALREADY_CLOSED',
  'ER_ADD_CONNECTION_CLOSED_POOL',
  'ER_CLOSING_POOL',
  'ER_PING_TIMEOUT',
  'ER_POOL_NOT_INITIALIZED',
  'ER_POOL_NO_CONNECTION',
])

/**
 * Classifies an error raised by the `mariadb` connector: its own client errors of a dead, closed
 * or timed-out connection (`ER_SOCKET_UNEXPECTED_CLOSE`, `ER_CONNECTION_TIMEOUT`,
 * `ER_CMD_CONNECTION_CLOSED`, `ER_SOCKET_TIMEOUT`...) are `connection`; server errors are
 * classified as for `mysql2` (see `classifyMysqlError`: read-only refusals 1290/1792/1836/1036 are
 * `read-only`, shutdown, too many connections and refused logins are `connection`, everything
 * else — `max_statement_time` 1969, `KILL QUERY` 1317, lock waits — `statement`). A login error
 * (no statement: the connector's `sql` is `null`) counts as one for the login errnos.
 *
 * @example
 * ```ts
 * classifyMariadbError({ code: 'ER_SOCKET_UNEXPECTED_CLOSE', errno: 45009, fatal: true }) // 'connection'
 * classifyMariadbError({ errno: 1792, code: 'ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION' }) // 'read-only'
 * ```
 */
export function classifyMariadbError(err: unknown): ErrorClass {
  if (typeof err !== 'object' || err === null) return 'statement'
  const e = err as { code?: unknown; sql?: unknown }
  if (typeof e.code === 'string' && CONNECTION_CODES.has(e.code)) return 'connection'
  if (e.sql === null)
    return classifyMysqlError({ ...(err as object), message: (err as Error).message, sql: undefined })
  return classifyMysqlError(err)
}
