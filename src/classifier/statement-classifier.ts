import { ConfigError } from '../errors/config-error.js'
import { SqlLexer } from './sql-lexer.js'
import { Scan } from './statement-body.js'
import { scanStatement } from './statement-scanner.js'
import {
  bareFunctionName,
  createWriteFunctionMatcher,
  MYSQL_WRITE_FUNCTIONS,
  PG_WRITE_FUNCTIONS,
} from './write-functions.js'

/**
 * Where the classifier sends a statement: `'read'` may go to a replica, `'write'` goes to the primary.
 *
 * @example
 * ```ts
 * const kind: StatementKind = classify('SELECT 1') // 'read'
 * ```
 */
export type StatementKind = 'read' | 'write'

/**
 * Options of {@link createStatementClassifier}.
 *
 * @example
 * ```ts
 * { dialect: 'postgres', writeFunctions: ['audit.touch', 'bump_counter'] }
 * ```
 */
export interface ClassifierOptions {
  /** SQL dialect of the statements: decides comments, quoting and the built-in write functions. Required. */
  dialect: 'postgres' | 'mysql'
  /**
   * Extra function names (case-insensitive, optionally schema-qualified) that make a statement go to
   * the primary, e.g. `['audit_log_insert']`. The schema is not compared: `audit.touch` also catches
   * `touch(...)` and `other.touch(...)`, which a search path may resolve to it. A trailing `*`
   * matches a prefix (`'audit_*'`). Default: `[]`.
   */
  writeFunctions?: readonly string[]
}

/**
 * Builds the opt-in statement classifier (`classify: true`): it proves a statement outside any
 * scope a plain read, which may then go to a replica; everything else is a `'write'`, for the primary.
 *
 * A statement is a `'read'` only when all of these hold:
 * - it is one statement: a `;` may be followed only by whitespace, comments and more `;`;
 * - it starts (after opening parentheses) with SELECT, WITH whose CTE bodies are all
 *   SELECT/VALUES/TABLE/WITH, VALUES, TABLE (pg), SHOW (pg: any; mysql: schema objects such as
 *   TABLES, COLUMNS, CREATE ..., not session or server state such as STATUS, VARIABLES, WARNINGS),
 *   EXPLAIN of such a statement without ANALYZE, or DESCRIBE/DESC/EXPLAIN of a table (mysql);
 * - no locking clause anywhere (FOR UPDATE/SHARE/NO KEY UPDATE/KEY SHARE, LOCK IN SHARE MODE);
 * - no INTO, and no INSERT, UPDATE, DELETE or MERGE word anywhere (data-modifying CTEs);
 * - no call (a name, quoted or not, then `(`) of a sequence, lock, session-state or side-effect
 *   function (see `PG_WRITE_FUNCTIONS`, `MYSQL_WRITE_FUNCTIONS`) or of a `writeFunctions` entry;
 *   no MariaDB `NEXT VALUE FOR` / `PREVIOUS VALUE FOR`;
 * - mysql: no `@` variable (user or system: session state), no SQL_CALC_FOUND_ROWS, no executable
 *   comment (`/*!...*\/`, `/*M!...*\/`, which the server runs); optimizer hints `/*+...*\/` are comments;
 * - the text is well formed: every string, quoted name, dollar quote and comment ends, and the
 *   parentheses balance. Words inside strings, quoted names and comments never count.
 *
 * Caveats:
 * - Conservative by design: a write is never called a read, but some reads are called writes, e.g. a
 *   column named `update`, `SUBSTRING(x FROM 1 FOR update)`, mysql `INSERT(str, ...)`, pg `EXPLAIN
 *   (ANALYZE false)`, mysql `TABLE t`.
 * - It sees the text only: a function that writes behind a view, an operator or a trigger, or a
 *   user-defined function with side effects, is a read unless listed in `writeFunctions`. A replica
 *   rejects such a write (it is read-only); it does not run it.
 * - Backslashes: strings are read with the servers' defaults (pg `standard_conforming_strings=on`,
 *   mysql without `NO_BACKSLASH_ESCAPES`). A statement whose strings hold a backslash is read a
 *   second time with the other setting, and is a read only if that reading finds nothing to send
 *   to the primary either.
 * - The function returned reuses one lexer: it is synchronous and not reentrant (which JavaScript
 *   guarantees). Cost: one pass over the text (two when a string holds a backslash), a few times a
 *   bare character loop over it; no allocation but a dollar-quote tag.
 * - A `;` may be followed by more `;` (empty statements), which both servers accept.
 *
 * @throws {ConfigError} when `dialect` or a `writeFunctions` entry is invalid.
 * @example
 * ```ts
 * const classify = createStatementClassifier({ dialect: 'postgres', writeFunctions: ['audit.touch'] })
 * classify('SELECT * FROM users WHERE id = $1') // 'read'
 * classify('SELECT * FROM jobs FOR UPDATE SKIP LOCKED') // 'write'
 * classify("SELECT nextval('s')") // 'write'
 * classify('SELECT audit.touch(1)') // 'write'
 * ```
 */
export function createStatementClassifier(options: ClassifierOptions): (sql: string) => StatementKind {
  const dialect = options?.dialect
  if (dialect !== 'postgres' && dialect !== 'mysql') {
    throw new ConfigError('dialect', `expected "postgres" or "mysql", got ${String(dialect)}`)
  }
  const extra = options.writeFunctions ?? []
  if (!Array.isArray(extra)) throw new ConfigError('writeFunctions', 'expected an array of function names')
  const names = (dialect === 'mysql' ? MYSQL_WRITE_FUNCTIONS : PG_WRITE_FUNCTIONS).slice()
  extra.forEach((entry: unknown, i) => {
    const name = typeof entry === 'string' ? bareFunctionName(entry) : ''
    if (name === '' || name === '*') {
      throw new ConfigError(`writeFunctions[${i}]`, `expected a function name, got ${JSON.stringify(entry)}`)
    }
    names.push(name)
  })
  const mysql = dialect === 'mysql'
  const lexer = new SqlLexer(dialect)
  const isWriteFunction = createWriteFunctionMatcher(names)

  return function classify(sql: string): StatementKind {
    if (typeof sql !== 'string') return 'write'
    lexer.reset(sql)
    if (scanStatement(lexer, sql, mysql, isWriteFunction) !== Scan.READ) return 'write'
    if (!lexer.ambiguous) return 'read'
    // Under the other backslash setting, text that is malformed would be rejected by the server.
    lexer.reset(sql, true)
    return scanStatement(lexer, sql, mysql, isWriteFunction) === Scan.WRITE ? 'write' : 'read'
  }
}
