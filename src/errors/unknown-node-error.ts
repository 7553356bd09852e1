import { RoutemateError } from './routemate-error.js'

/**
 * A node name that the router does not know (in `router.drain`, `router.removeReplica`,
 * `router.setWeight`): never configured, mistyped, or already removed.
 *
 * @example
 * ```ts
 * await router.removeReplica('replica9') // UnknownNodeError: unknown node "replica9"; nodes: primary, replica1, replica2
 * ```
 */
export class UnknownNodeError extends RoutemateError {
  /** The name that was asked for. */
  readonly node: string

  constructor(node: string, known: readonly string[]) {
    super(
      'ROUTEMATE_UNKNOWN_NODE',
      `unknown node "${node}"; nodes: ${known.length > 0 ? known.join(', ') : '(none)'}`,
    )
    this.node = node
  }
}
