import { randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { redactSecrets, redactUrl } from '../util/redact.js'
import { clusterNodeNames, resolveClusterPorts } from './cluster-ports.js'
import { type MariaDbBaseDir, prepareMariaDbBaseDir } from './mariadb-base-dir.js'
import { findMariaDbBinaries } from './mariadb-binaries.js'
import { loadMysql2 } from './mariadb-client.js'
import { MariaDbClusterError } from './mariadb-cluster-error.js'
import { type MariaDbClusterOptions, validateMariaDbClusterOptions } from './mariadb-cluster-options.js'
import { type MariaDbNodeConfig, renderMariaDbConfig } from './mariadb-config.js'
import { createMariaDbDataDirs } from './mariadb-data-dirs.js'
import { MariaDbServer } from './mariadb-server.js'
import { type MariaDbNodeRuntime, MariaDbTestCluster } from './mariadb-test-cluster.js'
import { ensureSystemUser, type OsUser, unsupportedPlatform } from './process-control/index.js'

/** The OS user `mysql` that runs the servers when we are root (created when missing). */
async function mariaDbServerUser(log: (line: string) => void): Promise<OsUser> {
  try {
    return await ensureSystemUser('mysql', log)
  } catch (err) {
    throw new MariaDbClusterError(`running as root, and ${(err as Error).message}`, { cause: err })
  }
}

/**
 * One node of a {@link MariaDbCluster}. `pid` follows restarts; `role` is the role the node was
 * created with ({@link MariaDbCluster.promote} does not change it).
 */
export interface MariaDbNodeInfo {
  readonly name: string
  readonly role: 'primary' | 'replica'
  readonly port: number
  /** The application user's URL: `mysql://app:app-secret@127.0.0.1:PORT/app`. */
  readonly url: string
  readonly pid: number
}

/**
 * A running local MariaDB primary with GTID replicas, for tests. Node names: `primary`,
 * `replica1`, `replica2`... Every method that takes a name throws a {@link MariaDbClusterError} for
 * an unknown one, and once the whole cluster is stopped.
 */
export interface MariaDbCluster {
  /** The node named `primary`. */
  readonly primary: MariaDbNodeInfo
  /** `replica1`, `replica2`... */
  readonly replicas: readonly MariaDbNodeInfo[]
  /** The primary, then the replicas. */
  readonly nodes: readonly MariaDbNodeInfo[]
  /** The primary's URL for `root` (all privileges, bypasses `read_only`). */
  readonly superuserUrl: string
  /** The URL of a node, for the application user or (`superuser: true`) for `root`. */
  url(name: string, opts?: { superuser?: boolean }): string
  /** SIGKILL; resolves once the process is gone (not a zombie) and its port refuses connections. */
  kill(name: string): Promise<void>
  /** SIGSTOP: the server hangs; new connections are accepted by the kernel but never answered. */
  pause(name: string): Promise<void>
  /** SIGCONT after {@link MariaDbCluster.pause}. */
  resume(name: string): Promise<void>
  /**
   * Starts a node again after kill/stop (a running node is stopped first, a paused one resumed).
   * A replica resumes replicating from its GTID position (its replication threads start again,
   * even if they were stopped before); resolves once it is connected to a running primary.
   */
  restart(name: string): Promise<void>
  /**
   * Stops one node gracefully (SIGTERM, SIGKILL after 10 s), keeping its data for a restart. With
   * no name, stops every node and deletes the base dir. Never hangs; idempotent.
   */
  stop(name?: string): Promise<void>
  /** Replica apply delay: `CHANGE MASTER TO MASTER_DELAY=ceil(ms/1000)` (whole seconds; 0 resets). */
  setApplyDelay(name: string, ms: number): Promise<void>
  /** `STOP SLAVE` (`'all'`, default), `STOP SLAVE SQL_THREAD` or `STOP SLAVE IO_THREAD`. */
  stopReplication(name: string, which?: 'all' | 'sql' | 'io'): Promise<void>
  /** `START SLAVE`; resolves once both replication threads run (IO only if the primary is up). */
  startReplication(name: string): Promise<void>
  /**
   * Makes a replica a writable primary: `STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only=0`
   * (kept across restarts). Other replicas keep replicating from the old primary.
   */
  promote(name: string): Promise<void>
  /**
   * Waits until every replica that runs, is not paused, replicates (not stopped, not promoted) has
   * applied the primary's current `@@gtid_binlog_pos` (`MASTER_GTID_WAIT`). Default 10000 ms.
   */
  waitForReplication(timeoutMs?: number): Promise<void>
  /**
   * Runs one statement on a fresh `mysql2/promise` connection (connect timeout 5 s, overall
   * `timeoutMs`, default 30 s). Rows of a result set, or `[ResultSetHeader]`. Driver errors pass
   * through untouched.
   */
  query(
    name: string,
    sql: string,
    params?: unknown[],
    opts?: { superuser?: boolean; timeoutMs?: number },
  ): Promise<unknown[]>
}

/**
 * Starts a real local MariaDB primary plus GTID replicas for integration tests (about 1.5 s for a
 * primary and two replicas), each on a loopback port (a free one, or the `ports` option), and
 * resolves once every replica replicates.
 *
 * Defaults: 1 replica, user `app` / `app-secret`, database `app`, a fresh dir under `os.tmpdir()`.
 * As root the servers run as the OS user `mysql` (created when missing). Caveats: Linux only (reads
 * `/proc`; elsewhere it rejects with a `MariaDbClusterError` saying so); needs `mariadbd`,
 * `mariadb-install-db` and the `mysql2` package (loaded on first use, never `pg`); always call
 * `stop()` (a process `exit` hook SIGKILLs forgotten servers, best effort).
 *
 * @example
 * ```ts
 * const cluster = await startMariaDbCluster({ replicas: 2 })
 * await cluster.query('primary', 'CREATE TABLE t (id INT PRIMARY KEY)')
 * await cluster.waitForReplication()
 * await cluster.stop()
 * ```
 */
export async function startMariaDbCluster(options: MariaDbClusterOptions = {}): Promise<MariaDbCluster> {
  validateMariaDbClusterOptions(options)
  const platform = unsupportedPlatform()
  if (platform !== undefined) throw new MariaDbClusterError(platform)
  await loadMysql2()
  const started = Date.now()
  const replicaCount = options.replicas ?? 1
  const names = clusterNodeNames(replicaCount)
  const ports = await resolveClusterPorts(options.ports, names)
  const database = options.database ?? 'app'
  const user = options.user ?? 'app'
  const log = options.log ?? (() => {})
  const secrets = {
    app: options.password ?? 'app-secret',
    root: randomBytes(12).toString('hex'),
    repl: randomBytes(12).toString('hex'),
  }
  const redact = (text: string): string => redactSecrets(redactUrl(text), Object.values(secrets))
  const binaries = findMariaDbBinaries(options.binDir)
  const account = process.getuid?.() === 0 ? await mariaDbServerUser(log) : undefined
  const dir: MariaDbBaseDir = await prepareMariaDbBaseDir(options.baseDir, account)
  const nodes: MariaDbNodeRuntime[] = []
  try {
    for (const [i, name] of names.entries()) {
      const nodeDir = await dir.mkdir(name)
      const port = ports[i] ?? 0
      const config: MariaDbNodeConfig = {
        role: i === 0 ? 'primary' : 'replica',
        serverId: i + 1,
        port,
        basedir: binaries.basedir,
        datadir: join(nodeDir, 'data'),
        socket: join(dir.socketDir, `${name}.sock`),
        pidFile: join(nodeDir, 'mariadbd.pid'),
        errorLog: join(nodeDir, 'error.log'),
        ...(account ? { osUser: account.name } : {}),
        ...(options.settings ? { settings: options.settings } : {}),
      }
      const cnfFile = join(nodeDir, 'my.cnf')
      await writeFile(cnfFile, renderMariaDbConfig(config), { mode: 0o644 })
      const server = new MariaDbServer({
        name,
        port,
        mariadbd: binaries.mariadbd,
        cnfFile,
        errorLog: config.errorLog,
        ...(account ? { account } : {}),
        redact,
        log,
      })
      nodes.push({ name, role: config.role, config, cnfFile, server, replicating: config.role === 'replica' })
    }
    await createMariaDbDataDirs({
      binaries,
      ...(account ? { account } : {}),
      datadirs: nodes.map((n) => n.config.datadir),
      workDir: dir.path,
      bootstrap: {
        database,
        appUser: user,
        appPassword: secrets.app,
        rootPassword: secrets.root,
        replUser: 'repl',
        replPassword: secrets.repl,
        hostname: hostname(),
      },
      redact,
    })
    log(`mariadb cluster: data dirs ready in ${Date.now() - started} ms (${dir.path})`)
    const cluster = new MariaDbTestCluster({
      nodes,
      dir,
      database,
      user,
      secrets,
      startTimeoutMs: options.startTimeoutMs ?? 30_000,
      log,
    })
    await cluster.startAll()
    log(`mariadb cluster: primary + ${replicaCount} replica(s) ready in ${Date.now() - started} ms`)
    return cluster
  } catch (err) {
    await Promise.allSettled(nodes.map((n) => n.server.kill()))
    await dir.remove().catch(() => {})
    throw err
  }
}
