import { describe, expect, it } from 'vitest'
import {
  isEvidentWrite,
  keywordStart,
  keywordTable,
  leadingKeyword,
  matchKeyword,
  wordEnd,
} from './sql-guard.js'

describe('leadingKeyword', () => {
  it.each([
    ['SELECT 1', 'SELECT'],
    ['  select 1', 'SELECT'],
    ['\n\t(SELECT 1)', 'SELECT'],
    ['-- comment\nINSERT INTO t', 'INSERT'],
    ['# mysql comment\nupdate t set a=1', 'UPDATE'],
    ['/* a /* nested */ comment */ delete from t', 'DELETE'],
    ['', ''],
    ['   ', ''],
    ['/* unterminated', ''],
    ['WITH x AS (SELECT 1) SELECT * FROM x', 'WITH'],
    ['begin', 'BEGIN'],
  ])('%j -> %j', (sql, kw) => {
    expect(leadingKeyword(sql)).toBe(kw)
  })
})

describe('isEvidentWrite', () => {
  it.each([
    'INSERT INTO t VALUES (1)',
    'update t set a = 1',
    'DELETE FROM t',
    'MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE',
    'REPLACE INTO t VALUES (1)',
    'CREATE TABLE t (a int)',
    'alter table t add column b int',
    'DROP TABLE t',
    'TRUNCATE t',
    'GRANT SELECT ON t TO x',
    'VACUUM t',
    'LOCK TABLE t',
    '/* x */ (insert into t values (1))',
  ])('write: %s', (sql) => {
    expect(isEvidentWrite(sql)).toBe(true)
  })

  it.each([
    'SELECT 1',
    'select * from inserts',
    'WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x',
    'SHOW server_version',
    'EXPLAIN SELECT 1',
    'BEGIN',
    'SET search_path = x',
    'VALUES (1)',
    'insertion', // an identifier, not a keyword
    '',
  ])('not evident: %s', (sql) => {
    expect(isEvidentWrite(sql)).toBe(false)
  })
})

describe('matchKeyword', () => {
  const table = keywordTable(['SET', 'START', 'STOP', 'CALL', 'DO'])
  const match = (sql: string) => {
    const i = keywordStart(sql)
    return matchKeyword(sql, i, wordEnd(sql, i), table)
  }
  it.each([
    ['SET x = 1', 'SET'],
    ['  set x = 1', 'SET'],
    ['/* c */ Start transaction', 'START'],
    ['stop slave', 'STOP'],
    ['call p()', 'CALL'],
    ['CALL(p)', 'CALL'],
    ['do sleep(1)', 'DO'],
    ['SELECT 1', undefined],
    ['SETX = 1', undefined],
    ['SET_X', undefined],
    ['SE', undefined],
    ['DOES', undefined],
    ['show variables', undefined],
    ['', undefined],
  ])('%j -> %j (the keyword leadingKeyword reads, when it is in the table)', (sql, kw) => {
    expect(match(sql)).toBe(kw)
    const lead = leadingKeyword(sql)
    expect(match(sql)).toBe(['SET', 'START', 'STOP', 'CALL', 'DO'].includes(lead) ? lead : undefined)
  })
})
