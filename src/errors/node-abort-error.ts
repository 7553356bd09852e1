import { RoutemateError } from './routemate-error.js'

/**
 * Work (a query, a connection checkout) was aborted because its node was marked down — by a
 * failed probe or a connection error of another query — or because the router was closed while
 * it ran: the node's connections are destroyed at once so that callers fail over instead of
 * hanging on a frozen server. The router treats it as a connection error: a read outside a
 * transaction is retried once on another node; a write or a transaction reports it.
 *
 * @example
 * ```ts
 * try { await router.query('UPDATE ...') } catch (e) { if (e instanceof NodeAbortError) console.log(e.node) }
 * ```
 */
export class NodeAbortError extends RoutemateError {
  /** The node whose work was aborted. */
  readonly node: string

  constructor(node: string, options?: { cause?: unknown }) {
    super('ROUTEMATE_NODE_ABORTED', `query aborted: node "${node}" was marked down`, options)
    this.node = node
  }
}
