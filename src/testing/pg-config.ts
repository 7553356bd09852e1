/** Name of the cluster's superuser (created by `initdb -U`); trusted on loopback, no password. */
export const SUPERUSER = 'postgres'

/** Name of the role the replicas stream with; trusted on loopback for replication only. */
export const REPLICATION_USER = 'replicator'

/** A postgresql.conf value: numbers are written bare, strings quoted. */
export type SettingValue = string | number

/**
 * The settings every node of a test cluster starts with: loopback only, fast and unsafe on crash
 * (`fsync=off`, `full_page_writes=off`), but `synchronous_commit=on` (off delays WAL shipping by
 * 60-170 ms), quick reconnects (`wal_retrieve_retry_interval=500ms`) and quick detection of dead
 * peers (`wal_sender_timeout`/`wal_receiver_timeout` 5 s). `extra` wins over all of them.
 *
 * @example
 * ```ts
 * clusterSettings({ port: 40001, socketDir: '/tmp/rmpg-x', name: 'primary' }, { work_mem: '8MB' })
 * ```
 */
export function clusterSettings(
  node: { port: number; socketDir: string; name: string },
  extra: Readonly<Record<string, SettingValue>> = {},
): Record<string, SettingValue> {
  return {
    listen_addresses: '127.0.0.1',
    port: node.port,
    unix_socket_directories: node.socketDir,
    cluster_name: node.name,
    max_connections: 100,
    shared_buffers: '32MB',
    fsync: 'off',
    full_page_writes: 'off',
    synchronous_commit: 'on',
    wal_level: 'replica',
    max_wal_senders: 10,
    max_replication_slots: 10,
    hot_standby: 'on',
    hot_standby_feedback: 'on',
    wal_sender_timeout: '5s',
    wal_receiver_timeout: '5s',
    wal_receiver_status_interval: '1s',
    wal_retrieve_retry_interval: '500ms',
    password_encryption: 'scram-sha-256',
    logging_collector: 'off',
    log_line_prefix: '%m [%p] %q%a ',
    ...extra,
  }
}

/**
 * Renders settings as postgresql.conf lines. Names are checked (letters, digits, `_` and `.`), so a
 * setting can never inject another line.
 *
 * @example
 * ```ts
 * renderSettings({ port: 5433, cluster_name: 'replica1' }) // "port = 5433\ncluster_name = 'replica1'\n"
 * ```
 */
export function renderSettings(settings: Readonly<Record<string, SettingValue>>): string {
  let out = ''
  for (const [name, value] of Object.entries(settings)) {
    if (!/^[A-Za-z_][A-Za-z0-9_.]*$/.test(name)) {
      throw new Error(`invalid setting name ${JSON.stringify(name)}`)
    }
    const rendered =
      typeof value === 'number' ? String(value) : `'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`
    if (/[\r\n]/.test(rendered)) throw new Error(`setting ${name} has a line break in its value`)
    out += `${name} = ${rendered}\n`
  }
  return out
}

/**
 * The pg_hba.conf of a test cluster: the superuser and the replication role are trusted on loopback
 * and the local socket; every other role needs its password (SCRAM). Nothing but 127.0.0.1 is
 * accepted.
 *
 * @example
 * ```ts
 * fs.writeFileSync(path.join(dataDir, 'pg_hba.conf'), hbaConf())
 * ```
 */
export function hbaConf(): string {
  return [
    '# routemate/testing: loopback only',
    '# TYPE  DATABASE     USER          ADDRESS        METHOD',
    `local   all          ${SUPERUSER}                     trust`,
    `local   replication  ${REPLICATION_USER}                   trust`,
    'local   all          all                          scram-sha-256',
    `host    all          ${SUPERUSER}      127.0.0.1/32   trust`,
    `host    replication  ${REPLICATION_USER}    127.0.0.1/32   trust`,
    'host    all          all           127.0.0.1/32   scram-sha-256',
    '',
  ].join('\n')
}

/**
 * The libpq connection string a replica streams from the primary with.
 *
 * @example
 * ```ts
 * primaryConninfo(40001, 'replica1') // 'host=127.0.0.1 port=40001 user=replicator application_name=replica1 connect_timeout=2'
 * ```
 */
export function primaryConninfo(primaryPort: number, applicationName: string): string {
  return `host=127.0.0.1 port=${primaryPort} user=${REPLICATION_USER} application_name=${applicationName} connect_timeout=2`
}
