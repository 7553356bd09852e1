import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, fchownSync, openSync } from 'node:fs'
import { MariaDbClusterError } from './mariadb-cluster-error.js'
import {
  type OsUser,
  onExitSync,
  type ProcessRef,
  processRef,
  readFileTail,
  signalProcesses,
  sleep,
  waitForPortClosed,
  waitForProcessesToEnd,
} from './process-control/index.js'

/** How to run one `mariadbd`. */
export interface MariaDbServerOptions {
  readonly name: string
  readonly port: number
  /** Path of the `mariadbd` binary. */
  readonly mariadbd: string
  /** The node's `my.cnf`, passed as the first option (`--defaults-file=`). */
  readonly cnfFile: string
  /** The node's `log-error` file; the server's stdout and stderr go there too. */
  readonly errorLog: string
  /** Owner of the error log when the server runs as another OS user (root case). */
  readonly account?: OsUser
  /** Removes secrets from text that may reach an error message. */
  readonly redact: (text: string) => string
  readonly log: (line: string) => void
}

const EXIT_WAIT_MS = 10_000

/**
 * One `mariadbd` process of a test cluster: start, SIGKILL, SIGSTOP/SIGCONT, graceful stop. Knows
 * nothing about SQL; the cluster polls readiness through a client.
 *
 * Caveats: the server is this process's child (not detached) and `unref()`'d, so it never keeps the
 * event loop alive; a process `exit` hook SIGKILLs it if it is still running then. A stopped
 * (SIGSTOPped) server cannot act on SIGTERM, so {@link MariaDbServer.stop} sends SIGCONT first.
 *
 * @example
 * ```ts
 * const server = new MariaDbServer({ name: 'primary', port, mariadbd, cnfFile, errorLog, redact, log })
 * server.start(); await server.kill(); server.start(); await server.stop()
 * ```
 */
export class MariaDbServer {
  readonly name: string
  readonly port: number
  readonly #options: MariaDbServerOptions
  #child: ChildProcess | undefined
  /** The running server, by pid and start time: a pid reused after it exits is never signalled. */
  #ref: ProcessRef | undefined
  #exited: Promise<void> = Promise.resolve()
  #pid = 0
  #paused = false
  #spawnError: Error | undefined

  constructor(options: MariaDbServerOptions) {
    this.#options = options
    this.name = options.name
    this.port = options.port
  }

  /** Pid of the running server, or of the last one once it has exited (0 before the first start). */
  get pid(): number {
    return this.#pid
  }

  /** Whether the server process is alive (a paused server counts as running). */
  get running(): boolean {
    return this.#child !== undefined
  }

  /** Whether the server is stopped with SIGSTOP. */
  get paused(): boolean {
    return this.#paused
  }

  /** Spawns `mariadbd --defaults-file=<cnf>`. Throws if it is already running. */
  start(): void {
    if (this.#child) throw this.#error('already running')
    const fd = openSync(this.#options.errorLog, 'a', 0o640)
    let child: ChildProcess
    try {
      if (this.#options.account) fchownSync(fd, this.#options.account.uid, this.#options.account.gid)
      child = spawn(this.#options.mariadbd, [`--defaults-file=${this.#options.cnfFile}`], {
        stdio: ['ignore', fd, fd],
      })
    } finally {
      closeSync(fd)
    }
    this.#spawnError = undefined
    this.#paused = false
    this.#child = child
    this.#pid = child.pid ?? 0
    // Read at once: the child cannot have been reaped yet, so this pid is still ours.
    const ref = this.#pid ? processRef(this.#pid) : undefined
    this.#ref = ref
    const untrackExit = ref ? onExitSync(() => signalProcesses([ref], 'SIGKILL')) : () => {}
    this.#exited = new Promise<void>((resolve) => {
      const done = (): void => {
        if (this.#child === child) {
          this.#child = undefined
          this.#ref = undefined
        }
        untrackExit()
        resolve()
      }
      child.once('exit', done)
      child.once('error', (err) => {
        this.#spawnError = err
        done()
      })
    })
    child.unref()
    this.#options.log(`mariadb ${this.name}: started pid ${this.#pid} on 127.0.0.1:${this.port}`)
  }

  /**
   * Throws (with the tail of the error log) if the server has exited; used while polling for
   * readiness so a server that dies at start fails fast instead of timing out.
   */
  async assertRunning(): Promise<void> {
    if (this.#child) return
    const why = this.#spawnError ? `could not be spawned (${this.#spawnError.message})` : 'exited'
    throw await this.failure(`${why} while starting`)
  }

  /** SIGKILL; resolves once the process is reaped (or a zombie) and its port refuses connections. */
  async kill(): Promise<void> {
    const child = this.#child
    if (!child) return
    const pid = this.#pid
    const ref = this.#ref
    this.#signal('SIGKILL')
    await Promise.race([this.#exited, sleep(EXIT_WAIT_MS)])
    if (ref && !(await waitForProcessesToEnd([ref], { timeoutMs: EXIT_WAIT_MS, allowZombies: false }))) {
      throw this.#error(`pid ${pid} survived SIGKILL`)
    }
    this.#paused = false
    if (!(await waitForPortClosed(this.port, EXIT_WAIT_MS))) {
      throw this.#error(`port ${this.port} still accepts connections after SIGKILL`)
    }
    this.#options.log(`mariadb ${this.name}: killed pid ${pid}`)
  }

  /** SIGSTOP: the server hangs (connections are accepted by the kernel but never answered). */
  pause(): void {
    if (!this.#child) throw this.#error('not running')
    this.#signal('SIGSTOP')
    this.#paused = true
  }

  /** SIGCONT after {@link MariaDbServer.pause}. A no-op when not paused. */
  resume(): void {
    if (!this.#child || !this.#paused) return
    this.#signal('SIGCONT')
    this.#paused = false
  }

  /**
   * Graceful stop: SIGCONT if paused, SIGTERM, then SIGKILL after `graceMs` (default 10 s).
   * Never hangs; a no-op when not running.
   */
  async stop(graceMs = EXIT_WAIT_MS): Promise<void> {
    if (!this.#child) return
    const pid = this.#pid
    const ref = this.#ref
    this.resume()
    this.#signal('SIGTERM')
    const exited = await Promise.race([this.#exited.then(() => true), sleep(graceMs).then(() => false)])
    if (!exited) {
      this.#options.log(`mariadb ${this.name}: no exit ${graceMs} ms after SIGTERM, sending SIGKILL`)
      await this.kill()
      return
    }
    if (ref) await waitForProcessesToEnd([ref], { timeoutMs: EXIT_WAIT_MS, allowZombies: false })
    await waitForPortClosed(this.port, EXIT_WAIT_MS)
    this.#options.log(`mariadb ${this.name}: stopped pid ${pid}`)
  }

  /** A {@link MariaDbClusterError} naming this node, with the last 20 lines of its error log. */
  async failure(message: string, cause?: unknown): Promise<MariaDbClusterError> {
    return this.#error(message, cause, readFileTail(this.#options.errorLog, 20))
  }

  #error(message: string, cause?: unknown, logTail?: string): MariaDbClusterError {
    const redact = this.#options.redact
    return new MariaDbClusterError(redact(`${message} (127.0.0.1:${this.port}, ${this.#options.errorLog})`), {
      node: this.name,
      ...(logTail !== undefined ? { logTail: redact(logTail) } : {}),
      ...(cause !== undefined ? { cause } : {}),
    })
  }

  /** Signals the server if it still runs (never a process that took over its pid). */
  #signal(signal: NodeJS.Signals): void {
    if (this.#ref) signalProcesses([this.#ref], signal)
  }
}
