import { NodeAbortError } from '../errors/node-abort-error.js'
import { PoolExhaustedError } from '../errors/pool-exhausted-error.js'
import { QueryTimeoutError } from '../errors/query-timeout-error.js'
import { WriteOutcomeUnknownError } from '../errors/write-outcome-unknown-error.js'
import type { Driver, ErrorClass } from './driver.js'

/** A statement: SQL text, or a driver query config object carrying it (`{ text }` for pg, `{ sql }` for mysql2). */
export type Statement =
  | string
  | { readonly text?: string; readonly sql?: string; readonly [key: string]: unknown }

/** The SQL text of a statement (`''` when it has none). */
export function textOf(stmt: Statement): string {
  if (typeof stmt === 'string') return stmt
  const t = stmt.text ?? stmt.sql
  return typeof t === 'string' ? t : ''
}

/**
 * Whether the driver runs `stmt` as exactly one statement: always on MySQL/MariaDB read pools
 * (multi-statement texts are off there), and on PostgreSQL when it has parameters (the extended
 * protocol takes one statement); a PostgreSQL text without parameters may hold several.
 */
export function runsOneStatement(
  driver: Driver,
  stmt: Statement,
  params: readonly unknown[] | undefined,
): boolean {
  if (driver.dialect !== 'postgres' || (params !== undefined && params.length > 0)) return true
  if (typeof stmt === 'string') return false
  const values = stmt.values
  return Array.isArray(values) && values.length > 0
}

/**
 * Classifies an error: work aborted by the router (node marked down) is a connection error, a
 * `QueryTimeoutError` a timeout, a `WriteOutcomeUnknownError` what its cause is (a connection
 * error), and an exhausted pool ({@link PoolExhaustedError}) a `statement` error: the node is
 * fine, so it is neither marked down nor is the read retried elsewhere.
 */
export function classifyError(driver: Driver, err: unknown): ErrorClass {
  if (err instanceof NodeAbortError) return 'connection'
  if (err instanceof PoolExhaustedError) return 'statement'
  if (err instanceof QueryTimeoutError) return 'timeout'
  if (err instanceof WriteOutcomeUnknownError) return classifyError(driver, err.cause)
  return driver.classify(err)
}

/**
 * Whether an error class means the node (not the statement) failed: only connection errors. A
 * timeout is evidence about the statement, never about the node.
 */
export function isNodeFailure(cls: ErrorClass): boolean {
  return cls === 'connection'
}

/** Whether a connection that raised an error of this class must be closed rather than pooled. */
export function closesConnection(cls: ErrorClass): boolean {
  return cls === 'connection' || cls === 'timeout'
}

/**
 * Whether the connection a statement failed on with `err` must be closed rather than pooled. A
 * `QueryTimeoutError` leaves that to the node: `RouterNode.release` closes the connection when
 * the cancellation could not be confirmed, and pools it when the server stopped the statement.
 */
export function mustClose(driver: Driver, err: unknown): boolean {
  if (err instanceof QueryTimeoutError) return false
  return closesConnection(classifyError(driver, err))
}

/**
 * Appends the caller's async stack to a driver error's stack (driver errors are raised from socket
 * callbacks and otherwise show no application frame). Called on the error path only.
 */
export function withCallerStack(err: unknown): unknown {
  if (!(err instanceof Error) || typeof err.stack !== 'string') return err
  const here = new Error().stack
  if (here === undefined || err.stack.includes('--- routemate caller ---')) return err
  const frames = here.split('\n').slice(2).join('\n')
  try {
    err.stack = `${err.stack}\n    --- routemate caller ---\n${frames}`
  } catch {
    // a frozen error keeps its stack
  }
  return err
}
