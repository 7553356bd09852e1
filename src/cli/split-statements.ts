import { SqlLexer } from '../classifier/sql-lexer.js'
import { TokenKind } from '../classifier/sql-token.js'

/**
 * Splits a text of SQL statements at the semicolons that end them — not those inside strings,
 * quoted names, dollar quotes or comments — for servers that take one statement per query. Empty
 * statements are dropped; each statement is trimmed and has no trailing semicolon.
 *
 * @example
 * ```ts
 * splitStatements("CREATE TABLE t (s text); INSERT INTO t VALUES ('a;b');", 'postgres')
 * // ['CREATE TABLE t (s text)', "INSERT INTO t VALUES ('a;b')"]
 * ```
 */
export function splitStatements(text: string, dialect: 'postgres' | 'mysql'): string[] {
  const lexer = new SqlLexer(dialect)
  lexer.reset(text)
  const statements: string[] = []
  let from = 0
  for (let kind = lexer.next(); kind !== TokenKind.End; kind = lexer.next()) {
    if (kind === TokenKind.Unterminated || kind === TokenKind.Opaque) break // the rest is one statement
    if (kind === TokenKind.Punct && lexer.char === 59 /* ; */) {
      statements.push(text.slice(from, lexer.start))
      from = lexer.end
    }
  }
  statements.push(text.slice(from))
  return statements.map((s) => s.trim()).filter((s) => s !== '')
}
