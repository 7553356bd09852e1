import { writeFile } from 'node:fs/promises'
import type { MariaDbBaseDir } from './mariadb-base-dir.js'
import { type MariaDbTarget, mariaDbQuery } from './mariadb-client.js'
import type { MariaDbCluster, MariaDbNodeInfo } from './mariadb-cluster.js'
import { MariaDbClusterError } from './mariadb-cluster-error.js'
import { type MariaDbNodeConfig, renderMariaDbConfig, sqlString } from './mariadb-config.js'
import type { MariaDbServer } from './mariadb-server.js'
import {
  describeMariaDbSlaveStatus,
  readMariaDbSlaveStatus,
  waitForMariaDbReady,
  waitForMariaDbReplicating,
} from './mariadb-wait.js'

/** The cluster's mutable view of one node. */
export interface MariaDbNodeRuntime {
  readonly name: string
  readonly role: 'primary' | 'replica'
  config: MariaDbNodeConfig
  readonly cnfFile: string
  readonly server: MariaDbServer
  /** A replica whose replication is configured, not stopped by `stopReplication`, not promoted. */
  replicating: boolean
  promoted?: boolean
}

/** What {@link MariaDbTestCluster} is built from (by `startMariaDbCluster`). */
export interface MariaDbTestClusterInit {
  readonly nodes: readonly MariaDbNodeRuntime[]
  readonly dir: MariaDbBaseDir
  readonly database: string
  readonly user: string
  readonly secrets: { readonly app: string; readonly root: string; readonly repl: string }
  readonly startTimeoutMs: number
  readonly log: (line: string) => void
}

type QueryOpts = { superuser?: boolean; timeoutMs?: number }

/**
 * The {@link MariaDbCluster} that `startMariaDbCluster` returns; built on data dirs and configs it has
 * already written. Not meant to be constructed directly.
 *
 * @example
 * ```ts
 * const cluster = new MariaDbTestCluster(init); await cluster.startAll()
 * ```
 */
export class MariaDbTestCluster implements MariaDbCluster {
  readonly primary: MariaDbNodeInfo
  readonly replicas: readonly MariaDbNodeInfo[]
  readonly nodes: readonly MariaDbNodeInfo[]
  readonly superuserUrl: string
  readonly #init: MariaDbTestClusterInit
  readonly #byName = new Map<string, MariaDbNodeRuntime>()
  #stopped: Promise<void> | undefined

