import type { AsyncLocalStorage } from 'node:async_hooks'
import { PrimaryUnavailableError } from '../errors/primary-unavailable-error.js'
import { ReadOnlyViolationError } from '../errors/read-only-violation-error.js'
import type { HealthMonitor } from '../health/health-monitor.js'
import type { Cluster } from './cluster.js'
import type { Driver } from './driver.js'
import type { RouterEmitter } from './events.js'
import type { ResolvedConfig } from './resolved-config.js'
import type { RouterNode } from './router-node.js'
import type { Scope } from './scope.js'
import { classifyError, isNodeFailure, withCallerStack } from './statement.js'

/**
 * The state a `Router` shares with the modules that do its work (read path, write path,
 * transactions, sharding, topology, pool facade). Made once per router; every field but `closed`
 * is fixed for the router's life.
 */
export interface RouterCore {
  /** The validated, frozen configuration. */
  readonly config: ResolvedConfig
  /** The configured driver (`config.driver`). */
  readonly driver: Driver
  /** The router's event emitter. */
  readonly events: RouterEmitter
  /** The router's scope storage: one `getStore()` per routed call. */
  readonly als: AsyncLocalStorage<Scope>
  /** Health checks and passive health (`recordFailure`), error redaction. */
  readonly monitor: HealthMonitor
  /** Every cluster: one (`default`) unless sharded. */
  readonly clusters: readonly Cluster[]
  /** The clusters by name (shard name; `default` when unsharded). */
  readonly byName: ReadonlyMap<string, Cluster>
  /** The cluster of statements with no shard in scope (the only one when unsharded). */
  readonly defaultCluster: Cluster | undefined
  /** Whether `router.close()` was called. */
  readonly closed: boolean
}

/*
 * What each module may use of the core (compile-time narrowing: the object is the router's one
 * `RouterCore`, but a module sees only the fields it needs; widening one is a visible change).
 */
/** What recording a failed statement needs: error classes and passive health. */
export type FailureDeps = Pick<RouterCore, 'driver' | 'monitor'>
/** What emitting a `retry` event needs. */
export type RetryDeps = Pick<RouterCore, 'events' | 'monitor'>
/** What the read path (`ReadPath`) uses. */
export type ReadDeps = Pick<RouterCore, 'closed' | 'config' | 'driver' | 'monitor' | 'events'>
/** What the write path uses. */
export type WriteDeps = Pick<RouterCore, 'config' | 'driver' | 'monitor'>
/** What transactions (`TransactionRunner`) use. */
export type TransactionDeps = Pick<
  RouterCore,
  'als' | 'closed' | 'config' | 'defaultCluster' | 'driver' | 'monitor' | 'events'
>
/** What the pool facade's host (`router.pool()`) uses. */
export type FacadeDeps = Pick<
  RouterCore,
  'als' | 'closed' | 'clusters' | 'config' | 'defaultCluster' | 'driver' | 'events' | 'monitor'
>
/** What `router.ready()` and the first probes use. */
export type ReadyDeps = Pick<RouterCore, 'closed' | 'clusters' | 'config' | 'monitor'>

/**
 * The `ReadOnlyViolationError` of a write in a read-only scope: caught before sending it (no
 * `cause`), or rejected by the node `node` (the driver's error as `cause`).
 */
export function readOnlyError(
  node: string,
  cause?: unknown,
  reason = 'write statement',
): ReadOnlyViolationError {
  return cause === undefined
    ? new ReadOnlyViolationError(`${reason} rejected in a read-only scope (before sending it to "${node}")`)
    : new ReadOnlyViolationError(`write statement rejected by "${node}" in a read-only scope`, { cause })
}

/**
 * The cluster's primary if it is usable (known, trusted, not down); else throws
 * `PrimaryUnavailableError` saying why, before any I/O (`cause`: the error that marked it down).
 */
export function requirePrimary(cluster: Cluster): RouterNode {
  const p = cluster.primary
  if (p?.available) return p
  let why: string
  if (p === undefined) why = 'not known yet (no node reports being the primary)'
  else if (!p.trusted) why = `"${p.name}", which is not trusted: it reports being a replica`
  else why = `"${p.name}", which is down${p.lastError ? `: ${p.lastError}` : ''}`
  const cause = p?.trusted === true ? p.lastFailure : undefined
  throw new PrimaryUnavailableError(
    cluster.name,
    `the primary of cluster "${cluster.name}" is ${why}`,
    cause === undefined ? undefined : { cause },
  )
}

/**
 * Records a failed statement or checkout on `node` (error count, passive health for a
 * connection-class error) and returns what to throw: a `ReadOnlyViolationError` for a read the
 * server rejected as a write, else the driver's error with the caller's stack appended.
 */
export function statementFailed(
  core: FailureDeps,
  cluster: Cluster,
  node: RouterNode,
  err: unknown,
  read: boolean,
): unknown {
  const cls = classifyError(core.driver, err)
  if (cls === 'read-only' && read) return readOnlyError(node.name, err)
  node.recordError()
  if (isNodeFailure(cls)) core.monitor.recordFailure(cluster, node, err, 'query')
  return withCallerStack(err)
}

/** Emits the `retry` event: work that failed on `from` with `err` is tried once more on `to`. */
export function emitRetry(
  core: RetryDeps,
  cluster: Cluster,
  from: RouterNode,
  to: RouterNode,
  err: unknown,
): void {
  core.events.emit('retry', {
    cluster: cluster.name,
    from: from.name,
    to: to.name,
    error: core.monitor.redact(err),
  })
}

/**
 * Checks out a connection of `node` (its read-only pool with `readOnlyPool`), recording a failure
 * as passive health. For writes (`read` false) on a primary never reached yet (no successful
 * probe, no connection opened: a fresh router), a connection-class failure means nothing was
 * sent: it rejects with `PrimaryUnavailableError`, the driver's error as `cause`.
 */
export async function acquireConnection(
  core: FailureDeps,
  cluster: Cluster,
  node: RouterNode,
  readOnlyPool: boolean,
  read: boolean,
): Promise<unknown> {
  try {
    const conn = await node.acquire(readOnlyPool)
    node.connected()
    return conn
  } catch (err) {
    const failed = statementFailed(core, cluster, node, err, read)
    if (
      read ||
      node.seenHealthy ||
      node !== cluster.primary ||
      !isNodeFailure(classifyError(core.driver, err))
    )
      throw failed
    throw new PrimaryUnavailableError(
      cluster.name,
      `the primary of cluster "${cluster.name}" ("${node.name}") cannot be reached: ${core.monitor.redact(err)}`,
      { cause: failed },
    )
  }
}
