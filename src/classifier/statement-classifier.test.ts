import { describe, expect, it } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import { createStatementClassifier, type StatementKind } from './statement-classifier.js'

const pg = createStatementClassifier({ dialect: 'postgres', writeFunctions: ['audit.touch', '"Ops".bump_*'] })
const my = createStatementClassifier({ dialect: 'mysql', writeFunctions: ['audit_log_insert'] })

type Row = readonly [sql: string, kind: StatementKind]

/** Statements with the same answer in both dialects. */
const BOTH: Row[] = [
  ['SELECT 1', 'read'],
  ['select 1;', 'read'],
  ['SELECT 1 ; ; -- done', 'read'],
  ['select 1; delete from t', 'write'],
  ['SELECT 1; SELECT 2', 'write'],
  ['/* comment */ SELECT 1', 'read'],
  ['-- leading\nSELECT * FROM t', 'read'],
  ['SELECT * FROM t -- for update', 'read'],
  ['SELECT * FROM t /* FOR UPDATE */ WHERE a = 1', 'read'],
  ["SELECT 'FOR UPDATE'", 'read'],
  ["SELECT 'it''s; DELETE FROM t' FROM t", 'read'],
  ['SELECT * FROM t WHERE a = ? AND b IN (?, ?)', 'read'],
  ['SELECT count(*), max(b) FROM t GROUP BY c HAVING count(*) > 1 ORDER BY 1 LIMIT 10', 'read'],
  ['SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.a)', 'read'],
  ['SELECT * FROM t WHERE id IN (SELECT id FROM u FOR UPDATE)', 'write'],
  ['SELECT * FROM t FOR UPDATE', 'write'],
  ['select * from t for update nowait', 'write'],
  ['SELECT * FROM t FOR UPDATE OF t SKIP LOCKED', 'write'],
  ['SELECT * FROM t FOR SHARE', 'write'],
  ['SELECT * FROM t\nFOR\n-- gap\nUPDATE', 'write'],
  ['SELECT nextval_like_name FROM t', 'read'],
  ['SELECT substring(a FROM 1 FOR 2) FROM t', 'read'],
  ['SELECT 1 FROM t WHERE x = 1for update', 'write'],
  ['WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM t WHERE n < 5) SELECT * FROM t', 'read'],
  ['WITH a AS (SELECT 1), b AS (SELECT * FROM a) SELECT * FROM b', 'read'],
  ['WITH a AS (WITH b AS (SELECT 1) SELECT * FROM b) SELECT * FROM a', 'read'],
  ['WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d', 'write'],
  ['WITH x AS (SELECT 1) UPDATE t SET a = 1', 'write'],
  ['WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x', 'write'],
  ['(SELECT 1) UNION (SELECT 2)', 'read'],
  ['((SELECT 1)) UNION ALL (SELECT 2) ORDER BY 1', 'read'],
  ['(SELECT 1', 'write'],
  ['SELECT 1)', 'write'],
  ['VALUES (1),(2)', 'read'],
  ['EXPLAIN SELECT 1', 'read'],
  ['explain analyze select 1', 'write'],
  ['EXPLAIN ANALYZE SELECT * FROM t', 'write'],
  ['EXPLAIN DELETE FROM t', 'write'],
  ['SELECT a INTO b FROM t', 'write'],
  ['', 'write'],
  ['   ', 'write'],
  ['-- only a comment', 'write'],
  [';', 'write'],
  ["SELECT 'abc", 'write'],
  ['SELECT "abc', 'write'],
  ['SELECT 1 /* unterminated', 'write'],
  ['INSERT INTO t VALUES (1)', 'write'],
  ['UPDATE t SET a = 1', 'write'],
  ['DELETE FROM t', 'write'],
  ['CREATE TABLE t (a int)', 'write'],
  ['CALL p()', 'write'],
  ['DO 1', 'write'],
  ['BEGIN', 'write'],
  ['COMMIT', 'write'],
  ['SET x = 1', 'write'],
  ['PREPARE s FROM SELECT 1', 'write'],
  ['EXECUTE s', 'write'],
  ['DECLARE c CURSOR FOR SELECT 1', 'write'],
  ['FETCH NEXT FROM c', 'write'],
  ['LOCK TABLE t', 'write'],
  ['ANALYZE t', 'write'],
  ['SELECTx 1', 'write'],
  ['SELECT * FROM t WHERE a = 1 OR b = 2 ORDER BY c DESC LIMIT 5 OFFSET 10', 'read'],
  ['SELECT t.a, u.b FROM t JOIN u ON u.id = t.u_id LEFT JOIN v USING (id) WHERE t.x > 0.5e3', 'read'],
  ["SELECT CASE WHEN a > 1 THEN 'x' ELSE 'y' END FROM t", 'read'],
  ['SELECT * FROM t FETCH FIRST 10 ROWS ONLY', 'read'],
  ["SELECT coalesce(a, b), lower(c), replace(d, 'x', 'y') FROM t", 'read'],
  ['SELECT update FROM t', 'write'], // conservative: a column named like a DML word
]

