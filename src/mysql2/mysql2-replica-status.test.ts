import { describe, expect, it } from 'vitest'
import { parseReplicaStatus, replicaStatusStatements } from './mysql2-replica-status.js'
import { parseServerVersion, versionAtLeast } from './mysql2-server-version.js'

/** `SHOW ALL REPLICAS STATUS` on MariaDB 10.11, a healthy GTID replica (as mysql2 returns it). */
const MARIADB_REPLICA = {
  Connection_name: '',
  Slave_SQL_State: 'Slave has read all relay log; waiting for more updates',
  Slave_IO_State: 'Waiting for master to send event',
  Master_Host: '127.0.0.1',
  Master_User: 'repl',
  Master_Port: 40123,
  Connect_Retry: 1,
  Master_Log_File: 'mysql-bin.000002',
  Read_Master_Log_Pos: 1563,
  Relay_Log_File: 'relay-bin.000003',
  Relay_Log_Pos: 1862,
  Relay_Master_Log_File: 'mysql-bin.000002',
  Slave_IO_Running: 'Yes',
  Slave_SQL_Running: 'Yes',
  Replicate_Rewrite_DB: '',
  Replicate_Do_DB: '',
  Replicate_Ignore_DB: '',
  Replicate_Do_Table: '',
  Replicate_Ignore_Table: '',
  Replicate_Wild_Do_Table: '',
  Replicate_Wild_Ignore_Table: '',
  Last_Errno: 0,
  Last_Error: '',
  Skip_Counter: 0,
  Exec_Master_Log_Pos: 1563,
  Relay_Log_Space: 2472,
  Until_Condition: 'None',
  Until_Log_File: '',
  Until_Log_Pos: 0,
  Master_SSL_Allowed: 'No',
  Master_SSL_CA_File: '',
  Master_SSL_CA_Path: '',
  Master_SSL_Cert: '',
  Master_SSL_Cipher: '',
  Master_SSL_Key: '',
  Seconds_Behind_Master: 0,
  Master_SSL_Verify_Server_Cert: 'No',
  Last_IO_Errno: 0,
  Last_IO_Error: '',
  Last_SQL_Errno: 0,
  Last_SQL_Error: '',
  Replicate_Ignore_Server_Ids: '',
  Master_Server_Id: 1,
  Master_SSL_Crl: '',
  Master_SSL_Crlpath: '',
  Using_Gtid: 'Slave_Pos',
  Gtid_IO_Pos: '0-1-12',
  Replicate_Do_Domain_Ids: '',
  Replicate_Ignore_Domain_Ids: '',
  Parallel_Mode: 'optimistic',
  SQL_Delay: 0,
  SQL_Remaining_Delay: null,
  Slave_SQL_Running_State: 'Slave has read all relay log; waiting for more updates',
  Slave_DDL_Groups: 2,
  Slave_Non_Transactional_Groups: 0,
  Slave_Transactional_Groups: 10,
  Retried_transactions: 0,
  Max_relay_log_size: 1073741824,
  Executed_log_entries: 61,
  Slave_received_heartbeats: 3,
  Slave_heartbeat_period: 2.5,
  Gtid_Slave_Pos: '0-1-12',
}

/** `SHOW REPLICA STATUS` on MySQL 8.0, a healthy GTID replica (default channel). */
const MYSQL_REPLICA = {
  Replica_IO_State: 'Waiting for source to send event',
  Source_Host: '10.0.0.1',
  Source_User: 'repl',
  Source_Port: 3306,
  Connect_Retry: 60,
  Source_Log_File: 'binlog.000004',
  Read_Source_Log_Pos: 8342,
  Relay_Log_File: 'relay-log.000006',
  Relay_Log_Pos: 8549,
  Relay_Source_Log_File: 'binlog.000004',
  Replica_IO_Running: 'Yes',
  Replica_SQL_Running: 'Yes',
  Replicate_Do_DB: '',
  Replicate_Ignore_DB: '',
  Replicate_Do_Table: '',
  Replicate_Ignore_Table: '',
  Replicate_Wild_Do_Table: '',
  Replicate_Wild_Ignore_Table: '',
  Last_Errno: 0,
  Last_Error: '',
  Skip_Counter: 0,
  Exec_Source_Log_Pos: 8342,
  Relay_Log_Space: 8968,
  Until_Condition: 'None',
  Until_Log_File: '',
  Until_Log_Pos: 0,
  Source_SSL_Allowed: 'No',
  Source_SSL_CA_File: '',
  Source_SSL_CA_Path: '',
  Source_SSL_Cert: '',
  Source_SSL_Cipher: '',
  Source_SSL_Key: '',
  Seconds_Behind_Source: 0,
  Source_SSL_Verify_Server_Cert: 'No',
  Last_IO_Errno: 0,
  Last_IO_Error: '',
  Last_SQL_Errno: 0,
  Last_SQL_Error: '',
  Replicate_Ignore_Server_Ids: '',
  Source_Server_Id: 1,
  Source_UUID: '3e11fa47-71ca-11e1-9e33-c80aa9429562',
  Source_Info_File: 'mysql.slave_master_info',
  SQL_Delay: 0,
  SQL_Remaining_Delay: null,
  Replica_SQL_Running_State: 'Replica has read all relay log; waiting for more updates',
  Source_Retry_Count: 86400,
  Source_Bind: '',
  Last_IO_Error_Timestamp: '',
  Last_SQL_Error_Timestamp: '',
  Source_SSL_Crl: '',
  Source_SSL_Crlpath: '',
  Retrieved_Gtid_Set: '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-27',
  Executed_Gtid_Set: '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-27,\n8a94f357-aab4-11df-86ab-c80aa9429562:1-2',
  Auto_Position: 1,
  Replicate_Rewrite_DB: '',
  Channel_Name: '',
  Source_TLS_Version: '',
  Source_public_key_path: '',
  Get_Source_public_key: 0,
  Network_Namespace: '',
}

