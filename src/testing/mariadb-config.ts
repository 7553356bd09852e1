/** What {@link renderMariaDbConfig} needs to know about one node. */
export interface MariaDbNodeConfig {
  readonly role: 'primary' | 'replica'
  /** 1 for the primary, 2.. for the replicas. */
  readonly serverId: number
  readonly port: number
  readonly basedir: string
  readonly datadir: string
  readonly socket: string
  readonly pidFile: string
  readonly errorLog: string
  /** OS user the server switches to (`user=`), only when started as root. */
  readonly osUser?: string
  /** Overrides `read_only` (e.g. after a promotion); default: on for replicas, off for the primary. */
  readonly readOnly?: boolean
  /** Extra `[mysqld]` settings, written last so they win. */
  readonly settings?: Readonly<Record<string, string | number>>
}

/**
 * Renders the `my.cnf` of one test node: loopback only, binary log with GTIDs on every node (so a
 * promoted replica can serve as a primary), small buffers, relaxed durability.
 *
 * Defaults: `binlog_format=ROW`, `gtid_strict_mode=1`, `log_slave_updates=1`, `read_only=1` on
 * replicas, `innodb_buffer_pool_size=32M`, `innodb_log_file_size=8M`,
 * `innodb_flush_log_at_trx_commit=2`, `sync_binlog=0`, `slave_net_timeout=5` and
 * `master_retry_count=1000000` (a replica reconnects within about a second after its primary
 * restarts). Caveat: pass the file as the server's first option (`--defaults-file=`), or the
 * settings of `/etc/mysql` leak in.
 *
 * @example
 * ```ts
 * writeFileSync(cnf, renderMariaDbConfig({ role: 'replica', serverId: 2, port, basedir, datadir, ... }))
 * ```
 */
export function renderMariaDbConfig(c: MariaDbNodeConfig): string {
  const readOnly = c.readOnly ?? c.role === 'replica'
  const settings: Record<string, string | number> = {
    ...(c.osUser !== undefined ? { user: c.osUser } : {}),
    basedir: c.basedir,
    datadir: c.datadir,
    port: c.port,
    'bind-address': '127.0.0.1',
    socket: c.socket,
    'pid-file': c.pidFile,
    'log-error': c.errorLog,
    server_id: c.serverId,
    log_bin: 'mysql-bin',
    relay_log: 'relay-bin',
    binlog_format: 'ROW',
    gtid_strict_mode: 1,
    log_slave_updates: 1,
    read_only: readOnly ? 1 : 0,
    'skip-name-resolve': '',
    performance_schema: 'OFF',
    character_set_server: 'utf8mb4',
    collation_server: 'utf8mb4_general_ci',
    innodb_buffer_pool_size: '32M',
    innodb_log_file_size: '8M',
    innodb_flush_log_at_trx_commit: 2,
    sync_binlog: 0,
    slave_net_timeout: 5,
    master_retry_count: 1_000_000,
    ...c.settings,
  }
  const lines = ['# Written by routemate/testing (startMariaDbCluster). Test use only.', '[mysqld]']
  for (const [key, value] of Object.entries(settings)) {
    lines.push(value === '' ? key : `${key}=${value}`)
  }
  return `${lines.join('\n')}\n`
}

/** Accounts and database that {@link renderMariaDbBootstrapSql} creates. */
export interface MariaDbBootstrap {
  readonly database: string
  readonly appUser: string
  readonly appPassword: string
  readonly rootPassword: string
  readonly replUser: string
  readonly replPassword: string
  /** The host name `mariadb-install-db` used for its `root@<host>` account (dropped). */
  readonly hostname: string
}

/**
 * Renders the SQL that `mariadb-install-db --extra-file=` runs right after creating the system
 * tables: passwords for `root` (`localhost` and `127.0.0.1`), a `REPLICATION SLAVE` account, the
 * application database and its user (ALL on that database only: no SUPER, no READ_ONLY ADMIN, so
 * `read_only` applies to it).
 *
 * Caveat: the install runs with grant tables off; the leading `FLUSH PRIVILEGES` turns them on, or
 * `CREATE USER` fails with 1290. Nothing here is written to a binary log, so every node copied from
 * this data dir starts with an empty GTID position and replication applies cleanly.
 *
 * @example
 * ```ts
 * writeFileSync(sqlFile, renderMariaDbBootstrapSql({ database: 'app', appUser: 'app', ... }), { mode: 0o600 })
 * ```
 */
export function renderMariaDbBootstrapSql(b: MariaDbBootstrap): string {
  const app = `${sqlString(b.appUser)}@'%'`
  const repl = `${sqlString(b.replUser)}@'127.0.0.1'`
  const db = sqlIdentifier(b.database)
  return [
    'FLUSH PRIVILEGES;',
    `ALTER USER 'root'@'localhost' IDENTIFIED BY ${sqlString(b.rootPassword)};`,
    `CREATE OR REPLACE USER 'root'@'127.0.0.1' IDENTIFIED BY ${sqlString(b.rootPassword)};`,
    `GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;`,
    `DROP USER IF EXISTS 'root'@'::1', 'root'@${sqlString(b.hostname)};`,
    `CREATE USER ${repl} IDENTIFIED BY ${sqlString(b.replPassword)};`,
    `GRANT REPLICATION SLAVE ON *.* TO ${repl};`,
    `CREATE DATABASE ${db} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;`,
    `CREATE USER ${app} IDENTIFIED BY ${sqlString(b.appPassword)};`,
    `GRANT ALL PRIVILEGES ON ${db}.* TO ${app};`,
    // What routemate's probes read (SHOW SLAVE STATUS); neither bypasses read_only.
    `GRANT SLAVE MONITOR, BINLOG MONITOR ON *.* TO ${app};`,
    '',
  ].join('\n')
}

/**
 * Quotes a value as a MariaDB string literal (backslashes and quotes escaped).
 *
 * @example
 * ```ts
 * sqlString("it's") // "'it\\'s'"
 * ```
 */
export function sqlString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\0/g, '\\0')}'`
}

/**
 * Quotes a MariaDB identifier with backticks.
 *
 * @example
 * ```ts
 * sqlIdentifier('my`db') // '`my``db`'
 * ```
 */
export function sqlIdentifier(name: string): string {
  return `\`${name.replace(/`/g, '``')}\``
}