/** PostgreSQL only. */
const PG: Row[] = [
  ['SELECT $$ FOR UPDATE $$', 'read'],
  ['SELECT $tag$ nextval( $tag$', 'read'],
  ['SELECT $a$ $$ ; DELETE $$ $a$ FROM t', 'read'],
  ['SELECT $tag$ unterminated', 'write'],
  ['SELECT * FROM t WHERE id = $1 AND name = $2', 'read'],
  ['SELECT $1::int, a::text FROM t', 'read'],
  ['SELECT a$$b FROM t', 'read'],
  ['SELECT "nextval" FROM t', 'read'],
  ['SELECT "nextval"(1)', 'write'],
  ['SELECT "for", "update", "into" FROM t', 'read'],
  ["SELECT nextval('s')", 'write'],
  ["SELECT NEXTVAL ('s')", 'write'],
  ["SELECT nextval /* x */ ('s')", 'write'],
  ["SELECT pg_catalog.nextval('s')", 'write'],
  ['SELECT "public"."nextval"(\'s\')', 'write'],
  ["SELECT setval('s', 1)", 'write'],
  ["SELECT currval('s')", 'write'],
  ['SELECT lastval()', 'write'],
  ['SELECT pg_advisory_lock(1)', 'write'],
  ['SELECT pg_advisory_xact_lock(1)', 'write'],
  ['SELECT pg_try_advisory_lock(1)', 'write'],
  ['SELECT pg_advisory_lock_shared(1)', 'write'],
  ['SELECT pg_advisory_unlock_all()', 'write'],
  ["SELECT pg_notify('c', 'x')", 'write'],
  ['SELECT txid_current()', 'write'],
  ['SELECT pg_current_xact_id()', 'write'],
  ['SELECT pg_current_wal_lsn()', 'write'],
  ["SELECT set_config('a.b', 'c', false)", 'write'],
  ["SELECT * FROM dblink('db', 'select 1') AS t(a int)", 'write'],
  ["SELECT lo_import('/tmp/x')", 'write'],
  ['SELECT lo_unlink(1)', 'write'],
  ['SELECT pg_wal_replay_pause()', 'write'],
  ["SELECT query_to_xml('delete from t', true, false, '')", 'write'],
  ['SELECT pg_sleep(1)', 'read'],
  ['SELECT lower(a), log(2, 8), localtime FROM t', 'read'],
  ['SELECT audit.touch(1)', 'write'],
  ['SELECT touch(1)', 'write'],
  ['SELECT audit.touch FROM audit', 'read'],
  ['SELECT "Ops".bump_counter(1)', 'write'],
  ['SELECT bumper(1)', 'read'],
  ['SELECT * INTO new_t FROM t', 'write'],
  ['SELECT * FROM t FOR NO KEY UPDATE', 'write'],
  ['SELECT * FROM t FOR KEY SHARE', 'write'],
  ['SELECT * FROM t FOR UPDATE OF t NOWAIT', 'write'],
  ['WITH x AS MATERIALIZED (SELECT 1) SELECT * FROM x', 'read'],
  ['WITH x AS NOT MATERIALIZED (SELECT 1) SELECT * FROM x', 'read'],
  ['WITH x AS (VALUES (1)), y AS (TABLE t) SELECT * FROM x, y', 'read'],
  ['WITH x AS (MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE) SELECT 1', 'write'],
  ['WITH x AS (frobnicate) SELECT 1', 'write'],
  [
    'WITH RECURSIVE t(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM t) SEARCH DEPTH FIRST BY id SET ord SELECT * FROM t',
    'read',
  ],
  ['SELECT * FROM unnest(ARRAY[1,2]) WITH ORDINALITY AS u(x, n)', 'read'],
  ['SELECT rank() OVER w FROM t WINDOW w AS (ORDER BY a)', 'read'],
  ["SELECT * FROM crosstab('select 1') AS ct(a int, b int)", 'read'],
  ['TABLE users', 'read'],
  ["VALUES (1, 'a'), (2, 'b') ORDER BY 1", 'read'],
  ['SHOW search_path', 'read'],
  ['SHOW ALL', 'read'],
  ['SHOW', 'write'],
  ['EXPLAIN (FORMAT JSON, ANALYZE) SELECT 1', 'write'],
  ['EXPLAIN (ANALYZE true, BUFFERS) SELECT 1', 'write'],
  ['EXPLAIN (ANALYZE false) SELECT 1', 'write'],
  ['EXPLAIN (FORMAT JSON, COSTS off) SELECT * FROM t', 'read'],
  ['EXPLAIN VERBOSE SELECT 1', 'read'],
  ['EXPLAIN ANALYSE SELECT 1', 'write'],
  ['EXPLAIN WITH x AS (SELECT 1) SELECT * FROM x', 'read'],
  ['EXPLAIN EXECUTE s(1)', 'write'],
  ['EXPLAIN CREATE TABLE t AS SELECT 1', 'write'],
  ['DESCRIBE t', 'write'],
  ['COPY t TO STDOUT', 'write'],
  ['LISTEN c', 'write'],
  ['REFRESH MATERIALIZED VIEW v', 'write'],
  ['SELECT 1 /* outer /* inner */ FOR UPDATE */', 'read'],
  ['SELECT 1 /* outer /* inner */ still open', 'write'],
  ["SELECT E'it\\'s FOR UPDATE' FROM t", 'read'],
  ["SELECT E'\\\\' FOR UPDATE", 'write'],
  ["SELECT 'a\\' FROM t", 'read'], // one string with standard_conforming_strings=on; malformed with off
  ["SELECT 'a\\'' FOR UPDATE -- '", 'write'], // off: a locking read
  ['SELECT U&"\\006eextval"(\'s\')', 'write'],
  ["SELECT U&\"!006eextval\" UESCAPE '!' ('s')", 'write'],
  ['SELECT 5 # 3, 2 @ -1 FROM t', 'read'],
  ['SELECT data @> \'{"a":1}\' FROM t', 'read'],
  ['SELECT * FROM t WHERE a --> 2\n', 'read'],
  ['SELECT 1 -- unterminated line comment', 'read'],
  ['SELECT NEXT VALUE FOR s', 'write'],
]

