import type { BeginOptions, IsolationLevel } from '../router/driver.js'

const ISOLATION: Readonly<Record<IsolationLevel, string>> = {
  'read uncommitted': 'READ UNCOMMITTED',
  'read committed': 'READ COMMITTED',
  'repeatable read': 'REPEATABLE READ',
  serializable: 'SERIALIZABLE',
}

const SAVEPOINT_NAME = /^[A-Za-z_][A-Za-z0-9_$]{0,63}$/

/**
 * The statements that begin a transaction on MySQL/MariaDB, to run in order on one connection.
 * MySQL cannot put an isolation level in `START TRANSACTION`, so a level adds a
 * `SET TRANSACTION ISOLATION LEVEL ...` first (it applies to the next transaction only).
 * Defaults: the server's isolation level (usually REPEATABLE READ), read-write.
 *
 * @throws TypeError for an isolation level other than the four SQL ones.
 * @example
 * ```ts
 * beginStatements({ readOnly: true, isolation: 'read committed' })
 * // ['SET TRANSACTION ISOLATION LEVEL READ COMMITTED', 'START TRANSACTION READ ONLY']
 * ```
 */
export function beginStatements(options: BeginOptions): string[] {
  const start = options.readOnly ? 'START TRANSACTION READ ONLY' : 'START TRANSACTION'
  if (options.isolation === undefined) return [start]
  const level = Object.hasOwn(ISOLATION, options.isolation) ? ISOLATION[options.isolation] : undefined
  if (level === undefined) {
    throw new TypeError(
      `unknown isolation level "${String(options.isolation)}" (expected ${Object.keys(ISOLATION).join(', ')})`,
    )
  }
  return [`SET TRANSACTION ISOLATION LEVEL ${level}`, start]
}

/**
 * Savepoint SQL: `SAVEPOINT n`, `RELEASE SAVEPOINT n`, `ROLLBACK TO SAVEPOINT n`.
 *
 * @throws TypeError for a name that is not a plain identifier (letters, digits, `_`, `$`; at most 64).
 * @example
 * ```ts
 * savepointSql('routemate_sp_1', 'rollback') // 'ROLLBACK TO SAVEPOINT routemate_sp_1'
 * ```
 */
export function savepointSql(name: string, op: 'create' | 'release' | 'rollback'): string {
  if (!SAVEPOINT_NAME.test(name)) throw new TypeError(`invalid savepoint name "${name}"`)
  if (op === 'create') return `SAVEPOINT ${name}`
  if (op === 'release') return `RELEASE SAVEPOINT ${name}`
  return `ROLLBACK TO SAVEPOINT ${name}`
}
