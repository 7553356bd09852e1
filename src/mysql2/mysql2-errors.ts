import type { ErrorClass } from '../router/driver.js'
import { NETWORK_ERROR_CODES } from '../util/network-error-codes.js'

/**
 * Server errors that mean the node refused a write because it (or the transaction) is read-only:
 * 1290 ER_OPTION_PREVENTS_STATEMENT (only when about `--read-only` / `--super-read-only`: the same
 * number covers `--secure-file-priv` and others), 1792 ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION,
 * 1836 ER_READ_ONLY_MODE (`innodb_read_only`), 1036 ER_OPEN_AS_READONLY (a table opened read-only,
 * as under `innodb_read_only`). 1223 ER_CANT_UPDATE_WITH_READLOCK (FLUSH TABLES WITH READ LOCK) is
 * deliberately a `statement` error: a lock held for a backup, not a read-only node.
 */
const READ_ONLY_ERRNOS = new Set([1792, 1836, 1036])
const OPTION_PREVENTS_STATEMENT = 1290

/** Socket and mysql2 protocol error codes of a connection that failed or went away. */
const CONNECTION_CODES = new Set([
  ...NETWORK_ERROR_CODES,
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'PROTOCOL_ENQUEUE_AFTER_QUIT',
  'HANDSHAKE_NO_SSL_SUPPORT',
  'HANDSHAKE_SSL_ERROR',
  'HANDSHAKE_UNKNOWN_ERROR',
])

/**
 * Server errors (errno) that mean this node cannot serve us right now, whatever the statement:
 * shutting down, out of connections, refusing our login, or reporting a broken network.
 */
const CONNECTION_ERRNOS = new Set([
  1040, // ER_CON_COUNT_ERROR: too many connections
  1045, // ER_ACCESS_DENIED_ERROR: a node we cannot log into cannot serve
  1053, // ER_SERVER_SHUTDOWN
  1077, // ER_NORMAL_SHUTDOWN
  1079, // ER_SHUTDOWN_COMPLETE
  1080, // ER_FORCING_CLOSE
  1129, // ER_HOST_IS_BLOCKED
  1130, // ER_HOST_NOT_PRIVILEGED
  1152, // ER_ABORTING_CONNECTION
  1158, // ER_NET_READ_ERROR
  1159, // ER_NET_READ_INTERRUPTED
  1160, // ER_NET_ERROR_ON_WRITE
  1161, // ER_NET_WRITE_INTERRUPTED
  1184, // ER_NEW_ABORTING_CONNECTION
  1203, // ER_TOO_MANY_USER_CONNECTIONS
  1226, // ER_USER_LIMIT_REACHED
  1251, // ER_NOT_SUPPORTED_AUTH_MODE
  1862, // ER_MUST_CHANGE_PASSWORD_LOGIN
  1927, // ER_CONNECTION_KILLED (MariaDB)
  2002, // CR_CONNECTION_ERROR
  2003, // CR_CONN_HOST_ERROR
  2006, // CR_SERVER_GONE_ERROR
  2013, // CR_SERVER_LOST
  3032, // ER_SERVER_OFFLINE_MODE (MySQL offline_mode)
  4031, // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8.0.24+: idle connection closed by the server)
])

/** Errors that are a connection problem only when raised while logging in (no statement attached). */
const LOGIN_ERRNOS = new Set([
  1044, // ER_DBACCESS_DENIED_ERROR: no access to the URL's database
  1049, // ER_BAD_DB_ERROR: the URL's database does not exist (on this node)
])

/** mysql2 messages of a closed pool or connection. */
const CONNECTION_MESSAGES = [
  'Pool is closed',
  "Can't add new command when connection is in closed state",
  "Can't write in closed state",
  'Connection lost',
]