/** `SHOW SLAVE STATUS` on MySQL 8.0 (pre-8.0.22 column names), reduced to the columns that matter. */
const MYSQL_SLAVE = {
  Slave_IO_State: 'Waiting for master to send event',
  Master_Host: '10.0.0.1',
  Slave_IO_Running: 'Yes',
  Slave_SQL_Running: 'Yes',
  Seconds_Behind_Master: 3,
  Channel_Name: '',
}

describe('parseReplicaStatus (MariaDB 10.11)', () => {
  it('reads a healthy replica', () => {
    expect(parseReplicaStatus([MARIADB_REPLICA])).toEqual({ replicating: true, reportedLagMs: 0 })
  })
  it('reports lag in ms', () => {
    expect(parseReplicaStatus([{ ...MARIADB_REPLICA, Seconds_Behind_Master: 7 }])).toEqual({
      replicating: true,
      reportedLagMs: 7000,
    })
  })
  it('keeps replicating while the IO thread reconnects to a dead primary', () => {
    const row = {
      ...MARIADB_REPLICA,
      Slave_IO_State: 'Reconnecting after a failed master event read',
      Slave_IO_Running: 'Connecting',
      Seconds_Behind_Master: null,
      Last_IO_Errno: 2003,
      Last_IO_Error:
        "error reconnecting to master 'repl@127.0.0.1:40123' - retry-time: 1  maximum-retries: 1000000",
    }
    expect(parseReplicaStatus([row])).toEqual({ replicating: true })
  })
  it('is not replicating after STOP SLAVE', () => {
    const row = {
      ...MARIADB_REPLICA,
      Slave_SQL_State: '',
      Slave_IO_State: '',
      Slave_IO_Running: 'No',
      Slave_SQL_Running: 'No',
      Seconds_Behind_Master: null,
    }
    expect(parseReplicaStatus([row])).toEqual({ replicating: false })
  })
  it('is not replicating when only the SQL thread stopped (e.g. a duplicate-key error)', () => {
    const row = {
      ...MARIADB_REPLICA,
      Slave_SQL_Running: 'No',
      Seconds_Behind_Master: null,
      Last_Errno: 1062,
      Last_SQL_Errno: 1062,
      Last_SQL_Error:
        "Could not execute Write_rows_v1 event on table app.t; Duplicate entry '1' for key 'PRIMARY'",
    }
    expect(parseReplicaStatus([row])).toEqual({ replicating: false })
  })
  it('is not replicating when only the IO thread stopped', () => {
    expect(parseReplicaStatus([{ ...MARIADB_REPLICA, Slave_IO_Running: 'No' }])).toMatchObject({
      replicating: false,
    })
  })
  it('judges every multi-source connection and reports the worst lag', () => {
    const other = { ...MARIADB_REPLICA, Connection_name: 'east', Seconds_Behind_Master: 12 }
    expect(parseReplicaStatus([MARIADB_REPLICA, other])).toEqual({ replicating: true, reportedLagMs: 12000 })
    expect(parseReplicaStatus([MARIADB_REPLICA, { ...other, Slave_SQL_Running: 'No' }])).toMatchObject({
      replicating: false,
    })
  })
})

