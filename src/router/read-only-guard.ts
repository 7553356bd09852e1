import {
  hasSecondStatement,
  isEvidentWriteAt,
  keywordStart,
  keywordTable,
  matchKeyword,
  wordEnd,
} from './sql-guard.js'

/**
 * Where a statement of a `readOnly` scope runs, which decides what session and transaction
 * control it may use:
 * - `read`: a routed read (`router.query` in a `readOnly` scope) on a pooled connection;
 * - `transaction`: inside `router.transaction(fn, { readOnly: true })`, which routemate opened and
 *   ends itself;
 * - `connection`: a connection of `router.pool().connect()` in a `readOnly` scope, where an ORM may
 *   run its own read-only transactions.
 */
export type ReadContext = 'read' | 'transaction' | 'connection'

/**
 * Leading keywords that change session or transaction state, or run server administration: in a
 * read context each is refused unless it is one of the few shapes {@link readOnlyViolation} allows.
 */
const CONTROL = new Set([
  'SET',
  'RESET',
  'DISCARD',
  'BEGIN',
  'START',
  'COMMIT',
  'END',
  'ROLLBACK',
  'ABORT',
  'SAVEPOINT',
  'RELEASE',
  'PREPARE',
  'EXECUTE',
  'DEALLOCATE',
  'XA',
  'USE',
  'LISTEN',
  'UNLISTEN',
  'NOTIFY',
  'CHECKPOINT',
  'DECLARE',
  'FLUSH',
  'KILL',
  'PURGE',
  'CHANGE',
  'STOP',
  'INSTALL',
  'UNINSTALL',
  'BINLOG',
  'SHUTDOWN',
  'RESTART',
  'HANDLER',
  'CACHE',
])

/** {@link CONTROL} and `CALL` by shape: a read (SELECT, WITH, SHOW...) is told apart with no allocation. */
const GUARDED = keywordTable([...CONTROL, 'CALL'])

const LEVEL = String.raw`(?:READ\s+UNCOMMITTED|READ\s+COMMITTED|REPEATABLE\s+READ|SERIALIZABLE)`
/** Transaction modes that keep a transaction read-only: an isolation level, READ ONLY, DEFERRABLE. */
const MODES = String.raw`(?:(?:\s*,?\s*(?:ISOLATION\s+LEVEL\s+${LEVEL}|READ\s+ONLY|(?:NOT\s+)?DEFERRABLE|WITH\s+CONSISTENT\s+SNAPSHOT))*)`
const END = String.raw`\s*;?\s*$`
const IDENT = `(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")`

/** `BEGIN` / `START TRANSACTION` with only read-only-preserving modes (an ORM's own transaction). */
const BEGIN_READ = new RegExp(
  String.raw`^(?:BEGIN(?:\s+(?:WORK|TRANSACTION))?|START\s+TRANSACTION)${MODES}${END}`,
  'i',
)
/** `COMMIT` / `END` / `ROLLBACK` / `ABORT` of the whole transaction, without `AND CHAIN`. */
const END_TX = new RegExp(
  String.raw`^(?:COMMIT|END|ROLLBACK|ABORT)(?:\s+(?:WORK|TRANSACTION))?(?:\s+AND\s+NO\s+CHAIN)?${END}`,
  'i',
)
/** Savepoints: `SAVEPOINT x`, `RELEASE [SAVEPOINT] x`, `ROLLBACK [WORK|TRANSACTION] TO [SAVEPOINT] x`. */
const SAVEPOINT = new RegExp(
  String.raw`^(?:SAVEPOINT\s+${IDENT}|RELEASE\s+(?:SAVEPOINT\s+)?${IDENT}|ROLLBACK(?:\s+(?:WORK|TRANSACTION))?\s+TO\s+(?:SAVEPOINT\s+)?${IDENT})${END}`,
  'i',
)
/** `SET TRANSACTION` with read-only-preserving modes only (never `SET SESSION ...`). */
const SET_TRANSACTION = new RegExp(String.raw`^SET\s+TRANSACTION${MODES}${END}`, 'i')
/** `SET LOCAL name = value` (PostgreSQL; undone at the end of the transaction). */
const SET_LOCAL = new RegExp(
  String.raw`^SET\s+LOCAL\s+(${IDENT}(?:\.${IDENT})?)\s*(?:=|\s+TO\s+)\s*(?:'(?:[^'\\]|'')*'|[A-Za-z0-9_.+-]+)${END}`,
  'i',
)
/** A cursor that outlives its transaction. */
const WITH_HOLD = /\bWITH\s+HOLD\b/i
/** Settings no read context may change, whatever the syntax. */
const PROTECTED_SETTING = /read_only|read_write|session_authorization|role/i

