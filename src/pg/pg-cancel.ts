import { connect as netConnect } from 'node:net'
import type pg from 'pg'

/** The CancelRequest code of the PostgreSQL protocol (1234 << 16 | 5678). */
const CANCEL_REQUEST_CODE = 80877102

/** What a connected `pg.Client` knows of its server session (pg sets these from BackendKeyData). */
interface ClientSession {
  readonly processID?: unknown
  readonly secretKey?: unknown
  readonly host?: unknown
  readonly port?: unknown
}

/**
 * Cancels the statement running on `client`: a PostgreSQL CancelRequest (16 bytes: length, code,
 * the connection's backend pid and secret key, from its BackendKeyData) sent on a new socket to
 * the client's host and port (a Unix socket when the host is a directory), the way libpq's
 * `PQcancel` does. The server handles it and closes the socket; from then on, the cancel signal is
 * with the backend: its statement fails with 57014 (`canceling statement due to user request`),
 * or, if it already finished, the signal is dropped when idle — so it cannot hit a later
 * statement. Resolves `true` once the server closed the socket after the request was written,
 * `false` when it could not be delivered (refused, reset, no backend key, `signal` aborted: the
 * core aborts it after `connectTimeoutMs`). Never rejects.
 *
 * Caveat: like libpq before PostgreSQL 17, the request is sent unencrypted (it carries no
 * credentials; the server never authenticates a cancel request).
 *
 * @example
 * ```ts
 * const accepted = await cancelPgQuery(client, AbortSignal.timeout(5000))
 * ```
 */
export function cancelPgQuery(client: pg.Client, signal: AbortSignal): Promise<boolean> {
  const c = client as unknown as ClientSession
  const { processID, secretKey, host, port } = c
  if (typeof processID !== 'number' || typeof secretKey !== 'number' || typeof port !== 'number')
    return Promise.resolve(false)
  return sendCancelRequest(
    { pid: processID, secret: secretKey, host: typeof host === 'string' ? host : '', port },
    signal,
  )
}

/** The server session a cancel request is for: its backend key, and the server's host (or Unix socket directory) and port. */
export interface CancelTarget {
  readonly pid: number
  /** The secret key (signed or unsigned 32-bit: sent as its 4 bytes). */
  readonly secret: number
  readonly host: string
  readonly port: number
}

/**
 * Sends a PostgreSQL CancelRequest for `target` on a new socket, as {@link cancelPgQuery} (which
 * it implements) describes. Resolves `true` once the server closed the socket after the request was
 * written, `false` when it could not be delivered. Never rejects.
 */
export function sendCancelRequest(target: CancelTarget, signal: AbortSignal): Promise<boolean> {
  const { pid: processID, host, port } = target
  const secretKey = target.secret | 0
  if (signal.aborted) return Promise.resolve(false)
  return new Promise<boolean>((resolve) => {
    const h = host !== '' ? host : 'localhost'
    const socket = h.startsWith('/') ? netConnect(`${h}/.s.PGSQL.${port}`) : netConnect(port, h)
    let sent = false
    let done = false
    const finish = (ok: boolean): void => {
      if (done) return
      done = true
      signal.removeEventListener('abort', abort)
      socket.destroy()
      resolve(ok)
    }
    const abort = (): void => finish(false)
    signal.addEventListener('abort', abort, { once: true })
    socket.once('connect', () => {
      const request = Buffer.allocUnsafe(16)
      request.writeInt32BE(16, 0)
      request.writeInt32BE(CANCEL_REQUEST_CODE, 4)
      request.writeInt32BE(processID | 0, 8)
      request.writeInt32BE(secretKey, 12)
      socket.write(request, (err) => {
        if (err == null) sent = true
        else finish(false)
      })
    })
    socket.on('data', () => {}) // the server sends nothing back; never let it pile up
    socket.once('end', () => finish(sent))
    socket.once('close', () => finish(sent))
    socket.once('error', () => finish(false))
  })
}
