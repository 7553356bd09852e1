import fs from 'node:fs'
import { inspect } from 'node:util'
import type { ClusterNodeInfo, PgCluster, PgQueryOptions } from './pg-cluster.js'
import { PgClusterError } from './pg-cluster-error.js'
import type { PgNode } from './pg-node.js'
import { onExitSync, sleep } from './process-control/index.js'

const SUPER = { superuser: true } as const

/** What {@link PgTestCluster} is made of. */
export interface PgTestClusterInit {
  readonly primary: PgNode
  readonly replicas: readonly PgNode[]
  readonly baseDir: string
  readonly socketDir: string
  readonly log: (line: string) => void
}

/**
 * The {@link PgCluster} returned by `startPgCluster`: drives the nodes by name and owns the cluster's
 * directories. Registered with the process 'exit' hook from construction until `stop()`.
 *
 * @example
 * ```ts
 * const cluster = new PgTestCluster({ primary, replicas, baseDir, socketDir, log })
 * ```
 */
export class PgTestCluster implements PgCluster {
  readonly primary: PgNode
  readonly replicas: readonly PgNode[]
  readonly nodes: readonly PgNode[]
  readonly superuserUrl: string
  readonly baseDir: string
  readonly #socketDir: string
  readonly #log: (line: string) => void
  readonly #untrackExit: () => void
  #stopping: Promise<void> | undefined

  constructor(init: PgTestClusterInit) {
    this.primary = init.primary
    this.replicas = Object.freeze([...init.replicas])
    this.nodes = Object.freeze([init.primary, ...init.replicas])
    this.superuserUrl = init.primary.superuserUrl()
    this.baseDir = init.baseDir
    this.#socketDir = init.socketDir
    this.#log = init.log
    this.#untrackExit = onExitSync(() => this.cleanupNowSync())
  }

  #node(name: string): PgNode {
    if (this.#stopping !== undefined) throw new PgClusterError('the cluster has been stopped', { node: name })
    const node = this.nodes.find((n) => n.name === name)
    if (node === undefined) {
      throw new PgClusterError(
        `no node named ${JSON.stringify(name)} (nodes: ${this.nodes.map((n) => n.name).join(', ')})`,
      )
    }
    return node
  }

  url(name: string, opts: { superuser?: boolean } = {}): string {
    const node = this.#node(name)
    return opts.superuser === true ? node.superuserUrl() : node.url
  }

  async kill(name: string): Promise<void> {
    await this.#node(name).kill()
  }

  async pause(name: string): Promise<void> {
    await this.#node(name).pause()
  }

  async resume(name: string): Promise<void> {
    this.#node(name).resume()
  }

  async restart(name: string): Promise<void> {
    const node = this.#node(name)
    if (node.state === 'paused') node.resume()
    if (node.state === 'running') await node.stop()
    await node.start()
  }

  async stop(name?: string): Promise<void> {
    if (name !== undefined) return this.#node(name).stop()
    this.#stopping ??= this.#stopAll()
    return this.#stopping
  }

  async #stopAll(): Promise<void> {
    for (const node of this.nodes) node.resume()
    const errors: unknown[] = []
    const stopAll = async (nodes: readonly PgNode[]): Promise<void> => {
      for (const r of await Promise.allSettled(nodes.map((n) => n.stop()))) {
        if (r.status === 'rejected') errors.push(r.reason)
      }
    }
    // Standbys first: a primary's shutdown then has no walsender to flush to.
    await stopAll(this.nodes.filter((n) => n.role === 'replica'))
    await stopAll(this.nodes.filter((n) => n.role === 'primary'))
    for (const node of this.nodes) node.killNowSync()
    await fs.promises.rm(this.baseDir, { recursive: true, force: true, maxRetries: 3 })
    await fs.promises.rm(this.#socketDir, { recursive: true, force: true, maxRetries: 3 })
    this.#untrackExit()
    this.#log(`cluster stopped, ${this.baseDir} removed`)
    if (errors.length > 0) {
      throw new PgClusterError('stop: some nodes failed to stop cleanly', { cause: errors[0] })
    }
  }

