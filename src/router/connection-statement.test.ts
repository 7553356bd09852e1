import { describe, expect, it } from 'vitest'
import { connectionStatementKind } from './connection-statement.js'

describe('connectionStatementKind', () => {
  it.each([
    ['START TRANSACTION', 'begin'],
    ['START TRANSACTION;', 'begin'],
    ['  begin', 'begin'],
    ['BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY', 'begin'],
    ['START SLAVE', 'other'],
    ['SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;', 'set-transaction'],
    ['SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED', 'session'],
    ['COMMIT;', 'end'],
    ['commit work', 'end'],
    ['END', 'end'],
    ['ABORT', 'end'],
    ['ROLLBACK', 'end'],
    ['ROLLBACK WORK', 'end'],
    ['ROLLBACK TO SAVEPOINT typeorm_1', 'other'],
    ['ROLLBACK WORK TO SAVEPOINT s', 'other'],
    ['SAVEPOINT typeorm_1', 'other'],
    ['RELEASE SAVEPOINT typeorm_1', 'other'],
    ['SET LOCAL statement_timeout = 100', 'other'],
    ['SET search_path TO app', 'session'],
    ['SET @x = 1', 'session'],
    ['SET NAMES utf8mb4', 'session'],
    ['RESET ALL', 'session'],
    ['DISCARD ALL', 'session'],
    ['LISTEN jobs', 'session'],
    ['USE app', 'session'],
    ['LOCK TABLES t WRITE', 'session'],
    ['CREATE TEMPORARY TABLE t (id int)', 'session'],
    ['CREATE TEMP TABLE t (id int)', 'session'],
    ['CREATE TABLE t (id int)', 'other'],
    ['SELECT 1', 'other'],
    ['/* c */ SELECT 1', 'other'],
    ["SET time_zone = '+00:00'", 'setup'],
    ['SET client_min_messages TO warning', 'setup'],
    ['SET standard_conforming_strings=on', 'setup'],
    ["SET TIME ZONE 'UTC'", 'setup'],
    ['SET timezone = 1', 'setup'],
    ['SET TIME x', 'session'],
    [
      "SET standard_conforming_strings=on;SET client_min_messages TO warning;SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE;",
      'setup',
    ],
    ['SET client_min_messages TO warning; SET search_path TO app', 'session'],
    ['SELECT 1; SET search_path TO app', 'session'],
    ["SELECT ';' AS x", 'other'],
    ['BEGIN; INSERT INTO t VALUES (1); COMMIT', 'begin'],
  ] as const)('%s -> %s', (sql, kind) => {
    expect(connectionStatementKind(sql)).toBe(kind)
  })
})
