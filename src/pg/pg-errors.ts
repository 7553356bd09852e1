import type { ErrorClass } from '../router/driver.js'
import { NETWORK_ERROR_CODES } from '../util/network-error-codes.js'

/** SQLSTATEs that mean the server cannot serve this connection (not the statement's fault). */
const CONNECTION_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '53000', '3D000', '28000', '28P01'])

const CONNECTION_MESSAGES = [
  'Connection terminated',
  'connection timeout',
  'not queryable',
  'Client has already been connected',
  'server closed the connection',
  'Connection ended',
]

/**
 * Classifies an error raised by `pg`: connection-class (refused, reset, terminated, server shutting
 * down, SQLSTATE class 08), `timeout` (a `query_timeout` the application set passed: pg's
 * client-side timeout, which leaves the statement running, so the connection is closed),
 * `read-only` (SQLSTATE 25006: a write in a read-only transaction or on a standby), else
 * `statement` — including 57014 (a statement cancelled: `statement_timeout`, or routemate's cancel
 * request after `queryTimeoutMs`): the node is fine and so is the connection. Waiting for a slot
 * of a full pool is `statement` (the node is fine, the pool is busy).
 */
export function classifyPgError(err: unknown): ErrorClass {
  if (typeof err !== 'object' || err === null) return 'statement'
  const e = err as { code?: unknown; message?: unknown; errno?: unknown }
  const code = typeof e.code === 'string' ? e.code : undefined
  if (code !== undefined) {
    if (code === '25006') return 'read-only'
    if (code.startsWith('08') || CONNECTION_SQLSTATES.has(code) || NETWORK_ERROR_CODES.has(code))
      return 'connection'
  }
  const message = typeof e.message === 'string' ? e.message : ''
  if (message === 'Query read timeout') return 'timeout'
  if (message === 'timeout exceeded when trying to connect') return 'statement'
  for (const m of CONNECTION_MESSAGES) if (message.includes(m)) return 'connection'
  return 'statement'
}