/** MySQL / MariaDB only. */
const MY: Row[] = [
  ['SELECT * FROM t LOCK IN SHARE MODE', 'write'],
  ['SELECT * FROM t FOR UPDATE SKIP LOCKED', 'write'],
  ['SELECT LAST_INSERT_ID()', 'write'],
  ['SELECT last_insert_id ()', 'write'],
  ["SELECT GET_LOCK('a', 1)", 'write'],
  ["SELECT RELEASE_LOCK('a')", 'write'],
  ['SELECT RELEASE_ALL_LOCKS()', 'write'],
  ["SELECT IS_FREE_LOCK('a')", 'write'],
  ['SELECT FOUND_ROWS()', 'write'],
  ['SELECT ROW_COUNT()', 'write'],
  ['SELECT CONNECTION_ID()', 'write'],
  ['SELECT NEXTVAL(s)', 'write'],
  ['SELECT NEXT VALUE FOR s', 'write'],
  ['SELECT PREVIOUS VALUE FOR s', 'write'],
  ["SELECT MASTER_POS_WAIT('log', 4)", 'write'],
  ['SELECT SLEEP(1), BENCHMARK(10, 1), UUID_SHORT()', 'read'],
  ['SELECT audit_log_insert(1)', 'write'],
  ['SELECT @a := 1', 'write'],
  ['SELECT @a', 'write'],
  ['SELECT @@version', 'write'],
  ['SELECT `for` FROM t', 'read'],
  ['SELECT `a``b`, `nextval` FROM `db`.`t`', 'read'],
  ['SELECT `nextval`(1)', 'write'],
  ["SELECT 'it\\'s' FROM t", 'read'],
  ["SELECT 'a\\' FOR UPDATE -- '", 'write'], // NO_BACKSLASH_ESCAPES: a locking read
  ["SELECT 'a\\'; DELETE FROM t; -- '", 'write'],
  ['SELECT "double FOR UPDATE" FROM t', 'read'],
  ['SELECT "it\\"s" FROM t', 'read'],
  ["SELECT * INTO OUTFILE '/tmp/x' FROM t", 'write'],
  ['SELECT a INTO @x FROM t', 'write'],
  ["SELECT * FROM t INTO DUMPFILE '/tmp/x'", 'write'],
  ['SELECT SQL_CALC_FOUND_ROWS * FROM t', 'write'],
  ['SELECT * FROM t # FOR UPDATE', 'read'],
  ['SELECT 1 --1 FOR UPDATE', 'write'],
  ['SELECT 1 -- FOR UPDATE', 'read'],
  ['SELECT 1 /* a /* b */ FOR UPDATE */', 'write'],
  ['SELECT 1 /*! FOR UPDATE */', 'write'],
  ['SELECT /*!40001 SQL_NO_CACHE */ * FROM t', 'write'],
  ['SELECT /*M!100000 1 */ 2', 'write'],
  ['SELECT /*+ MAX_EXECUTION_TIME(1000) */ * FROM t', 'read'],
  ['SELECT $$ FOR UPDATE $$', 'write'],
  ['SELECT a$b FROM t', 'read'],
  ["SELECT _utf8mb4'x', N'y', X'0F' FROM t", 'read'],
  ['SELECT * FROM t USE INDEX FOR JOIN (i) WHERE a = ?', 'read'],
  ['SELECT * FROM t FORCE KEY (i)', 'read'],
  ['SELECT a FROM t GROUP BY a WITH ROLLUP', 'read'],
  ["SELECT * FROM t FOR SYSTEM_TIME AS OF TIMESTAMP '2020-01-01'", 'read'],
  ["SELECT INSERT('abc', 1, 1, 'x')", 'write'], // conservative
  ['SELECT * FROM t PARTITION (p0)', 'read'],
  ['SHOW TABLES', 'read'],
  ["SHOW FULL TABLES LIKE 'a%'", 'read'],
  ['SHOW COLUMNS FROM t', 'read'],
  ['SHOW CREATE TABLE t', 'read'],
  ['SHOW TABLE STATUS', 'read'],
  ['SHOW INDEX FROM t', 'read'],
  ['SHOW DATABASES', 'read'],
  ['SHOW WARNINGS', 'write'],
  ['SHOW STATUS', 'write'],
  ["SHOW VARIABLES LIKE 'x'", 'write'],
  ['SHOW FULL PROCESSLIST', 'write'],
  ['SHOW MASTER STATUS', 'write'],
  ['SHOW SLAVE STATUS', 'write'],
  ['SHOW ENGINE INNODB STATUS', 'write'],
  ['DESCRIBE t', 'read'],
  ['DESC db.t', 'read'],
  ['describe `t` `col`', 'read'],
  ["DESCRIBE t 'a%'", 'read'],
  ['EXPLAIN t', 'read'],
  ['EXPLAIN SELECT * FROM t', 'read'],
  ['DESCRIBE SELECT * FROM t', 'read'],
  ['EXPLAIN FORMAT=JSON SELECT * FROM t', 'read'],
  ['EXPLAIN EXTENDED SELECT 1', 'read'],
  ['EXPLAIN ANALYZE SELECT * FROM t', 'write'],
  ['EXPLAIN FORMAT=TREE ANALYZE SELECT 1', 'write'],
  ['EXPLAIN FOR CONNECTION 5', 'write'],
  ['EXPLAIN UPDATE t SET a = 1', 'write'],
  ['EXPLAIN REPLACE t VALUES (1)', 'write'],
  ['DESCRIBE t a b', 'write'],
  ['TABLE t', 'write'], // conservative: TABLE is a pg statement here
  ['REPLACE INTO t VALUES (1)', 'write'],
  ['HANDLER t OPEN', 'write'],
  ['DO SLEEP(1)', 'write'],
  ['WITH x AS (SELECT 1) SELECT * FROM x', 'read'],
  ['SELECT 5 # 3', 'read'],
]

