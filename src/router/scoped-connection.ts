import { ReadOnlyViolationError } from '../errors/read-only-violation-error.js'
import type { Cluster } from './cluster.js'
import type { Driver } from './driver.js'
import type { ScopedConnection } from './facade-host.js'
import type { ReadContext } from './read-only-guard.js'
import type { RouterNode } from './router-node.js'
import { leadingKeyword } from './sql-guard.js'
import type { TransactionContext } from './transaction-context.js'

/** What a scoped connection needs from the router. */
export interface ScopedConnectionDeps {
  readonly driver: Driver
  /**
   * Throws `ReadOnlyViolationError` when `readOnly` and the statement may not run in that read
   * context (`connection`: an ORM's own read-only transactions allowed; `transaction`: inside
   * routemate's read-only transaction).
   */
  check(text: string, node: RouterNode, readOnly: boolean, where: ReadContext, oneStatement: boolean): void
  /** Records and maps an error raised on a pooled (not transaction) connection. */
  failed(cluster: Cluster, node: RouterNode, err: unknown, read: boolean): unknown
}

const START_TRANSACTION = /^\s*start\s+transaction\b/i
const ROLLBACK_TO = /^\s*rollback\s+(work\s+|transaction\s+)?to\b/i

/**
 * Wraps a connection checked out for the pool facade. Inside a transaction it is the
 * transaction's own connection: `release` leaves it alone and BEGIN/COMMIT/ROLLBACK sent by a
 * library become savepoints, so the outermost transaction wins.
 */
export function scopedConnection(
  deps: ScopedConnectionDeps,
  cluster: Cluster,
  node: RouterNode,
  conn: unknown,
  readOnly: boolean,
  tx: TransactionContext | undefined,
): ScopedConnection {
  let released = false
  /** A read-only connection on which the caller opened a transaction it has not ended yet. */
  let openTx = false
  const savepoints: string[] = []
  return {
    conn,
    node: node.name,
    readOnly,
    pinned: tx !== undefined,
    check: (text, oneStatement = true) => {
      if (!readOnly) return
      if (deps.driver.readOnlySessionLost?.(conn) === true) {
        openTx = true // never pooled again
        throw new ReadOnlyViolationError(
          `the read-only session of this connection to "${node.name}" was changed (by a function or routine); it runs nothing more`,
        )
      }
      if (tx === undefined) return deps.check(text, node, true, 'connection', oneStatement)
      // On a read-only transaction's connection, BEGIN and a COMMIT/ROLLBACK that matches it become
      // savepoints (see translate); anything else follows the transaction's own rules, so a
      // COMMIT that would end routemate's transaction is refused.
      const kw = leadingKeyword(text)
      if (kw === 'BEGIN' || (kw === 'START' && START_TRANSACTION.test(text))) return
      if ((kw === 'COMMIT' || kw === 'END' || kw === 'ROLLBACK') && savepoints.length > 0) return
      deps.check(text, node, true, 'transaction', oneStatement)
    },
    translate: (text) => {
      if (tx === undefined) {
        if (readOnly) {
          const kw = leadingKeyword(text)
          if (kw === 'BEGIN' || (kw === 'START' && START_TRANSACTION.test(text))) openTx = true
          else if (
            kw === 'COMMIT' ||
            kw === 'END' ||
            kw === 'ABORT' ||
            (kw === 'ROLLBACK' && !ROLLBACK_TO.test(text))
          )
            openTx = false
        }
        return text
      }
      const kw = leadingKeyword(text)
      if (kw === 'BEGIN' || (kw === 'START' && START_TRANSACTION.test(text))) {
        const name = `routemate_sp_${++tx.savepoints}`
        savepoints.push(name)
        return deps.driver.savepointSql(name, 'create')
      }
      if (kw === 'COMMIT' || kw === 'END') {
        const name = savepoints.pop()
        return name === undefined ? text : deps.driver.savepointSql(name, 'release')
      }
      if (kw === 'ROLLBACK' && !ROLLBACK_TO.test(text)) {
        const name = savepoints.pop()
        return name === undefined ? text : deps.driver.savepointSql(name, 'rollback')
      }
      return text
    },
    // A pooled connection outside `readOnly` on the primary carries writes: a lost one's outcome is unknown.
    timed: (done) => node.timed(conn, !readOnly && tx === undefined, done),
    fail: (err) => (tx !== undefined ? tx.fail(err) : deps.failed(cluster, node, err, readOnly)),
    release: (destroy) => {
      if (released || tx !== undefined) return
      released = true
      // A transaction left open on a read-only connection is never pooled (the next user would run in it).
      node.release(conn, destroy || openTx)
    },
  }
}
