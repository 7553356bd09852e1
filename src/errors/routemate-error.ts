/**
 * Base class of every error routemate raises itself. Errors that come from a database driver are
 * passed through untouched, never wrapped in this class (except where a documented subclass names
 * them, such as {@link ReadOnlyViolationError}, which keeps the driver error as `cause`).
 *
 * @example
 * ```ts
 * try { await router.query('SELECT 1') } catch (e) { if (e instanceof RoutemateError) console.log(e.code) }
 * ```
 */
export class RoutemateError extends Error {
  /** A stable, machine-readable code, e.g. `ROUTEMATE_CONFIG`. */
  readonly code: string

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.name = new.target.name
  }
}
