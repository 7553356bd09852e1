/**
 * Node.js socket error codes of a connection that could not be opened, failed or went away — the
 * part of every driver's error classification that is not the database's own (SQLSTATE, errno).
 *
 * @example
 * ```ts
 * NETWORK_ERROR_CODES.has((err as { code?: string }).code ?? '') // a connection-class error
 * ```
 */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ERR_SOCKET_CLOSED',
  'ERR_STREAM_DESTROYED',
])
