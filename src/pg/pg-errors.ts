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
 * down, SQLSTATE class 08), `timeout` (`query_timeout` passed), `read-only` (SQLSTATE 25006: a
 * write in a read-only transaction or on a standby), else `statement`. Waiting for a slot of a full
 * pool is `statement` (the node is fine, the pool is busy).
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
