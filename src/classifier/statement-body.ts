import { Keyword, keywordAt } from './sql-keywords.js'
import type { SqlLexer } from './sql-lexer.js'
import { TokenKind } from './sql-token.js'
import type { WriteFunctionMatcher } from './write-functions.js'

/**
 * Outcome of one scan: `READ` (proven a plain read), `WRITE` (a write, a lock, session state, or not
 * understood), or `MALFORMED` (unterminated or unbalanced text, which no server would run).
 *
 * @example
 * ```ts
 * scanBody(lexer, 'SELECT 1', false, isWrite, 0) === Scan.READ
 * ```
 */
export const Scan = { READ: 0, WRITE: 1, MALFORMED: 2 } as const

/** One of the {@link Scan} values. */
export type Scan = (typeof Scan)[keyof typeof Scan]

const OPEN = 40 // (
const CLOSE = 41 // )
const SEMI = 59 // ;
const AT = 64 // @
/** Depths whose `WITH` clause is tracked in a 31-bit mask; deeper ones rely on the DML-word rule alone. */
const MAX_TRACKED_DEPTH = 30

/**
 * After the statement: only `;`s, then the end; anything else is a second statement (a write).
 *
 * @example
 * ```ts
 * endOfStatement(lexer, lexer.next()) // Scan.READ when the rest is `; -- bye`
 * ```
 */
export function endOfStatement(lx: SqlLexer, kind: TokenKind): Scan {
  while (kind === TokenKind.Punct && lx.char === SEMI) kind = lx.next()
  if (kind === TokenKind.End) return Scan.READ
  return kind === TokenKind.Unterminated ? Scan.MALFORMED : Scan.WRITE
}

/**
 * The rest of the statement, from the current token (its first keyword). Writes: INTO, INSERT,
 * UPDATE, DELETE, MERGE anywhere; FOR + SHARE/NO/KEY (FOR UPDATE via UPDATE); LOCK IN; NEXT/PREVIOUS
 * VALUE; mysql `@` variables and SQL_CALC_FOUND_ROWS; pg UESCAPE; a call (name, then `(`) of a write
 * function; a CTE body (`AS (`, `MATERIALIZED (` in a WITH clause) not starting SELECT/VALUES/TABLE/
 * WITH/`(`; anything after a `;`; mysql executable comments. `startDepth`: the parentheses opened
 * before the first keyword.
 *
 * Caveat: reads the lexer's current token first, so call it right after the keyword was lexed.
 *
 * @example
 * ```ts
 * lexer.reset('SELECT 1'); lexer.next()
 * scanBody(lexer, 'SELECT 1', false, isWrite, 0) // Scan.READ
 * ```
 */
export function scanBody(
  lx: SqlLexer,
  sql: string,
  mysql: boolean,
  isWriteFunction: WriteFunctionMatcher,
  startDepth: number,
): Scan {
  let depth = startDepth
  let withDepths = 0 // bit d: a WITH clause is open at depth d and its main query has not begun
  let expectCteBody = false
  let prevKind: TokenKind = TokenKind.End
  let prevKw: Keyword = Keyword.NONE
  let prevStart = 0
  let prevEnd = 0
  let prevBackslash = false
  for (let kind = lx.kind; ; kind = lx.next()) {
    let kw: Keyword = Keyword.NONE
    if (kind === TokenKind.Word) {
      kw = keywordAt(sql, lx.start, lx.end)
      if (expectCteBody) {
        if (kw !== Keyword.SELECT && kw !== Keyword.VALUES && kw !== Keyword.TABLE && kw !== Keyword.WITH) {
          return Scan.WRITE
        }
        expectCteBody = false
      }
      switch (kw) {
        case Keyword.INTO:
        case Keyword.INSERT:
        case Keyword.UPDATE:
        case Keyword.DELETE:
        case Keyword.MERGE:
          return Scan.WRITE
        case Keyword.SHARE:
        case Keyword.NO:
        case Keyword.KEY:
          if (prevKw === Keyword.FOR) return Scan.WRITE
          break
        case Keyword.IN:
          if (prevKw === Keyword.LOCK) return Scan.WRITE
          break
        case Keyword.VALUE:
          if (prevKw === Keyword.NEXT || prevKw === Keyword.PREVIOUS) return Scan.WRITE
          break
        case Keyword.SQL_CALC_FOUND_ROWS:
          if (mysql) return Scan.WRITE
          break
        case Keyword.UESCAPE:
          if (!mysql) return Scan.WRITE
          break
        case Keyword.WITH:
          if (depth <= MAX_TRACKED_DEPTH) withDepths |= 1 << depth
          break
        case Keyword.SELECT:
        case Keyword.VALUES:
        case Keyword.TABLE:
          if (depth <= MAX_TRACKED_DEPTH) withDepths &= ~(1 << depth)
          break
      }
    } else if (kind === TokenKind.Punct) {
      const c = lx.char
      if (c === OPEN) {
        if (prevKind === TokenKind.Word) {
          if (isWriteFunction(sql, prevStart, prevEnd)) return Scan.WRITE
          if (
            (prevKw === Keyword.AS || prevKw === Keyword.MATERIALIZED) &&
            depth <= MAX_TRACKED_DEPTH &&
            (withDepths & (1 << depth)) !== 0
          ) {
            expectCteBody = true
          }
        } else if (prevKind === TokenKind.Quoted) {
          if (prevBackslash || isWriteFunction(sql, prevStart + 1, prevEnd - 1)) return Scan.WRITE
        }
        depth++
      } else if (expectCteBody) {
        return Scan.WRITE
      } else if (c === CLOSE) {
        if (depth === 0) return Scan.MALFORMED
        if (depth <= MAX_TRACKED_DEPTH) withDepths &= ~(1 << depth)
        depth--
      } else if (c === SEMI) {
        return depth === 0 ? endOfStatement(lx, kind) : Scan.MALFORMED
      } else if (c === AT && mysql) {
        return Scan.WRITE // a user or system variable: session state
      }
    } else if (kind === TokenKind.End) {
      return depth === 0 ? Scan.READ : Scan.MALFORMED
    } else if (kind === TokenKind.Unterminated) {
      return Scan.MALFORMED
    } else if (kind === TokenKind.Opaque || expectCteBody) {
      return Scan.WRITE
    }
    prevKind = kind
    prevKw = kw
    if (kind === TokenKind.Word || kind === TokenKind.Quoted) {
      prevStart = lx.start
      prevEnd = lx.end
      prevBackslash = lx.backslash
    }
  }
}