/**
 * Why a statement may not run in a read context, or `undefined` when it may. Refused: evident
 * writes (see `isEvidentWrite`) and every statement that changes session or transaction state or
 * runs administration (`SET`, `RESET`, `DISCARD`, `BEGIN`/`START TRANSACTION ... READ WRITE`,
 * `COMMIT`, `PREPARE`/`EXECUTE`, `USE`, `LISTEN`, `KILL`, `CHANGE MASTER`...), except these shapes:
 * in a `transaction` and on a `connection`, savepoints, `SET TRANSACTION` with an isolation level /
 * `READ ONLY` / `DEFERRABLE`, and `SET LOCAL name = value` (not a read-only setting); on a
 * `connection` also `BEGIN`/`START TRANSACTION` with read-only-preserving modes and
 * `COMMIT`/`ROLLBACK`/`END`/`ABORT`. The allowed shapes are matched whole (anything else in the text,
 * a comment included, refuses it), so an unusual spelling is refused rather than let through.
 * `oneStatement: false` says the driver would run every statement of the text (PostgreSQL's simple
 * protocol, used for a statement without parameters): then a text with a second statement is
 * refused too. `procedureNeedsTransaction` (PostgreSQL) also refuses `CALL` outside a transaction:
 * a procedure run on its own may `COMMIT` and start a new, read-write transaction after changing
 * the session's default; inside a transaction block it cannot. Allocates nothing for statements whose leading keyword is not a control keyword.
 *
 * @example
 * ```ts
 * readOnlyViolation('SELECT 1', 'read')                            // undefined
 * readOnlyViolation('SET default_transaction_read_only = off', 'read') // 'session or transaction control (SET)'
 * readOnlyViolation('BEGIN READ ONLY', 'connection')              // undefined
 * ```
 */
export function readOnlyViolation(
  sql: string,
  where: ReadContext,
  oneStatement = true,
  procedureNeedsTransaction = false,
): string | undefined {
  const i = keywordStart(sql) // one scan of the leading whitespace and comments serves both checks
  if (isEvidentWriteAt(sql, i)) return 'write statement'
  if (!oneStatement && hasSecondStatement(sql))
    return 'a text of several statements (pass values as parameters; a literal ";" counts too)'
  const kw = matchKeyword(sql, i, wordEnd(sql, i), GUARDED)
  if (kw === undefined) return undefined
  if (kw === 'CALL') {
    if (!procedureNeedsTransaction || where === 'transaction') return undefined
    return 'CALL of a procedure outside a transaction (run it in router.transaction(fn, { readOnly: true }))'
  }
  const rest = sql.slice(i)
  if (where !== 'read') {
    if (SAVEPOINT.test(rest) || SET_TRANSACTION.test(rest)) return undefined
    const local = SET_LOCAL.exec(rest)
    if (local !== null && !PROTECTED_SETTING.test(local[1] as string)) return undefined
    if (where === 'connection' && (BEGIN_READ.test(rest) || END_TX.test(rest))) return undefined
    if (kw === 'DECLARE' && !WITH_HOLD.test(rest)) return undefined // a cursor that ends with the transaction
  }
  return `session or transaction control (${kw}) is not allowed in a read-only ${
    where === 'read' ? 'scope outside a transaction' : where === 'transaction' ? 'transaction' : 'connection'
  }`
}
