import type { Cluster } from './cluster.js'
import type { Driver } from './driver.js'
import type { ScopedConnection } from './facade-host.js'
import type { RouterNode } from './router-node.js'
import { leadingKeyword } from './sql-guard.js'
import type { TransactionContext } from './transaction-context.js'

/** What a scoped connection needs from the router. */
export interface ScopedConnectionDeps {
  readonly driver: Driver
  /** Throws `ReadOnlyViolationError` for an evident write when `readOnly`. */
  check(text: string, node: RouterNode, readOnly: boolean): void
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
  const savepoints: string[] = []
  return {
    conn,
    node: node.name,
    readOnly,
    pinned: tx !== undefined,
    check: (text) => deps.check(text, node, readOnly),
    translate: (text) => {
      if (tx === undefined) return text
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
      node.release(conn, destroy)
    },
  }
}
