import { Keyword, keywordAt, SHOW_TARGETS_FROM } from './sql-keywords.js'
import type { SqlLexer } from './sql-lexer.js'
import { TokenKind } from './sql-token.js'
import { endOfStatement, Scan, scanBody } from './statement-body.js'
import type { WriteFunctionMatcher } from './write-functions.js'

const OPEN = 40 // (
const CLOSE = 41 // )
const DOT = 46 // .
const EQUALS = 61 // =

/**
 * Scans a statement the lexer was `reset` on, in one pass, and tells whether it is a plain read.
 * The statement must start (after opening parentheses) with SELECT, WITH, VALUES, TABLE (pg), SHOW,
 * EXPLAIN without ANALYZE, or DESCRIBE/DESC (mysql); then no token may lock, write, touch session
 * state or call a function `isWriteFunction` names (see `statement-classifier.ts` for the rules).
 *
 * Caveat: not reentrant per lexer (the lexer holds the cursor).
 *
 * @example
 * ```ts
 * lexer.reset('SELECT * FROM t FOR UPDATE')
 * scanStatement(lexer, 'SELECT * FROM t FOR UPDATE', false, isWrite) // Scan.WRITE
 * ```
 */
export function scanStatement(
  lx: SqlLexer,
  sql: string,
  mysql: boolean,
  isWriteFunction: WriteFunctionMatcher,
): Scan {
  let kind = lx.next()
  let depth = 0
  while (kind === TokenKind.Punct && lx.char === OPEN) {
    depth++
    kind = lx.next()
  }
  if (kind !== TokenKind.Word) return kind === TokenKind.Unterminated ? Scan.MALFORMED : Scan.WRITE
  switch (keywordAt(sql, lx.start, lx.end)) {
    case Keyword.SELECT:
    case Keyword.VALUES:
    case Keyword.WITH:
      return scanBody(lx, sql, mysql, isWriteFunction, depth)
    case Keyword.TABLE:
      return mysql ? Scan.WRITE : scanBody(lx, sql, mysql, isWriteFunction, depth)
    case Keyword.SHOW:
      return depth > 0 ? Scan.WRITE : scanShow(lx, sql, mysql, isWriteFunction)
    case Keyword.EXPLAIN:
      return depth > 0 ? Scan.WRITE : scanExplain(lx, sql, mysql, isWriteFunction)
    case Keyword.DESCRIBE:
    case Keyword.DESC:
      return depth > 0 || !mysql ? Scan.WRITE : scanExplain(lx, sql, mysql, isWriteFunction)
    default:
      return Scan.WRITE
  }
}

/** pg: `SHOW name` is a read. mysql: only `SHOW [FULL|EXTENDED] <schema object kind>` is. */
function scanShow(lx: SqlLexer, sql: string, mysql: boolean, isWriteFunction: WriteFunctionMatcher): Scan {
  let kind = lx.next()
  let kw = kind === TokenKind.Word ? keywordAt(sql, lx.start, lx.end) : Keyword.NONE
  if (mysql) {
    while (kw === Keyword.FULL || kw === Keyword.EXTENDED) {
      kind = lx.next()
      kw = kind === TokenKind.Word ? keywordAt(sql, lx.start, lx.end) : Keyword.NONE
    }
    if (kw < SHOW_TARGETS_FROM && kw !== Keyword.TABLE) return Scan.WRITE
  }
  return kind === TokenKind.Word ? scanBody(lx, sql, mysql, isWriteFunction, 0) : Scan.WRITE
}

/**
 * `EXPLAIN` / mysql `DESCRIBE`: any ANALYZE option (it runs the statement) is a write; the explained
 * statement must itself be a read. mysql `EXPLAIN tbl [col]` describes a table: a read.
 */
function scanExplain(lx: SqlLexer, sql: string, mysql: boolean, isWriteFunction: WriteFunctionMatcher): Scan {
  let kind = lx.next()
  if (!mysql && kind === TokenKind.Punct && lx.char === OPEN) {
    // pg option list: `(FORMAT JSON, ANALYZE false, ...)`; nothing nests inside it.
    for (kind = lx.next(); !isPunct(lx, CLOSE); kind = lx.next()) {
      if (kind === TokenKind.Word && isAnalyze(keywordAt(sql, lx.start, lx.end))) return Scan.WRITE
      if (kind === TokenKind.Unterminated) return Scan.MALFORMED
      if (kind === TokenKind.End || kind === TokenKind.Opaque || isPunct(lx, OPEN)) return Scan.WRITE
    }
    kind = lx.next()
  }
  for (; kind === TokenKind.Word; kind = lx.next()) {
    const kw = keywordAt(sql, lx.start, lx.end)
    if (isAnalyze(kw) || kw === Keyword.FOR) return Scan.WRITE // mysql EXPLAIN FOR CONNECTION: write too
    if (kw === Keyword.VERBOSE && !mysql) continue
    if ((kw === Keyword.EXTENDED || kw === Keyword.PARTITIONS) && mysql) continue
    if (kw === Keyword.FORMAT && mysql) {
      if (lx.next() !== TokenKind.Punct || lx.char !== EQUALS || lx.next() !== TokenKind.Word)
        return Scan.WRITE
      continue
    }
    if (kw === Keyword.SELECT || kw === Keyword.WITH || kw === Keyword.VALUES || kw === Keyword.TABLE) {
      return scanBody(lx, sql, mysql, isWriteFunction, 0)
    }
    break
  }
  if (kind === TokenKind.Punct && lx.char === OPEN) return scanBody(lx, sql, mysql, isWriteFunction, 0)
  if (mysql && (kind === TokenKind.Word || kind === TokenKind.Quoted)) return scanDescribeTable(lx, sql)
  return kind === TokenKind.Unterminated ? Scan.MALFORMED : Scan.WRITE
}

function isPunct(lx: SqlLexer, c: number): boolean {
  return lx.kind === TokenKind.Punct && lx.char === c
}

function isAnalyze(kw: Keyword): boolean {
  return kw === Keyword.ANALYZE || kw === Keyword.ANALYSE
}

/** mysql `DESCRIBE [db.]tbl [col | 'wild']`: exactly that shape, or a write. */
function scanDescribeTable(lx: SqlLexer, sql: string): Scan {
  if (lx.kind === TokenKind.Word && isDml(keywordAt(sql, lx.start, lx.end))) return Scan.WRITE
  let kind = lx.next()
  if (kind === TokenKind.Punct && lx.char === DOT) {
    kind = lx.next()
    if (kind !== TokenKind.Word && kind !== TokenKind.Quoted) return Scan.WRITE
    kind = lx.next()
  }
  if (kind === TokenKind.Word || kind === TokenKind.Quoted || kind === TokenKind.String) kind = lx.next()
  return endOfStatement(lx, kind)
}

function isDml(kw: Keyword): boolean {
  return (
    kw === Keyword.INSERT ||
    kw === Keyword.UPDATE ||
    kw === Keyword.DELETE ||
    kw === Keyword.MERGE ||
    kw === Keyword.INTO
  )
}
