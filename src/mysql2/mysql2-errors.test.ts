import { describe, expect, it } from 'vitest'
import {
  classifyMysqlError,
  isPrivilegeError,
  isSyntaxError,
  isUnknownVariableError,
} from './mysql2-errors.js'

/** A server error as mysql2 builds it from an ERR packet (`packet.asError()` + the command's sql). */
function serverError(errno: number, code: string, message: string, sql: string | null = 'SELECT 1') {
  // While logging in, mysql2 sets `sql` from the handshake command, which has none.
  return Object.assign(new Error(message), {
    errno,
    code,
    sqlState: 'HY000',
    sqlMessage: message,
    sql: sql ?? undefined,
  })
}

/** A socket error as mysql2 passes it on (fatal). */
function socketError(code: string, message = `connect ${code} 127.0.0.1:3306`) {
  return Object.assign(new Error(message), { code, errno: -111, syscall: 'connect', fatal: true })
}

describe('classifyMysqlError', () => {
  it('read-only: a write refused by a read-only server or transaction', () => {
    const mariadb = serverError(
      1290,
      'ER_OPTION_PREVENTS_STATEMENT',
      'The MariaDB server is running with the --read-only option so it cannot execute this statement',
    )
    const mysql = serverError(
      1290,
      'ER_OPTION_PREVENTS_STATEMENT',
      'The MySQL server is running with the --super-read-only option so it cannot execute this statement',
    )
    expect(classifyMysqlError(mariadb)).toBe('read-only')
    expect(classifyMysqlError(mysql)).toBe('read-only')
    expect(
      classifyMysqlError(
        serverError(
          1792,
          'ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION',
          'Cannot execute statement in a READ ONLY transaction',
        ),
      ),
    ).toBe('read-only')
    expect(classifyMysqlError(serverError(1836, 'ER_READ_ONLY_MODE', 'Running in read-only mode'))).toBe(
      'read-only',
    )
    expect(classifyMysqlError(serverError(1036, 'ER_OPEN_AS_READONLY', "Table 't' is read only"))).toBe(
      'read-only',
    )
  })

  it('1290 about another option is a statement error', () => {
    const err = serverError(
      1290,
      'ER_OPTION_PREVENTS_STATEMENT',
      'The MySQL server is running with the --secure-file-priv option so it cannot execute this statement',
    )
    expect(classifyMysqlError(err)).toBe('statement')
  })

  it('timeout: mysql2 query inactivity timeout', () => {
    const err = Object.assign(new Error('Query inactivity timeout'), {
      code: 'PROTOCOL_SEQUENCE_TIMEOUT',
      errorno: 'PROTOCOL_SEQUENCE_TIMEOUT',
      syscall: 'query',
    })
    expect(classifyMysqlError(err)).toBe('timeout')
  })

  it('connection: socket errors', () => {
    for (const code of [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      'EHOSTUNREACH',
      'ENETUNREACH',
      'ENOTFOUND',
      'EAI_AGAIN',
    ]) {
      expect(classifyMysqlError(socketError(code)), code).toBe('connection')
    }
  })

  it('connection: a lost connection, a closed pool or connection', () => {
    const lost = Object.assign(new Error('Connection lost: The server closed the connection.'), {
      code: 'PROTOCOL_CONNECTION_LOST',
      fatal: true,
    })
    expect(classifyMysqlError(lost)).toBe('connection')
    expect(classifyMysqlError(new Error('Pool is closed.'))).toBe('connection')
    const closed = Object.assign(new Error("Can't add new command when connection is in closed state"), {
      fatal: true,
    })
    expect(classifyMysqlError(closed)).toBe('connection')
    expect(classifyMysqlError(new Error("Can't write in closed state"))).toBe('connection')
  })

  it('connection: any fatal error', () => {
    expect(
      classifyMysqlError(Object.assign(new Error('odd'), { code: 'PROTOCOL_PARSER_X', fatal: true })),
    ).toBe('connection')
  })

  it('connection: server errors of a node that cannot serve', () => {
    const cases: [number, string][] = [
      [1040, 'ER_CON_COUNT_ERROR'],
      [1045, 'ER_ACCESS_DENIED_ERROR'],
      [1053, 'ER_SERVER_SHUTDOWN'],
      [1927, 'ER_CONNECTION_KILLED'],
      [2006, 'CR_SERVER_GONE_ERROR'],
      [2013, 'CR_SERVER_LOST'],
      [4031, 'ER_CLIENT_INTERACTION_TIMEOUT'],
      [1158, 'ER_NET_READ_ERROR'],
    ]
    for (const [errno, code] of cases) {
      expect(classifyMysqlError(serverError(errno, code, code, null)), code).toBe('connection')
    }
  })

  it('unknown database: connection while logging in, statement for USE', () => {
    expect(classifyMysqlError(serverError(1049, 'ER_BAD_DB_ERROR', "Unknown database 'app'", null))).toBe(
      'connection',
    )
    expect(classifyMysqlError(serverError(1049, 'ER_BAD_DB_ERROR', "Unknown database 'x'", 'USE x'))).toBe(
      'statement',
    )
  })

  it('statement: everything else', () => {
    expect(
      classifyMysqlError(serverError(1064, 'ER_PARSE_ERROR', 'You have an error in your SQL syntax')),
    ).toBe('statement')
    expect(classifyMysqlError(serverError(1062, 'ER_DUP_ENTRY', "Duplicate entry '1'"))).toBe('statement')
    expect(classifyMysqlError(serverError(1213, 'ER_LOCK_DEADLOCK', 'Deadlock found'))).toBe('statement')
    expect(
      classifyMysqlError(serverError(1317, 'ER_QUERY_INTERRUPTED', 'Query execution was interrupted')),
    ).toBe('statement')
    expect(classifyMysqlError(serverError(1969, 'ER_STATEMENT_TIMEOUT', 'max_statement_time exceeded'))).toBe(
      'statement',
    )
    expect(
      classifyMysqlError(serverError(1223, 'ER_CANT_UPDATE_WITH_READLOCK', 'conflicting read lock')),
    ).toBe('statement')
    expect(classifyMysqlError(serverError(1227, 'ER_SPECIFIC_ACCESS_DENIED_ERROR', 'Access denied'))).toBe(
      'statement',
    )
    expect(classifyMysqlError(new Error('Queue limit reached.'))).toBe('statement')
    expect(classifyMysqlError(new Error('No connections available.'))).toBe('statement')
    expect(classifyMysqlError(new TypeError('Bind parameters must not contain undefined'))).toBe('statement')
  })

  it('statement: values that are not errors', () => {
    expect(classifyMysqlError(undefined)).toBe('statement')
    expect(classifyMysqlError(null)).toBe('statement')
    expect(classifyMysqlError('ECONNREFUSED')).toBe('statement')
    expect(classifyMysqlError(42)).toBe('statement')
  })
})

describe('error predicates', () => {
  it('recognises privilege, syntax and unknown-variable errors', () => {
    expect(isPrivilegeError({ errno: 1227 })).toBe(true)
    expect(isPrivilegeError({ errno: 1142 })).toBe(true)
    expect(isPrivilegeError({ errno: 1064 })).toBe(false)
    expect(isPrivilegeError(null)).toBe(false)
    expect(isSyntaxError({ errno: 1064 })).toBe(true)
    expect(isSyntaxError(undefined)).toBe(false)
    expect(isUnknownVariableError({ errno: 1193 })).toBe(true)
    expect(isUnknownVariableError({ errno: 1 })).toBe(false)
  })
})
