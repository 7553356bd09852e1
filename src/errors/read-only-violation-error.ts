import { RoutemateError } from './routemate-error.js'

/**
 * A write was attempted inside a `readOnly` scope or a read-only transaction. Raised before the
 * statement is sent when it is an evident write (leading INSERT/UPDATE/DELETE/MERGE/DDL...), or
 * when the server rejected it as a write in a read-only transaction or on a standby; in that case
 * the driver's error is kept as `cause`. Nothing was written either way.
 *
 * @example
 * ```ts
 * await router.readOnly(() => router.query('DELETE FROM t')) // rejects with ReadOnlyViolationError
 * ```
 */
export class ReadOnlyViolationError extends RoutemateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ROUTEMATE_READ_ONLY_VIOLATION', message, options)
  }
}