describe('createStatementClassifier', () => {
  it('has a table of at least 120 statements', () => {
    expect(BOTH.length * 2 + PG.length + MY.length).toBeGreaterThanOrEqual(120)
  })

  describe.each([
    ['postgres', pg],
    ['mysql', my],
  ] as const)('%s: both dialects', (_dialect, classify) => {
    it.each(BOTH)('%j -> %s', (sql, kind) => {
      expect(classify(sql)).toBe(kind)
    })
  })

  describe('postgres', () => {
    it.each(PG)('%j -> %s', (sql, kind) => {
      expect(pg(sql)).toBe(kind)
    })
  })

  describe('mysql', () => {
    it.each(MY)('%j -> %s', (sql, kind) => {
      expect(my(sql)).toBe(kind)
    })
  })

  it('classifies a non-string as a write', () => {
    expect(pg(undefined as unknown as string)).toBe('write')
  })

  it('rejects invalid options with a ConfigError naming the path', () => {
    expect(() => createStatementClassifier({ dialect: 'oracle' as 'mysql' })).toThrow(ConfigError)
    expect(() => createStatementClassifier({ dialect: 'mysql', writeFunctions: ['ok', ''] })).toThrow(
      /writeFunctions\[1\]/,
    )
    expect(() =>
      createStatementClassifier({ dialect: 'mysql', writeFunctions: 'x' as unknown as [] }),
    ).toThrow(ConfigError)
  })

  it('keeps one classifier per dialect independent', () => {
    expect(pg('SHOW WARNINGS')).toBe('read')
    expect(my('SHOW WARNINGS')).toBe('write')
  })
})

