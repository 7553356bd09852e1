import { describe, expect, it } from 'vitest'
import { readOnlyViolation } from './read-only-guard.js'
import { hasSecondStatement } from './sql-guard.js'

describe('readOnlyViolation', () => {
  const everywhere = ['read', 'transaction', 'connection'] as const

  it.each([
    'SET default_transaction_read_only = off',
    'SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE',
    'set transaction read write',
    'SET TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ WRITE',
    'SET LOCAL transaction_read_only = off',
    'SET LOCAL "default_transaction_read_only" TO off',
    'SET LOCAL ROLE admin',
    'SET LOCAL session_authorization = admin',
    'SET SESSION TRANSACTION READ WRITE',
    'SET @@session.tx_read_only = 0',
    'SET STATEMENT tx_read_only=0 FOR INSERT INTO t VALUES (1)',
    'RESET ALL',
    'RESET default_transaction_read_only',
    'DISCARD ALL',
    'BEGIN READ WRITE',
    'START TRANSACTION READ WRITE',
    'begin isolation level serializable read write',
    'BEGIN /* x */ READ WRITE',
    'BEGIN; INSERT INTO t VALUES (1)',
    'COMMIT AND CHAIN',
    "PREPARE TRANSACTION 'x'",
    "PREPARE s FROM 'SET SESSION TRANSACTION READ WRITE'",
    'EXECUTE s',
    'DEALLOCATE s',
    "XA START 'x'",
    'USE other',
    'LISTEN chan',
    'NOTIFY chan',
    'KILL 12',
    "CHANGE MASTER TO MASTER_HOST='x'",
    'STOP SLAVE',
    "BINLOG 'x'",
    'FLUSH PRIVILEGES',
    'DECLARE c CURSOR WITH HOLD FOR SELECT 1',
    '/*! SET SESSION TRANSACTION READ WRITE */',
    '/*M!100000 SET SESSION TRANSACTION READ WRITE */',
    '/*!50000 INSERT INTO t VALUES (1) */',
    'INSERT INTO t VALUES (1)',
  ])('refuses %s in every read context', (sql) => {
    for (const where of everywhere) expect(readOnlyViolation(sql, where), where).toBeDefined()
  })

  it.each([
    'SELECT 1',
    'select * from settings',
    'WITH x AS (SELECT 1) SELECT * FROM x',
    'SHOW server_version',
    'CALL report()',
    'VALUES (1)',
    'EXPLAIN SELECT 1',
    'sett', // an identifier-like word, not SET
  ])('lets %s through in every read context', (sql) => {
    for (const where of everywhere) expect(readOnlyViolation(sql, where), where).toBeUndefined()
  })

  it.each([
    'SAVEPOINT a',
    'RELEASE SAVEPOINT a',
    'release a',
    'ROLLBACK TO SAVEPOINT a',
    'rollback work to a',
    'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ',
    'SET TRANSACTION READ ONLY',
    'SET TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY, DEFERRABLE',
    'SET LOCAL statement_timeout = 5000',
    "SET LOCAL search_path TO 'app'",
    'DECLARE c CURSOR FOR SELECT 1',
  ])('lets %s through inside transactions and on connections, not in routed reads', (sql) => {
    expect(readOnlyViolation(sql, 'read')).toBeDefined()
    expect(readOnlyViolation(sql, 'transaction')).toBeUndefined()
    expect(readOnlyViolation(sql, 'connection')).toBeUndefined()
  })

  it.each([
    'BEGIN',
    'begin;',
    'BEGIN READ ONLY',
    'START TRANSACTION READ ONLY',
    'START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY',
    'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    'COMMIT',
    'ROLLBACK',
    'END',
    'ABORT',
  ])("lets an ORM's own %s through on a connection only", (sql) => {
    expect(readOnlyViolation(sql, 'read')).toBeDefined()
    expect(readOnlyViolation(sql, 'transaction')).toBeDefined()
    expect(readOnlyViolation(sql, 'connection')).toBeUndefined()
  })

  it('refuses CALL outside a transaction when the dialect needs it (PostgreSQL), never inside one', () => {
    expect(readOnlyViolation('CALL p()', 'read', true, true)).toMatch(/CALL/)
    expect(readOnlyViolation('call p()', 'connection', true, true)).toMatch(/CALL/)
    expect(readOnlyViolation('CALL p()', 'transaction', true, true)).toBeUndefined()
    expect(readOnlyViolation('CALL p()', 'read', true, false)).toBeUndefined()
  })

  it('refuses a text of several statements when the driver would run them all', () => {
    const sql = "SELECT 1; COMMIT; SET default_transaction_read_only = off; INSERT INTO t VALUES ('x')"
    expect(readOnlyViolation(sql, 'read', true)).toBeUndefined()
    expect(readOnlyViolation(sql, 'read', false)).toMatch(/several statements/)
    expect(readOnlyViolation('SELECT 1;', 'read', false)).toBeUndefined()
  })
})

describe('hasSecondStatement', () => {
  it.each([
    ['SELECT 1', false],
    ['SELECT 1;', false],
    ['SELECT 1 ;  ;\n', false],
    ['SELECT 1; -- trailing comment', false],
    ['SELECT 1; /* trailing */', false],
    ['SELECT 1; SELECT 2', true],
    ["SELECT 'a;b'", true],
    ['SELECT 1; /* unterminated', true],
    ['SELECT 1; /*! SET x = 1 */', true],
  ])('%j -> %j', (sql, expected) => {
    expect(hasSecondStatement(sql)).toBe(expected)
  })
})
