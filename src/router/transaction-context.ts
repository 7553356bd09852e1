import { QueryTimeoutError } from '../errors/query-timeout-error.js'
import { ReadOnlyViolationError } from '../errors/read-only-violation-error.js'
import type { HealthMonitor } from '../health/health-monitor.js'
import type { Cluster } from './cluster.js'
import type { Driver, QueryResult } from './driver.js'
import { readOnlyViolation } from './read-only-guard.js'
import type { RouterNode } from './router-node.js'
import {
  classifyError,
  closesConnection,
  isNodeFailure,
  runsOneStatement,
  type Statement,
  textOf,
  withCallerStack,
} from './statement.js'

/**
 * The handle a `router.transaction` callback receives: every statement runs on the transaction's
 * one connection. `router.query` inside the callback does the same. `Extras` types the driver's
 * result fields beside `rows` and `rowCount` (as `router.query`'s).
 *
 * @example
 * ```ts
 * await router.transaction(async (tx) => {
 *   await tx.query('UPDATE accounts SET balance = balance - $1 WHERE id = $2', [10, 1])
 * })
 * ```
 */
export interface Transaction<Extras = unknown> {
  /** Runs a statement on the transaction's connection. */
  query<Row = Record<string, unknown>>(
    sql: Statement,
    params?: readonly unknown[],
  ): Promise<QueryResult<Row> & Extras>
  /** Name of the node the transaction runs on. */
  readonly node: string
  /** Whether the transaction is read-only (`BEGIN READ ONLY`). */
  readonly readOnly: boolean
}

/**
 * The state of one transaction in progress: its pinned connection and savepoint counter. Each
 * statement is bounded by the node's `queryTimeoutMs`; a statement that timed out dooms the
 * transaction (`timedOut`: it is rolled back, never committed, even if the callback caught the
 * error), and one whose cancellation could not be confirmed lost the connection: every later
 * statement of the transaction rejects with the same `QueryTimeoutError`.
 */
export class TransactionContext<Conn = unknown> implements Transaction {
  readonly cluster: Cluster
  readonly routerNode: RouterNode<Conn>
  readonly conn: Conn
  readonly readOnly: boolean
  /** A connection error was seen: the connection is destroyed at the end instead of pooled. */
  broken = false
  savepoints = 0
  /** A statement of the transaction timed out (outside a savepoint rolled back since): it must not commit. */
  timedOut: QueryTimeoutError | undefined = undefined
  /** The timeout that closed the connection: later statements fail with it at once. */
  #lost: QueryTimeoutError | undefined = undefined
  readonly #driver: Driver<Conn>
  readonly #monitor: HealthMonitor

  constructor(
    driver: Driver<Conn>,
    monitor: HealthMonitor,
    cluster: Cluster,
    node: RouterNode<Conn>,
    conn: Conn,
    readOnly: boolean,
  ) {
    this.#driver = driver
    this.#monitor = monitor
    this.cluster = cluster
    this.routerNode = node
    this.conn = conn
    this.readOnly = readOnly
  }

  get node(): string {
    return this.routerNode.name
  }

  /** Runs a statement on the pinned connection (read-only guard, error mapping, passive health). */
  async query<Row = Record<string, unknown>>(
    sql: Statement,
    params?: readonly unknown[],
  ): Promise<QueryResult<Row>> {
    const refused = this.readOnly
      ? readOnlyViolation(textOf(sql), 'transaction', runsOneStatement(this.#driver as Driver, sql, params))
      : undefined
    if (refused !== undefined) {
      throw new ReadOnlyViolationError(
        `${refused} rejected in a read-only transaction on "${this.routerNode.name}"`,
      )
    }
    return (await this.exec(sql, params)) as QueryResult<Row>
  }

  /**
   * Executes without the guard (BEGIN/COMMIT/savepoints go through here too). `write`: a write
   * transaction's `COMMIT`, whose lost connection makes its outcome unknown.
   */
  async exec(sql: Statement, params?: readonly unknown[], write = false): Promise<QueryResult> {
    if (this.#lost !== undefined) throw this.#lost
    try {
      return await this.routerNode.runOn(this.conn, sql, params, write)
    } catch (err) {
      throw this.fail(err)
    }
  }

  /** Records and maps an error raised on this connection; returns what to throw. */
  fail(err: unknown): unknown {
    if (err instanceof QueryTimeoutError) {
      // Evidence about the statement, not the node: no passive health.
      this.routerNode.recordError()
      this.timedOut ??= err
      if (!err.cancelled) {
        this.broken = true
        this.#lost = err
      }
      return withCallerStack(err)
    }
    const cls = classifyError(this.#driver as Driver, err)
    if (cls === 'read-only') {
      return new ReadOnlyViolationError(
        `write statement rejected by the server on "${this.routerNode.name}" (read-only)`,
        { cause: err },
      )
    }
    this.routerNode.recordError()
    if (closesConnection(cls)) this.broken = true
    if (isNodeFailure(cls))
      this.#monitor.recordFailure(this.cluster, this.routerNode as RouterNode, err, 'query')
    return withCallerStack(err)
  }
}
