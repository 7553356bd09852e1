import net from 'node:net'
import { pollUntil } from './poll.js'

/** Ports handed out by this process, so two calls never return the same port. */
const handedOut = new Set<number>()

/** Ports never returned: the well-known PostgreSQL and MySQL ports, which a system server may want. */
const AVOIDED = new Set([5432, 3306])

function listen(server: net.Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject)
      resolve()
    })
  })
}

function close(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()))
}

/**
 * Finds `count` distinct TCP ports that are free on `host` (default `127.0.0.1`): binds port 0 that
 * many times, all sockets open at once, reads the ports and closes the sockets again.
 *
 * Never returns 5432 or 3306, nor a port it already returned in this process. A port is only free
 * at the moment of the call: another process may take it before the caller binds it (rare enough
 * for tests; a server that then fails to start says so in its log).
 *
 * @example
 * ```ts
 * const [primary, replica1] = await freePorts(2) // e.g. [40123, 40125]
 * ```
 */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers: net.Server[] = []
  const ports: number[] = []
  try {
    for (let attempt = 0; ports.length < count; attempt++) {
      if (attempt >= count + 50) {
        throw new Error(`could not find ${count} free TCP ports on ${host} after ${attempt} attempts`)
      }
      const server = net.createServer()
      server.unref()
      servers.push(server)
      await listen(server, host, 0)
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      // A rejected port stays bound until the end, so the next bind cannot return it again.
      if (port > 0 && !AVOIDED.has(port) && !handedOut.has(port)) ports.push(port)
    }
  } finally {
    await Promise.all(servers.map(close))
  }
  for (const port of ports) handedOut.add(port)
  return ports
}

/**
 * Why `port` cannot be listened on at `host` (default `127.0.0.1`) right now -- `'in use'`,
 * `'not permitted'` or the error code -- or `undefined` when it is free (checked by binding it and
 * closing the socket again).
 *
 * @example
 * ```ts
 * await portProblem(5432) // 'in use' when a PostgreSQL server listens there
 * ```
 */
export async function portProblem(port: number, host = '127.0.0.1'): Promise<string | undefined> {
  const server = net.createServer()
  server.unref()
  try {
    await listen(server, host, port)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EADDRINUSE') return 'in use'
    if (code === 'EACCES') return 'not permitted'
    return code ?? String(err)
  }
  await close(server)
  return undefined
}

/**
 * Resolves `true` when a TCP connect to `host:port` is refused (nothing listens), `false` when it
 * succeeds or does not answer within `timeoutMs` (default 1000): a SIGSTOPped server still has its
 * connections accepted by the kernel, so it is not "closed".
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

/**
 * Waits until `127.0.0.1:port` refuses connections (see {@link isPortClosed}); resolves `false`
 * when it still does not after `timeoutMs`.
 *
 * @example
 * ```ts
 * await waitForPortClosed(40123, 5000)
 * ```
 */
export async function waitForPortClosed(port: number, timeoutMs: number): Promise<boolean> {
  const closed = await pollUntil(
    async () => ((await isPortClosed(port, '127.0.0.1', 500)) ? true : undefined),
    {
      timeoutMs,
      intervalMs: 20,
    },
  )
  return closed === true
}
