import { clearStaleLocks, isPostmasterOf, readPostmasterPid } from './postmaster-files.js'
import {
  descendants,
  freezeProcessTree,
  killProcessTree,
  type ProcessRef,
  processRef,
  processState,
  type RunCommandResult,
  signalProcesses,
  thawProcesses,
  waitForPortClosed,
  waitForProcessesToEnd,
} from './process-control/index.js'

/** Whether a server is up, frozen by {@link Postmaster.pause}, or down. */
export type PostmasterState = 'running' | 'paused' | 'stopped'

/** What a {@link Postmaster} needs from its node. */
export interface PostmasterOptions {
  readonly dataDir: string
  readonly logFile: string
  readonly socketDir: string
  readonly port: number
  /** Runs a tool of the bin directory as the server user. */
  readonly run: (tool: string, args: readonly string[], timeoutMs: number) => Promise<RunCommandResult>
  /** Builds the error to throw (naming the node, with its log tail). */
  readonly fail: (message: string, cause?: unknown) => Error
  readonly log: (line: string) => void
}

/**
 * The server process of one data directory: `pg_ctl start`/`stop` as the server user, SIGKILL,
 * SIGSTOP/SIGCONT of the postmaster with all its children. Knows nothing about SQL.
 *
 * @example
 * ```ts
 * const pm = new Postmaster({ dataDir, logFile, socketDir, port, run, fail, log })
 * await pm.start(30_000)
 * ```
 */
export class Postmaster {
  readonly #o: PostmasterOptions
  #ref: ProcessRef | undefined
  #lastPid = 0
  #state: PostmasterState = 'stopped'
  #paused: ProcessRef[] = []

  constructor(options: PostmasterOptions) {
    this.#o = options
  }

  /** Pid of the latest start (kept after a stop or kill; 0 before the first start). */
  get pid(): number {
    return this.#lastPid
  }

  get state(): PostmasterState {
    return this.#state
  }

  /** Whether the postmaster process exists and is not a zombie (stopped by SIGSTOP counts as alive). */
  get alive(): boolean {
    const ref = this.#ref
    if (ref === undefined) return false
    const state = processState(ref)
    return state === 'running' || state === 'stopped'
  }

  /** `pg_ctl start -w -t <timeout>`; resolves when the postmaster reports ready (or standby). */
  async start(timeoutMs: number): Promise<void> {
    const o = this.#o
    if (this.#state !== 'stopped') throw o.fail('start: the server is already running')
    const running = clearStaleLocks(o.dataDir, o.socketDir, o.port)
    if (running !== undefined) throw o.fail(`a postmaster (pid ${running}) already runs on ${o.dataDir}`)
    const seconds = Math.max(1, Math.ceil(timeoutMs / 1000))
    const args = ['start', '-D', o.dataDir, '-l', o.logFile, '-w', '-t', String(seconds), '-s']
    let result: RunCommandResult | undefined
    let error: unknown
    try {
      result = await o.run('pg_ctl', args, seconds * 1000 + 5000)
    } catch (err) {
      error = err
    }
    const pid = readPostmasterPid(o.dataDir)
    if (result?.code !== 0 || pid === undefined || !isPostmasterOf(pid, o.dataDir)) {
      this.killNowSync()
      const why = result === undefined ? String(error) : `exit ${result.code}: ${result.output}`
      throw o.fail(`pg_ctl start failed (${why})`, error)
    }
    this.#ref = processRef(pid)
    this.#lastPid = pid
    this.#state = 'running'
  }

  /** Fast shutdown (`pg_ctl stop -m fast -w -t 10`), resuming a paused server first; SIGKILL if that fails. */
  async stop(): Promise<void> {
    this.resume()
    const ref = this.#ref
    if (ref === undefined || !this.alive) {
      this.#ref = undefined
      this.#state = 'stopped'
      return
    }
    let ok = false
    try {
      const args = ['stop', '-D', this.#o.dataDir, '-m', 'fast', '-w', '-t', '10', '-s']
      const r = await this.#o.run('pg_ctl', args, 15_000)
      ok = r.code === 0 && (await waitForProcessesToEnd([ref], { timeoutMs: 2000, allowZombies: true }))
    } catch {
      ok = false
    }
    if (ok) {
      this.#ref = undefined
      this.#state = 'stopped'
      return
    }
    this.#o.log(`fast shutdown of ${this.#o.dataDir} did not finish, sending SIGKILL`)
    await this.kill()
  }

  /**
   * SIGKILLs the postmaster and every child, then waits until they are dead, the port refuses
   * connections and (for up to 5 s: PID 1 may reap slowly) the postmaster is no longer a zombie.
   */
  async kill(): Promise<void> {
    const ref = this.#ref
    this.#ref = undefined
    this.#state = 'stopped'
    this.#paused = []
    if (ref === undefined) return
    if (!(await killProcessTree(ref, 5000))) {
      throw this.#o.fail(`processes still alive 5 s after SIGKILL (postmaster ${ref.pid})`)
    }
    const port = this.#o.port
    if (!(await waitForPortClosed(port, 5000)))
      throw this.#o.fail(`port ${port} still accepts connections after SIGKILL`)
    if (!(await waitForProcessesToEnd([ref], { timeoutMs: 5000, allowZombies: false }))) {
      this.#o.log(`postmaster ${ref.pid} is dead but not reaped yet; going on`)
    }
  }

  /** SIGSTOPs the postmaster, then all its children: existing connections freeze too. */
  async pause(): Promise<void> {
    if (this.#state === 'paused') return
    const ref = this.#ref
    if (this.#state !== 'running' || ref === undefined) throw this.#o.fail('pause: the server is not running')
    const frozen = await freezeProcessTree(ref, 2000)
    if (frozen === undefined) {
      thawProcesses([ref], ref)
      throw this.#o.fail('pause: processes did not stop within 2 s')
    }
    this.#paused = frozen
    this.#state = 'paused'
  }

  /** SIGCONTs everything {@link pause} stopped (and any child of the postmaster); no-op unless paused. */
  resume(): void {
    if (this.#state !== 'paused') return
    thawProcesses(this.#paused, this.#ref)
    this.#paused = []
    this.#state = 'running'
  }

  /**
   * Synchronous best effort for exit hooks and failed starts: SIGKILLs our postmaster (and the one
   * named in `postmaster.pid`, if it runs on this data directory) with all their children.
   */
  killNowSync(): void {
    const roots: ProcessRef[] = []
    if (this.#ref !== undefined) roots.push(this.#ref)
    const filePid = readPostmasterPid(this.#o.dataDir)
    if (filePid !== undefined && isPostmasterOf(filePid, this.#o.dataDir)) {
      const fileRef = processRef(filePid)
      if (fileRef !== undefined) roots.push(fileRef)
    }
    for (const root of roots) signalProcesses([root, ...descendants(root.pid)], 'SIGKILL')
    this.#ref = undefined
    this.#paused = []
    this.#state = 'stopped'
  }
}