/** Deterministic PRNG (mulberry32), so a failure reproduces. */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const SAFE_COLUMNS = [
  'a',
  't.b',
  'count(*)',
  "'FOR UPDATE' AS s",
  "'nextval(''s'')'",
  "'; DELETE FROM t'",
  "'C:\\\\dir'",
  'coalesce(a, 0)',
  'lower(name)',
  '1 + 2.5 * 3e2',
  'CASE WHEN a > 0 THEN 1 ELSE 0 END',
  '(SELECT max(x) FROM u)',
  'sum(x) OVER (PARTITION BY y ORDER BY z)',
  '/* FOR UPDATE INTO */ b',
  '-- INTO x; DELETE\nc',
]
const SAFE_TAILS = [
  'FROM t',
  'FROM s.t AS x',
  'FROM t JOIN u ON t.id = u.t_id',
  'FROM (SELECT 1 AS a) sub',
  'WHERE a = ?',
  "WHERE name LIKE 'into%'",
  'WHERE x IN (SELECT y FROM z WHERE z.k = 1)',
  'WHERE EXISTS (SELECT 1 FROM v WHERE v.a = t.a)',
  'GROUP BY a HAVING count(*) > 1',
  'ORDER BY a DESC',
  'LIMIT 10',
]
const SAFE_EXTRA = {
  postgres: [
    '$$ FOR UPDATE $$',
    '$q$ nextval( $q$',
    '"nextval"',
    '"for update"',
    "E'\\' INTO'",
    'x::text',
    '$1',
  ],
  mysql: ['`for`', '`nextval`', '"FOR UPDATE"', "'it''s'", "_utf8mb4'x'", '# INTO\n1', '/*+ BKA(t) */ 2'],
}
const DANGEROUS = {
  both: [
    'FOR UPDATE',
    'FOR SHARE',
    'INTO x',
    '; DELETE FROM t',
    'INSERT INTO t VALUES (1)',
    'UPDATE t SET a = 1',
  ],
  postgres: [
    'FOR NO KEY UPDATE',
    'FOR KEY SHARE',
    'pg_advisory_lock(1)',
    "pg_catalog.setval('s', 1)",
    '"nextval"(1)',
    'txid_current()',
    "lo_import('x')",
    "dblink_exec('x')",
    'audit.touch(1)',
  ],
  mysql: [
    'LOCK IN SHARE MODE',
    '@v := 1',
    "GET_LOCK('a', 1)",
    'LAST_INSERT_ID()',
    '/*! FOR UPDATE */',
    'SQL_CALC_FOUND_ROWS',
    'NEXT VALUE FOR s',
    '`get_lock`(1)',
    'audit_log_insert(1)',
  ],
}

