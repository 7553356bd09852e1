import net from 'node:net'

/** Ports handed out by this process, so two calls never return the same port. */
const handedOut = new Set<number>()

/** Ports never returned: the well-known PostgreSQL and MySQL ports, which a system server may want. */
const AVOIDED = new Set([5432, 3306])

function probe(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.once('error', reject)
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/**
 * Finds a TCP port that is free on the loopback interface, by binding port 0 on `127.0.0.1` and
 * closing the socket again.
 *
 * Never returns 5432 or 3306, nor a port it already returned in this process. The port is only free
 * at the moment of the call: another process may take it before the caller binds it.
 *
 * @example
 * ```ts
 * const port = await freePort() // e.g. 40123
 * ```
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await probe(host)
    if (port > 0 && !AVOIDED.has(port) && !handedOut.has(port)) {
      handedOut.add(port)
      return port
    }
  }
  throw new Error(`could not find a free TCP port on ${host} after 50 attempts`)
}

/**
 * Resolves `true` when a TCP connect to `host:port` is refused (nothing listens), `false` when it
 * succeeds or does not answer within `timeoutMs` (default 1000).
 *
 * @example
 * ```ts
 * await isPortClosed(40123) // true once the server on that port is gone
 * ```
 */
export function isPortClosed(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port })
    const done = (closed: boolean): void => {
      clearTimeout(timer)
      socket.destroy()
      resolve(closed)
    }
    const timer = setTimeout(() => done(false), timeoutMs)
    socket.once('connect', () => done(false))
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code === 'ECONNREFUSED'))
  })
}
