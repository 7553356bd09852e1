import type { Driver, ErrorClass } from './driver.js'
import { NodeAbortError } from '../errors/node-abort-error.js'

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

/** Classifies an error, treating work aborted by the router (node marked down) as a connection error. */
export function classifyError(driver: Driver, err: unknown): ErrorClass {
  if (err instanceof NodeAbortError) return 'connection'
  return driver.classify(err)
}

/** Whether an error class means the node (not the statement) failed. */
export function isNodeFailure(cls: ErrorClass): boolean {
  return cls === 'connection' || cls === 'timeout'
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
