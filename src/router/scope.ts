import type { Session } from '../consistency/session.js'
import type { Cluster } from './cluster.js'
import type { TransactionContext } from './transaction-context.js'

/** How code inside a scope wants its queries routed. */
export type ScopeMode = 'read' | 'write' | 'primary'

/** The routing context carried by AsyncLocalStorage. Immutable: nested scopes make a new one. */
export interface Scope {
  readonly mode: ScopeMode
  /** The transaction in progress, if any: every statement goes to its connection. */
  readonly tx: TransactionContext | undefined
  /** The cluster (shard) chosen by an enclosing shard scope, if any. */
  readonly cluster: Cluster | undefined
  /** The read-your-writes session, if any. */
  readonly session: Session | undefined
  /**
   * For reads of this scope, whether the primary may serve them when no replica is usable;
   * `undefined` (every scope but the pool facade's default one, see `target_session_attrs`): the
   * cluster's `fallbackToPrimary`.
   */
  readonly fallback?: boolean
}

const READ: Scope = Object.freeze({ mode: 'read', tx: undefined, cluster: undefined, session: undefined })
const PRIMARY: Scope = Object.freeze({
  mode: 'primary',
  tx: undefined,
  cluster: undefined,
  session: undefined,
})

/** A scope like `parent` with another mode (shared frozen objects when nothing else is set). */
export function withMode(parent: Scope | undefined, mode: ScopeMode): Scope {
  if (
    parent === undefined ||
    (parent.cluster === undefined && parent.session === undefined && parent.tx === undefined)
  ) {
    if (mode === 'read') return READ
    if (mode === 'primary') return PRIMARY
  }
  return Object.freeze({
    mode,
    tx: parent?.tx,
    cluster: parent?.cluster,
    session: parent?.session,
  })
}

/** A scope like `parent` (mode, transaction, shard) in the read-your-writes session `session`. */
export function withSession(parent: Scope | undefined, session: Session): Scope {
  return Object.freeze({ mode: parent?.mode ?? 'write', tx: parent?.tx, cluster: parent?.cluster, session })
}

/**
 * Starts a lazy thenable (Drizzle query builders, Prisma's PrismaPromise run only when awaited)
 * inside the current scope: returned unawaited from a scope callback, it would otherwise start
 * at the caller's `await`, after the scope ended.
 */
export function startedInScope<T>(value: T): T {
  if (
    value !== null &&
    typeof value === 'object' &&
    !(value instanceof Promise) &&
    typeof (value as { then?: unknown }).then === 'function'
  ) {
    return Promise.resolve(value) as T
  }
  return value
}

/** Calls a scope callback; passed to `AsyncLocalStorage.run` with `fn` as its argument (no closure per scope). */
export function callInScope<T>(fn: () => T): T {
  return startedInScope(fn())
}
