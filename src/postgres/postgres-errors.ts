import type { ErrorClass } from '../router/driver.js'
import { NETWORK_ERROR_CODES } from '../util/network-error-codes.js'

/** SQLSTATEs that mean the server cannot serve this connection (not the statement's fault). */
const CONNECTION_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '53000', '3D000', '28000', '28P01'])

/** postgres.js's own codes for a connection that closed, failed or timed out connecting. */
const CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
  'ROUTEMATE_CONNECTION_LOST',
])

/**
 * Classifies an error raised by postgres.js: connection-class (refused, reset, closed or
 * destroyed, connect timeout, server shutting down, SQLSTATE class 08, authentication),
 * `read-only` (SQLSTATE 25006: a write in a read-only transaction or on a standby), else
 * `statement` — including 57014 (a statement cancelled: `statement_timeout`, or routemate's cancel
 * request after `queryTimeoutMs`): the node and the connection are fine.
 *
 * @example
 * ```ts
 * classifyPostgresError(Object.assign(new Error('write CONNECTION_CLOSED db:5432'), { code: 'CONNECTION_CLOSED' })) // 'connection'
 * ```
 */
export function classifyPostgresError(err: unknown): ErrorClass {
  if (typeof err !== 'object' || err === null) return 'statement'
  const code = (err as { code?: unknown }).code
  if (typeof code !== 'string') return 'statement'
  if (code === '25006') return 'read-only'
  if (
    code.startsWith('08') ||
    CONNECTION_SQLSTATES.has(code) ||
    CONNECTION_CODES.has(code) ||
    NETWORK_ERROR_CODES.has(code)
  )
    return 'connection'
  return 'statement'
}

/** The error of a statement sent on a connection that already closed. */
export function connectionLost(): Error {
  return Object.assign(new Error('the connection was closed'), {
    code: 'ROUTEMATE_CONNECTION_LOST',
  })
}
