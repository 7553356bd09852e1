import path from 'node:path'
import { inspect } from 'node:util'
import { redactSecrets, redactUrl } from '../util/redact.js'
import type { ClusterNodeInfo } from './pg-cluster.js'
import { PgClusterError } from './pg-cluster-error.js'
import { SUPERUSER } from './pg-config.js'
import { queryOnce } from './pg-query.js'
import { Postmaster, type PostmasterState } from './postmaster.js'
import { pollUntil, type RunCommandResult, readFileTail, runCommand } from './process-control/index.js'
import { type ServerUser, spawnIdentity } from './server-user.js'

/** What every node of one cluster shares. */
export interface NodeContext {
  /** Bin directory the server user can execute from. */
  readonly binDir: string
  readonly user: ServerUser
  /** Environment of server commands (no `PG*` variables). */
  readonly env: NodeJS.ProcessEnv
  readonly socketDir: string
  /** Bound of each wait (start, readiness, streaming), in ms. */
  readonly timeoutMs: number
  readonly appUser: string
  readonly appPassword: string
  readonly database: string
  readonly log: (line: string) => void
}

/** Options of {@link PgNode.query}. */
export interface NodeQueryOptions {
  readonly superuser?: boolean
  /** Connect and query bound in ms (default 10 000). */
  readonly timeoutMs?: number
  /** Default: the cluster's database. */
  readonly database?: string
}

/**
 * One PostgreSQL server of a test cluster: its directories, its port and the lifecycle of its
 * postmaster (start, fast stop, SIGKILL, SIGSTOP/SIGCONT). Server commands run as the server user.
 *
 * @example
 * ```ts
 * const node = new PgNode(ctx, 'primary', 'primary', 40001, '/tmp/routemate-pg-x/primary')
 * await node.start()
 * ```
 */
export class PgNode implements ClusterNodeInfo {
  readonly name: string
  readonly port: number
  readonly url: string
  readonly dir: string
  readonly dataDir: string
  readonly logFile: string
  readonly #ctx: NodeContext
  readonly #pm: Postmaster
  #role: 'primary' | 'replica'