describe.each([
  ['postgres', pg],
  ['mysql', my],
] as const)('%s: random statements', (dialect, classify) => {
  const rnd = prng(dialect === 'postgres' ? 42 : 4242)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!
  const columns = [...SAFE_COLUMNS, ...SAFE_EXTRA[dialect]]
  const dangerous = [...DANGEROUS.both, ...DANGEROUS[dialect]]
  const cases = Array.from({ length: 1000 }, () => {
    const pieces = [pick(['SELECT', 'select distinct', '/* hi */ SELECT', '(SELECT'])]
    const n = 1 + Math.floor(rnd() * 4)
    for (let i = 0; i < n; i++) pieces.push(i === 0 ? pick(columns) : `, ${pick(columns)}`)
    for (const tail of SAFE_TAILS) if (rnd() < 0.3) pieces.push(tail)
    if (pieces[0] === '(SELECT') pieces.push(')')
    const fragment = pick(dangerous)
    const at = Math.floor(rnd() * (pieces.length + 1))
    const bad = [...pieces]
    bad.splice(at, 0, rnd() < 0.5 ? fragment.toLowerCase() : fragment)
    return { safe: pieces.join(' '), bad: bad.join(' ') }
  })

  it('1,000 SELECTs built from safe fragments are reads', () => {
    const wrong = cases.filter((c) => classify(c.safe) !== 'read').map((c) => c.safe)
    expect(wrong).toEqual([])
  })

  it('each becomes a write with one dangerous fragment inserted anywhere outside strings', () => {
    const wrong = cases.filter((c) => classify(c.bad) !== 'write').map((c) => c.bad)
    expect(wrong).toEqual([])
  })
})