describe('parseReplicaStatus (MySQL 8)', () => {
  it('reads SHOW REPLICA STATUS', () => {
    expect(parseReplicaStatus([MYSQL_REPLICA])).toEqual({ replicating: true, reportedLagMs: 0 })
    expect(parseReplicaStatus([{ ...MYSQL_REPLICA, Seconds_Behind_Source: 2 }])).toEqual({
      replicating: true,
      reportedLagMs: 2000,
    })
  })
  it('reads SHOW SLAVE STATUS column names', () => {
    expect(parseReplicaStatus([MYSQL_SLAVE])).toEqual({ replicating: true, reportedLagMs: 3000 })
  })
  it('treats Connecting as replicating and No as stopped', () => {
    const connecting = { ...MYSQL_REPLICA, Replica_IO_Running: 'Connecting', Seconds_Behind_Source: null }
    expect(parseReplicaStatus([connecting])).toEqual({ replicating: true })
    const stopped = { ...MYSQL_REPLICA, Replica_IO_Running: 'No', Replica_SQL_Running: 'No' }
    expect(parseReplicaStatus([stopped])).toMatchObject({ replicating: false })
  })
  it('accepts lag as a string (bigNumberStrings) and ignores garbage', () => {
    expect(parseReplicaStatus([{ ...MYSQL_REPLICA, Seconds_Behind_Source: '5' }])).toEqual({
      replicating: true,
      reportedLagMs: 5000,
    })
    expect(parseReplicaStatus([{ ...MYSQL_REPLICA, Seconds_Behind_Source: 'x' }])).toEqual({
      replicating: true,
    })
  })
  it('accepts values returned as buffers', () => {
    const row = { ...MYSQL_SLAVE, Slave_SQL_Running: Buffer.from('No') }
    expect(parseReplicaStatus([row])).toMatchObject({ replicating: false })
  })
  it('ignores group replication channels', () => {
    const gr = {
      ...MYSQL_REPLICA,
      Channel_Name: 'group_replication_applier',
      Replica_IO_Running: 'No',
    }
    expect(parseReplicaStatus([gr])).toBeUndefined()
    expect(parseReplicaStatus([gr, MYSQL_REPLICA])).toEqual({ replicating: true, reportedLagMs: 0 })
  })
})

describe('parseReplicaStatus: nothing to judge', () => {
  it('returns undefined without rows or without thread columns', () => {
    expect(parseReplicaStatus([])).toBeUndefined()
    expect(parseReplicaStatus([{ Foo: 'bar' }])).toBeUndefined()
  })
})

describe('parseServerVersion', () => {
  it('reads MariaDB and MySQL versions', () => {
    expect(parseServerVersion('10.11.19-MariaDB-0+deb12u1')).toEqual({
      flavour: 'mariadb',
      major: 10,
      minor: 11,
      patch: 19,
    })
    expect(parseServerVersion('5.5.5-10.4.32-MariaDB-log')).toMatchObject({ major: 10, minor: 4, patch: 32 })
    expect(parseServerVersion('11.4.2-MariaDB')).toMatchObject({ flavour: 'mariadb', major: 11 })
    expect(parseServerVersion('8.0.36-0ubuntu0.22.04.1')).toEqual({
      flavour: 'mysql',
      major: 8,
      minor: 0,
      patch: 36,
    })
    expect(parseServerVersion('8.0.35-27')).toMatchObject({ flavour: 'mysql', patch: 35 })
    expect(parseServerVersion('weird')).toEqual({ flavour: 'mysql', major: 0, minor: 0, patch: 0 })
  })
  it('compares versions', () => {
    const v = parseServerVersion('8.0.22')
    expect(versionAtLeast(v, 8, 0, 22)).toBe(true)
    expect(versionAtLeast(v, 8, 0, 23)).toBe(false)
    expect(versionAtLeast(v, 5, 7, 99)).toBe(true)
    expect(versionAtLeast(v, 8, 1, 0)).toBe(false)
  })
})

describe('replicaStatusStatements', () => {
  const cases: [string, string, string][] = [
    ['8.0.21', 'SHOW SLAVE STATUS', 'SHOW REPLICA STATUS'],
    ['8.0.22', 'SHOW REPLICA STATUS', 'SHOW SLAVE STATUS'],
    ['8.4.0', 'SHOW REPLICA STATUS', 'SHOW SLAVE STATUS'],
    ['5.7.44-log', 'SHOW SLAVE STATUS', 'SHOW REPLICA STATUS'],
    ['10.5.0-MariaDB', 'SHOW ALL SLAVES STATUS', 'SHOW ALL REPLICAS STATUS'],
    ['10.5.1-MariaDB', 'SHOW ALL REPLICAS STATUS', 'SHOW ALL SLAVES STATUS'],
    ['10.11.19-MariaDB-0+deb12u1', 'SHOW ALL REPLICAS STATUS', 'SHOW ALL SLAVES STATUS'],
    ['10.3.39-MariaDB', 'SHOW ALL SLAVES STATUS', 'SHOW ALL REPLICAS STATUS'],
  ]
  for (const [version, first, fallback] of cases) {
    it(`${version}: ${first}`, () => {
      expect(replicaStatusStatements(parseServerVersion(version))).toEqual([first, fallback])
    })
  }
})