  constructor(ctx: NodeContext, name: string, role: 'primary' | 'replica', port: number, dir: string) {
    this.#ctx = ctx
    this.name = name
    this.#role = role
    this.port = port
    this.dir = dir
    this.dataDir = path.join(dir, 'data')
    this.logFile = path.join(dir, 'postgres.log')
    const e = encodeURIComponent
    this.url = `postgres://${e(ctx.appUser)}:${e(ctx.appPassword)}@127.0.0.1:${port}/${e(ctx.database)}`
    this.#pm = new Postmaster({
      dataDir: this.dataDir,
      logFile: this.logFile,
      socketDir: ctx.socketDir,
      port,
      run: (tool, args, timeoutMs) => this.run(tool, args, timeoutMs),
      fail: (message, cause) => this.fail(message, cause),
      log: (line) => ctx.log(`${name}: ${line}`),
    })
  }

  /** `replica` until promoted. */
  get role(): 'primary' | 'replica' {
    return this.#role
  }

  /** Pid of the postmaster of the latest start (kept after a stop or kill; 0 before the first start). */
  get pid(): number {
    return this.#pm.pid
  }

  get state(): PostmasterState {
    return this.#pm.state
  }

  /** The superuser URL of this node (no password: trusted on loopback). */
  superuserUrl(database = this.#ctx.database): string {
    return `postgres://${SUPERUSER}@127.0.0.1:${this.port}/${encodeURIComponent(database)}`
  }

  markPromoted(): void {
    this.#role = 'primary'
  }

  /** Runs a PostgreSQL tool of the bin directory as the server user, in this node's directory. */
  run(tool: string, args: readonly string[], timeoutMs: number): Promise<RunCommandResult> {
    return this.exec(path.join(this.#ctx.binDir, tool), args, timeoutMs)
  }

  /** Runs any command (found on `PATH` when not a path) as the server user, in this node's directory. */
  exec(file: string, args: readonly string[], timeoutMs: number): Promise<RunCommandResult> {
    return runCommand(file, args, {
      cwd: this.dir,
      env: this.#ctx.env,
      timeoutMs,
      ...spawnIdentity(this.#ctx.user),
    })
  }

  /** The last `lines` lines of the server log, passwords redacted. */
  logTail(lines = 20): string {
    return redactSecrets(readFileTail(this.logFile, lines), [this.#ctx.appPassword])
  }

  /** An error about this node, with the tail of its log. */
  fail(message: string, cause?: unknown): PgClusterError {
    return new PgClusterError(redactSecrets(message, [this.#ctx.appPassword]), {
      node: this.name,
      logTail: this.logTail(),
      cause,
    })
  }

  /** One statement on a one-shot connection, as the app user or the superuser. */
  query(
    sql: string,
    params: readonly unknown[] = [],
    options: NodeQueryOptions = {},
  ): Promise<Record<string, unknown>[]> {
    const superuser = options.superuser === true
    return queryOnce(
      {
        port: this.port,
        user: superuser ? SUPERUSER : this.#ctx.appUser,
        database: options.database ?? this.#ctx.database,
        ...(superuser ? {} : { password: this.#ctx.appPassword }),
      },
      sql,
      params,
      options.timeoutMs ?? 10_000,
    )
  }

  /**
   * Polls `check` until it returns a value, failing fast (with the log tail) when the postmaster
   * dies and after `timeoutMs` otherwise.
   */
  async waitFor<T>(
    what: string,
    check: () => Promise<T | undefined>,
    timeoutMs = this.#ctx.timeoutMs,
    intervalMs = 50,
  ): Promise<T> {
    let lastError = ''
    const outcome = await pollUntil<{ value: T } | { died: true }>(
      async () => {
        if (!this.#pm.alive) return { died: true }
        const value = await check()
        return value === undefined ? undefined : { value }
      },
      { timeoutMs, intervalMs, onError: (err) => (lastError = (err as Error).message) },
    )
    const detail = lastError === '' ? '' : ` (last error: ${lastError})`
    if (outcome === undefined) throw this.fail(`timed out after ${timeoutMs} ms waiting ${what}${detail}`)
    if ('died' in outcome) throw this.fail(`the server exited while waiting ${what}`)
    return outcome.value
  }

  /** Starts the server (`pg_ctl start -w`) and waits until it accepts connections in its role. */
  async start(): Promise<void> {
    await this.#pm.start(this.#ctx.timeoutMs)
    const wantRecovery = this.#role === 'replica'
    await this.waitFor(wantRecovery ? 'for read-only connections' : 'for connections', async () => {
      const [row] = await this.query('SELECT pg_is_in_recovery() AS recovery', [], {
        superuser: true,
        timeoutMs: 1000,
        database: 'postgres',
      })
      return row?.recovery === wantRecovery ? true : undefined
    })
  }

  /** Waits until this replica's WAL receiver is streaming from its primary. */
  async waitStreaming(timeoutMs = this.#ctx.timeoutMs): Promise<void> {
    await this.waitFor(
      'for streaming replication',
      async () => {
        const [row] = await this.query('SELECT status FROM pg_stat_wal_receiver', [], {
          superuser: true,
          timeoutMs: 1000,
          database: 'postgres',
        })
        return row?.status === 'streaming' ? true : undefined
      },
      timeoutMs,
    )
  }

  /** Fast shutdown, resuming a paused server first; SIGKILL when that fails. See {@link Postmaster.stop}. */
  stop(): Promise<void> {
    return this.#pm.stop()
  }

  /** SIGKILL; resolves when the processes are gone and the port refuses connections. See {@link Postmaster.kill}. */
  kill(): Promise<void> {
    return this.#pm.kill()
  }

  /** SIGSTOP of the postmaster and all its children. */
  pause(): Promise<void> {
    return this.#pm.pause()
  }

  /** SIGCONT of what {@link pause} stopped. */
  resume(): void {
    this.#pm.resume()
  }

  /** Synchronous SIGKILL for exit hooks. */
  killNowSync(): void {
    this.#pm.killNowSync()
  }

  [inspect.custom](): string {
    return `PgNode(${this.name}, ${this.#role}, ${redactUrl(this.url)}, pid ${this.pid}, ${this.state})`
  }
}
