import { describe, expect, it } from 'vitest'
import { splitStatements } from './split-statements.js'

describe('splitStatements', () => {
  it('splits at the semicolons that end statements, trimmed, empty ones dropped', () => {
    expect(splitStatements(' CREATE TABLE t (id int);\nINSERT INTO t VALUES (1) ;; ', 'postgres')).toEqual([
      'CREATE TABLE t (id int)',
      'INSERT INTO t VALUES (1)',
    ])
    expect(splitStatements('SELECT 1', 'mysql')).toEqual(['SELECT 1'])
    expect(splitStatements(' ; ', 'mysql')).toEqual([])
  })

  it('keeps semicolons inside strings, quoted names, dollar quotes and comments', () => {
    expect(
      splitStatements(
        `INSERT INTO t VALUES ('a;b', "c;d"); -- x; y\nCREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql; /* ; */ SELECT 2`,
        'postgres',
      ),
    ).toEqual([
      `INSERT INTO t VALUES ('a;b', "c;d")`,
      '-- x; y\nCREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql',
      '/* ; */ SELECT 2',
    ])
    expect(splitStatements("INSERT INTO `a;b` VALUES ('x\\';'); # c;\nSELECT 1", 'mysql')).toEqual([
      "INSERT INTO `a;b` VALUES ('x\\';')",
      '# c;\nSELECT 1',
    ])
  })

  it('an unterminated string is the last statement, whole', () => {
    expect(splitStatements("SELECT 1; SELECT 'a; b", 'postgres')).toEqual(['SELECT 1', "SELECT 'a; b"])
  })
})