  constructor(init: MariaDbTestClusterInit) {
    this.#init = init
    for (const node of init.nodes) this.#byName.set(node.name, node)
    this.nodes = Object.freeze(init.nodes.map((n) => this.#info(n)))
    const [primary] = this.nodes
    if (!primary) throw new MariaDbClusterError('a cluster needs a primary')
    this.primary = primary
    this.replicas = Object.freeze(this.nodes.slice(1))
    this.superuserUrl = this.url('primary', { superuser: true })
  }

  url(name: string, opts?: { superuser?: boolean }): string {
    const node = this.#node(name)
    const [user, password] = opts?.superuser ? ['root', this.#init.secrets.root] : this.#app()
    const auth = `${encodeURIComponent(user)}:${encodeURIComponent(password)}`
    return `mysql://${auth}@127.0.0.1:${node.server.port}/${encodeURIComponent(this.#init.database)}`
  }

  /** Starts every node, then points the replicas at the primary and waits until they replicate. */
  async startAll(): Promise<void> {
    for (const node of this.#init.nodes) node.server.start()
    await Promise.all(this.#init.nodes.map((n) => this.#waitReady(n)))
    const primaryPort = this.#node('primary').server.port
    await Promise.all(
      this.#init.nodes
        .filter((n) => n.role === 'replica')
        .map(async (n) => {
          await this.#su(
            n,
            `CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${primaryPort}, MASTER_USER='repl', ` +
              `MASTER_PASSWORD=${sqlString(this.#init.secrets.repl)}, MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1`,
          )
          await this.#su(n, 'START SLAVE')
          await this.#waitReplicating(n)
        }),
    )
  }

  async kill(name: string): Promise<void> {
    await this.#node(name).server.kill()
  }

  async pause(name: string): Promise<void> {
    this.#node(name).server.pause()
  }

  async resume(name: string): Promise<void> {
    this.#node(name).server.resume()
  }

  async restart(name: string): Promise<void> {
    const node = this.#node(name)
    await node.server.stop()
    node.server.start()
    await this.#waitReady(node)
    if (node.role === 'replica' && !node.promoted) {
      // master.info survives and the threads usually start on their own; START SLAVE covers a
      // replica whose replication was stopped (only a warning when already running).
      await this.#su(node, 'START SLAVE')
      node.replicating = true
      await this.#waitReplicating(node)
    }
  }

  stop(name?: string): Promise<void> {
    if (name !== undefined) return this.#stopped ? this.#stopped : this.#node(name).server.stop()
    this.#stopped ??= (async () => {
      const results = await Promise.allSettled(this.#init.nodes.map((n) => n.server.stop(5000)))
      await this.#init.dir.remove()
      this.#init.log(`mariadb cluster: stopped, removed ${this.#init.dir.path}`)
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
      if (failed) throw failed.reason
    })()
    return this.#stopped
  }

  async setApplyDelay(name: string, ms: number): Promise<void> {
    const node = this.#replica(name)
    if (!Number.isFinite(ms) || ms < 0) throw new MariaDbClusterError(`setApplyDelay: bad delay ${ms} ms`)
    await this.#su(node, 'STOP SLAVE')
    await this.#su(node, `CHANGE MASTER TO MASTER_DELAY=${Math.ceil(ms / 1000)}`)
    await this.#su(node, 'START SLAVE')
    node.replicating = true
    await this.#waitReplicating(node)
  }

  async stopReplication(name: string, which: 'all' | 'sql' | 'io' = 'all'): Promise<void> {
    const node = this.#replica(name)
    const thread = which === 'sql' ? ' SQL_THREAD' : which === 'io' ? ' IO_THREAD' : ''
    await this.#su(node, `STOP SLAVE${thread}`)
    node.replicating = false
  }

  async startReplication(name: string): Promise<void> {
    const node = this.#replica(name)
    await this.#su(node, 'START SLAVE')
    node.replicating = true
    await this.#waitReplicating(node)
  }

  async promote(name: string): Promise<void> {
    const node = this.#replica(name)
    await this.#su(node, 'STOP SLAVE')
    await this.#su(node, 'RESET SLAVE ALL')
    await this.#su(node, 'SET GLOBAL read_only = 0')
    node.replicating = false
    node.promoted = true
    node.config = { ...node.config, readOnly: false }
    await writeFile(node.cnfFile, renderMariaDbConfig(node.config))
    this.#init.log(`mariadb ${name}: promoted (writable, no longer replicating)`)
  }

  async waitForReplication(timeoutMs = 10_000): Promise<void> {
    const primary = this.#node('primary')
    const [row] = (await this.#su(primary, 'SELECT @@gtid_binlog_pos AS pos')) as { pos?: string }[]
    const pos = row?.pos ?? ''
    const waiting = this.#init.nodes.filter(
      (n) => n.role === 'replica' && n.replicating && n.server.running && !n.server.paused,
    )
    await Promise.all(
      waiting.map(async (n) => {
        const rows = (await this.#su(n, 'SELECT MASTER_GTID_WAIT(?, ?) AS r', [pos, timeoutMs / 1000], {
          timeoutMs: timeoutMs + 5000,
        })) as { r?: number | string }[]
        if (Number(rows[0]?.r) !== 0) {
          const status = await readMariaDbSlaveStatus(this.#superuser(n)).catch(() => undefined)
          throw await n.server.failure(
            `did not reach the primary's GTID position ${pos} within ${timeoutMs} ms${describeMariaDbSlaveStatus(status)}`,
          )
        }
      }),
    )
  }

  async query(name: string, sql: string, params: unknown[] = [], opts: QueryOpts = {}): Promise<unknown[]> {
    const node = this.#node(name)
    const [user, password] = opts.superuser ? ['root', this.#init.secrets.root] : this.#app()
    return mariaDbQuery(
      { port: node.server.port, user, password, database: this.#init.database },
      sql,
      params,
      opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {},
    )
  }

  #app(): [string, string] {
    return [this.#init.user, this.#init.secrets.app]
  }

  #superuser(node: MariaDbNodeRuntime): MariaDbTarget {
    return { port: node.server.port, user: 'root', password: this.#init.secrets.root }
  }

  /** Polls `SELECT 1` as root until the node answers; fails fast if it exits. */
  #waitReady(node: MariaDbNodeRuntime): Promise<void> {
    return waitForMariaDbReady(node.server, this.#superuser(node), this.#init.startTimeoutMs)
  }

  /** Waits until both replication threads run (the IO thread only while the primary is up). */
  #waitReplicating(node: MariaDbNodeRuntime): Promise<void> {
    const primary = this.#node('primary').server
    const primaryUp = (): boolean => primary.running && !primary.paused
    return waitForMariaDbReplicating(node.server, this.#superuser(node), primaryUp, this.#init.startTimeoutMs)
  }

  #su(
    node: MariaDbNodeRuntime,
    sql: string,
    params: unknown[] = [],
    opts: QueryOpts = {},
  ): Promise<unknown[]> {
    return this.query(node.name, sql, params, { ...opts, superuser: true })
  }

  #node(name: string): MariaDbNodeRuntime {
    if (this.#stopped) throw new MariaDbClusterError('the cluster is stopped')
    const node = this.#byName.get(name)
    if (!node) {
      const known = [...this.#byName.keys()].join(', ')
      throw new MariaDbClusterError(`no node named '${name}' (nodes: ${known})`)
    }
    return node
  }

  #replica(name: string): MariaDbNodeRuntime {
    const node = this.#node(name)
    if (node.role !== 'replica' || node.promoted) {
      throw new MariaDbClusterError('not a replica', { node: name })
    }
    return node
  }

  #info(node: MariaDbNodeRuntime): MariaDbNodeInfo {
    const url = this.url(node.name)
    const { server } = node
    return Object.freeze({
      name: node.name,
      role: node.role,
      port: server.port,
      url,
      get pid(): number {
        return server.pid
      },
    })
  }
}
