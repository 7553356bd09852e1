import { RoutemateError } from './routemate-error.js'

/**
 * `router.ready({ timeoutMs })` gave up: after `timeoutMs`, the primary of some cluster had still
 * not passed a health probe (unreachable, refusing the credentials, reporting another role, or
 * not found yet by discovery). The message and `nodes` say where every node stands (state and
 * last error, URLs redacted); `cause` is the last error of the first such primary, when it has one.
 *
 * @example
 * ```ts
 * await router.ready({ timeoutMs: 10_000 }) // RouterNotReadyError: router not ready after 10000 ms: ...
 * ```
 */
export class RouterNotReadyError extends RoutemateError {
  /** How long `ready` waited, in ms. */
  readonly timeoutMs: number
  /** Every node's standing by name, e.g. `{ primary: 'down: connect ECONNREFUSED 10.0.0.1:5432', replica1: 'usable' }`. */
  readonly nodes: Readonly<Record<string, string>>

  constructor(
    message: string,
    timeoutMs: number,
    nodes: Readonly<Record<string, string>>,
    options?: { cause?: unknown },
  ) {
    super('ROUTEMATE_NOT_READY', message, options)
    this.timeoutMs = timeoutMs
    this.nodes = nodes
  }
}
