import type { TokenRejectionReport } from '../consistency/token-audit.js'
import type { NodeState } from '../health/node-health.js'
import type { NodeRole } from './driver.js'

/** Fields shared by the events about one node. */
export interface NodeEventBase {
  /** Cluster (shard) name; `default` for an unsharded router. */
  readonly cluster: string
  /** Node name. */
  readonly node: string
  /** The node's configured role. */
  readonly role: NodeRole
}

/**
 * Every event a router emits, by name, with its payload. Payloads never hold a password.
 */
export interface RouterEvents {
  /** A node became usable again (probe success after being down or suspect). */
  'node:up': NodeEventBase & { readonly previous: NodeState }
  /** A node failed once (probe or connection error) but is still in use. */
  'node:suspect': NodeEventBase & { readonly reason: string }
  /** A node was marked down: no new queries go to it, its in-flight queries were aborted. */
  'node:down': NodeEventBase & { readonly reason: string; readonly source: 'probe' | 'query' }
  /** A node reports another role than configured (a promoted replica, a primary in recovery); it is not trusted until it matches again. */
  'node:role-mismatch': NodeEventBase & { readonly actual: NodeRole }
  /** A node's reported role matches its configured role again. */
  'node:role-ok': NodeEventBase
  /** A replica fell further behind than `maxReplicationLagMs` (or stopped replicating): not used for reads. */
  'node:lagging': NodeEventBase & { readonly lagMs: number | undefined; readonly maxLagMs: number }
  /** A lagging replica caught up: used for reads again. */
  'node:caught-up': NodeEventBase & { readonly lagMs: number | undefined }
  /** No replica of a cluster is usable any more: reads go to the primary (`toPrimary`) or fail. Once per change; at startup, decided once every replica's first probe has finished. */
  fallback: {
    readonly cluster: string
    readonly toPrimary: boolean
    /** Why each replica is unusable, e.g. `{ replica1: 'down', replica2: 'lagging' }`. */
    readonly replicas: Readonly<Record<string, string>>
  }
  /** A replica is usable again after a `fallback`. */
  'fallback:end': { readonly cluster: string }
  /** The cluster's primary changed (roles discovered by the probes): writes go to `to` now. `from` is undefined for the first primary found. */
  'primary:changed': { readonly cluster: string; readonly from: string | undefined; readonly to: string }
  /** A replica was added at runtime (`router.addReplica`). */
  'node:added': NodeEventBase
  /** A node was drained: it takes no new queries and its pools are closed. */
  'node:drained': NodeEventBase & { readonly aborted: number }
  /** A replica was removed at runtime (`router.removeReplica`). */
  'node:removed': NodeEventBase
  /**
   * A connection error is retried once, on `to`: a read (statement or read-connection checkout,
   * outside transactions) on another node; or a transaction's BEGIN, before anything ran in it,
   * on a fresh connection — of another node for a read-only transaction on a replica, of the
   * primary again (`from` === `to`) for a transaction on the primary.
   */
  retry: { readonly cluster: string; readonly from: string; readonly to: string; readonly error: string }
  /**
   * Consistency tokens (or parts of them) were ignored: forged, altered, unsigned with
   * `tokens.secret`, malformed, or claiming a position the primary has not reached. At most one
   * event per 10 s, counting every rejection since the previous one (exact totals:
   * `stats().tokens`).
   */
  'token:rejected': TokenRejectionReport
  /**
   * A background failure, never thrown: an error of a pooled connection reported by the driver's
   * pool, such as an idle connection dying (`context: 'pooled connection error'`, with `node`), or
   * a listener of another event that threw (`context: 'listener of "<event>" threw'`). Failed
   * probes are not reported here: they count against the node's health (`node:suspect`,
   * `node:down`).
   */
  error: { readonly error: unknown; readonly context: string; readonly node?: string | undefined }
}

/** Name of a router event. */
export type RouterEventName = keyof RouterEvents

/** Listener of one router event. */
export type RouterEventListener<E extends RouterEventName> = (event: RouterEvents[E]) => void

/**
 * A tiny typed event emitter. Listeners run synchronously; a throwing listener is reported as an
 * `error` event (or ignored, for `error` listeners) and never disturbs routing. An `error` event
 * with no listener is dropped, not thrown.
 */
export class RouterEmitter {
  readonly #listeners = new Map<RouterEventName, Set<(e: never) => void>>()

  /** Subscribes; returns the unsubscribe function. */
  on<E extends RouterEventName>(name: E, listener: RouterEventListener<E>): () => void {
    let set = this.#listeners.get(name)
    if (set === undefined) {
      set = new Set()
      this.#listeners.set(name, set)
    }
    const fn = listener as (e: never) => void
    set.add(fn)
    return () => {
      set.delete(fn)
    }
  }

  /** Whether anyone listens to `name`. */
  has(name: RouterEventName): boolean {
    return (this.#listeners.get(name)?.size ?? 0) > 0
  }

  /** Emits synchronously. */
  emit<E extends RouterEventName>(name: E, event: RouterEvents[E]): void {
    const set = this.#listeners.get(name)
    if (set === undefined) return
    for (const fn of [...set]) {
      try {
        ;(fn as RouterEventListener<E>)(event)
      } catch (error) {
        if (name !== 'error') this.emit('error', { error, context: `listener of "${name}" threw` })
      }
    }
  }

  /** Drops every listener. */
  clear(): void {
    this.#listeners.clear()
  }
}
