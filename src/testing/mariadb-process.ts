import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { connect, createServer, type Server } from 'node:net'

/**
 * Resolves after `ms` milliseconds.
 *
 * @example
 * ```ts
 * await sleep(50)
 * ```
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * Reserves `count` distinct free TCP ports on 127.0.0.1 (binds port 0, reads the port, closes).
 * Caveat: another process may grab a port between this call and the server's start; rare enough
 * for tests.
 *
 * @example
 * ```ts
 * const [p1, p2] = await freeLoopbackPorts(2)
 * ```
 */
export async function freeLoopbackPorts(count: number): Promise<number[]> {
  const servers: Server[] = []
  try {
    const ports: number[] = []
    for (let i = 0; i < count; i++) {
      const server = createServer()
      servers.push(server)
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(0, '127.0.0.1', () => resolve())
      })
      const address = server.address()
      if (address === null || typeof address === 'string') throw new Error('no TCP address')
      ports.push(address.port)
    }
    return ports
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))))
  }
}

/**
 * The state letter of `/proc/<pid>/status` (`R`, `S`, `T` (stopped), `Z` (zombie), ...), or
 * `undefined` when the process is gone. Linux only.
 *
 * @example
 * ```ts
 * if (processState(pid) === 'Z') console.log('dead, not yet reaped')
 * ```
 */
export function processState(pid: number): string | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    return /^State:\s+(\S)/m.exec(status)?.[1]
  } catch {
    return undefined
  }
}

/**
 * Whether `pid` is a live process: it exists and is not a zombie (a stopped one counts as alive).
 *
 * @example
 * ```ts
 * isProcessAlive(process.pid) // true
 * ```
 */
export function isProcessAlive(pid: number): boolean {
  const state = processState(pid)
  return state !== undefined && state !== 'Z' && state !== 'X'
}

/**
 * Waits until `pid` is gone or a zombie (after `kill -9` a process can stay a zombie until its
 * parent reaps it). Returns `false` if it is still alive after `timeoutMs`.
 *
 * @example
 * ```ts
 * process.kill(pid, 'SIGKILL'); await waitForProcessGone(pid, 5000)
 * ```
 */
export async function waitForProcessGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (isProcessAlive(pid)) {
    if (Date.now() > deadline) return false
    await sleep(10)
  }
  return true
}

/**
 * Whether a TCP connection to 127.0.0.1:`port` is accepted. A stopped (SIGSTOP) server still
 * accepts (the kernel completes the handshake), so this tells "port open", not "server healthy".
 *
 * @example
 * ```ts
 * await isPortOpen(3307, 500) // false: connection refused
 * ```
 */
export function isPortOpen(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    const done = (open: boolean): void => {
      socket.destroy()
      resolve(open)
    }
    socket.setTimeout(timeoutMs, () => done(true))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

/**
 * Waits until 127.0.0.1:`port` refuses connections. Returns `false` on timeout.
 *
 * @example
 * ```ts
 * await waitForPortClosed(3307, 5000)
 * ```
 */
export async function waitForPortClosed(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (await isPortOpen(port, 200)) {
    if (Date.now() > deadline) return false
    await sleep(20)
  }
  return true
}

/**
 * The last `lines` lines of a text file (reads at most its last 64 KiB); `''` if it cannot be read.
 *
 * @example
 * ```ts
 * console.log(await tailFile('/tmp/x/error.log', 20))
 * ```
 */
export async function tailFile(file: string, lines: number): Promise<string> {
  try {
    const handle = await open(file, 'r')
    try {
      const { size } = await handle.stat()
      const length = Math.min(size, 65_536)
      const buffer = Buffer.alloc(length)
      await handle.read(buffer, 0, length, size - length)
      return buffer.toString('utf8').trimEnd().split('\n').slice(-lines).join('\n')
    } finally {
      await handle.close()
    }
  } catch {
    return ''
  }
}

/** An OS account, as read from `/etc/passwd`. */
export interface OsAccount {
  readonly name: string
  readonly uid: number
  readonly gid: number
}

/**
 * Returns the OS account `name`, creating it first (`useradd --system`) when it is missing.
 * Only meaningful as root; Linux only. Throws when the account cannot be created.
 *
 * @example
 * ```ts
 * const { uid, gid } = ensureOsAccount('mysql')
 * ```
 */
export function ensureOsAccount(name: string): OsAccount {
  const found = readAccount(name)
  if (found) return found
  const result = spawnSync(
    'useradd',
    ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', name],
    { encoding: 'utf8' },
  )
  const created = readAccount(name)
  if (!created) {
    throw new Error(`cannot create the OS user '${name}' with useradd: ${result.stderr || result.error}`)
  }
  return created
}

function readAccount(name: string): OsAccount | undefined {
  let passwd: string
  try {
    passwd = readFileSync('/etc/passwd', 'utf8')
  } catch {
    return undefined
  }
  for (const line of passwd.split('\n')) {
    const [user, , uid, gid] = line.split(':')
    if (user === name && uid !== undefined && gid !== undefined) {
      return { name, uid: Number(uid), gid: Number(gid) }
    }
  }
  return undefined
}