  /** SIGKILLs every server and removes the cluster's directories, synchronously (the exit hook's job). */
  cleanupNowSync(): void {
    for (const node of this.nodes) node.killNowSync()
    fs.rmSync(this.baseDir, { recursive: true, force: true })
    fs.rmSync(this.#socketDir, { recursive: true, force: true })
  }

  async setApplyDelay(name: string, ms: number): Promise<void> {
    const node = this.#node(name)
    if (!Number.isInteger(ms) || ms < 0) {
      throw new PgClusterError(`setApplyDelay: expected whole ms >= 0, got ${ms}`)
    }
    const sql =
      ms === 0
        ? 'ALTER SYSTEM RESET recovery_min_apply_delay'
        : `ALTER SYSTEM SET recovery_min_apply_delay = '${ms}ms'`
    await node.query(sql, [], SUPER)
    await node.query('SELECT pg_reload_conf()', [], SUPER)
    // A new backend sees the value once the postmaster has reloaded, and the postmaster signals the
    // startup process (which applies WAL) in the same step; give that one a moment to act on it.
    await node.waitFor(
      `for recovery_min_apply_delay = ${ms} ms`,
      async () => {
        const [row] = await node.query(
          "SELECT setting FROM pg_settings WHERE name = 'recovery_min_apply_delay'",
          [],
          { ...SUPER, timeoutMs: 1000 },
        )
        return Number(row?.setting) === ms ? true : undefined
      },
      5000,
    )
    await sleep(20)
  }

  async pauseReplay(name: string): Promise<void> {
    await this.#node(name).query('SELECT pg_wal_replay_pause()', [], SUPER)
  }

  async resumeReplay(name: string): Promise<void> {
    await this.#node(name).query('SELECT pg_wal_replay_resume()', [], SUPER)
  }

  async promote(name: string): Promise<void> {
    const node = this.#node(name)
    const [row] = await node.query('SELECT pg_promote(true, 30) AS promoted', [], {
      ...SUPER,
      timeoutMs: 35_000,
    })
    if (row?.promoted !== true) throw node.fail('pg_promote() did not finish within 30 s')
    await node.waitFor('to leave recovery', async () => {
      const [r] = await node.query('SELECT pg_is_in_recovery() AS recovery', [], {
        ...SUPER,
        timeoutMs: 1000,
      })
      return r?.recovery === false ? true : undefined
    })
    node.markPromoted()
    this.#log(`${name}: promoted`)
  }

  async waitForReplication(timeoutMs = 10_000): Promise<void> {
    const primary = this.#node('primary')
    if (primary.state !== 'running') throw primary.fail('waitForReplication: the primary is not running')
    const [row] = await primary.query('SELECT pg_current_wal_lsn()::text AS lsn', [], SUPER)
    const lsn = String(row?.lsn)
    const replicas = this.replicas.filter((r) => r.role === 'replica' && r.state === 'running')
    await Promise.all(
      replicas.map((r) =>
        r.waitFor(
          `to replay up to ${lsn}`,
          async () => {
            const [x] = await r.query('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok', [lsn], {
              ...SUPER,
              timeoutMs: 1000,
            })
            return x?.ok === true ? true : undefined
          },
          timeoutMs,
          10,
        ),
      ),
    )
  }

  async query(
    name: string,
    sql: string,
    params: unknown[] = [],
    opts: PgQueryOptions = {},
  ): Promise<Record<string, unknown>[]> {
    return this.#node(name).query(sql, params, opts)
  }

  [inspect.custom](): string {
    const nodes = this.nodes.map((n: ClusterNodeInfo) => `${n.name}:${n.port}`).join(', ')
    return `PgCluster(${nodes}${this.#stopping === undefined ? '' : ', stopped'})`
  }
}