/**
 * Classifies an error raised by `mysql2` for the router:
 * - `read-only`: the server refused a write (errno 1290 about `--read-only`, 1792, 1836, 1036).
 * - `timeout`: mysql2's client-side query timeout (`PROTOCOL_SEQUENCE_TIMEOUT`, "Query inactivity
 *   timeout", from a statement's own mysql2 `timeout` option; routemate's `queryTimeoutMs` is
 *   enforced by the router with `KILL QUERY`, not by this): not a node failure; the connection is
 *   closed.
 * - `connection`: socket errors (refused, reset, timed out connecting...), a lost connection
 *   (`PROTOCOL_CONNECTION_LOST`), a closed pool or connection, any error mysql2 marks `fatal`,
 *   and server errors that mean the node cannot serve: shutdown (1053), too many connections
 *   (1040), login refused (1045, and 1044/1049 while logging in), network errors (1158–1161).
 * - `statement`: everything else, including server-side statement timeouts (MariaDB
 *   `max_statement_time` 1969, MySQL `max_execution_time` 3024), `KILL QUERY` (1317), lock waits,
 *   and a busy pool (`Queue limit reached`, `No connections available`): the node is fine.
 *
 * @example
 * ```ts
 * classifyMysqlError({ errno: 1290, code: 'ER_OPTION_PREVENTS_STATEMENT',
 *   message: 'The MariaDB server is running with the --read-only option ...' }) // 'read-only'
 * classifyMysqlError({ code: 'ECONNREFUSED', fatal: true }) // 'connection'
 * ```
 */
export function classifyMysqlError(err: unknown): ErrorClass {
  if (typeof err !== 'object' || err === null) return 'statement'
  const e = err as { code?: unknown; errno?: unknown; message?: unknown; fatal?: unknown; sql?: unknown }
  const code = typeof e.code === 'string' ? e.code : undefined
  const errno = typeof e.errno === 'number' ? e.errno : undefined
  const message = typeof e.message === 'string' ? e.message : ''
  if (errno !== undefined) {
    if (READ_ONLY_ERRNOS.has(errno)) return 'read-only'
    if (errno === OPTION_PREVENTS_STATEMENT && /read[-_ ]only/i.test(message)) return 'read-only'
  }
  if (code === 'PROTOCOL_SEQUENCE_TIMEOUT') return 'timeout'
  if (code !== undefined && CONNECTION_CODES.has(code)) return 'connection'
  if (errno !== undefined) {
    if (CONNECTION_ERRNOS.has(errno)) return 'connection'
    if (LOGIN_ERRNOS.has(errno) && e.sql === undefined) return 'connection'
  }
  if (e.fatal === true) return 'connection'
  for (const m of CONNECTION_MESSAGES) if (message.includes(m)) return 'connection'
  return 'statement'
}

/**
 * Whether a server error says the user lacks a privilege (errno 1227 ER_SPECIFIC_ACCESS_DENIED_ERROR,
 * 1142/1143 table/column access denied): used by the probe to skip replication status it may not read.
 *
 * @example
 * ```ts
 * isPrivilegeError({ errno: 1227 }) // true
 * ```
 */
export function isPrivilegeError(err: unknown): boolean {
  const errno = (err as { errno?: unknown } | null)?.errno
  return errno === 1227 || errno === 1142 || errno === 1143
}

/**
 * Whether a server error is a syntax error (errno 1064 ER_PARSE_ERROR), e.g. `SHOW REPLICA STATUS`
 * on a server too old to know it.
 *
 * @example
 * ```ts
 * isSyntaxError({ errno: 1064 }) // true
 * ```
 */
export function isSyntaxError(err: unknown): boolean {
  return (err as { errno?: unknown } | null)?.errno === 1064
}

/**
 * Whether a server error says a system variable does not exist (errno 1193 ER_UNKNOWN_SYSTEM_VARIABLE),
 * e.g. `@@innodb_read_only` on a server built without InnoDB.
 *
 * @example
 * ```ts
 * isUnknownVariableError({ errno: 1193 }) // true
 * ```
 */
export function isUnknownVariableError(err: unknown): boolean {
  return (err as { errno?: unknown } | null)?.errno === 1193
}
