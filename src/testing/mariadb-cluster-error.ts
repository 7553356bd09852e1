import { RoutemateError } from '../errors/routemate-error.js'

/**
 * Raised by `routemate/testing` when a local MariaDB test cluster cannot be created, started,
 * stopped or driven (code `ROUTEMATE_MARIADB_CLUSTER`).
 *
 * The message names the node and, when the server wrote an error log, ends with its last lines. It
 * never contains a password. Errors of the `mysql2` client from {@link MariaDbCluster.query} are
 * passed through untouched instead.
 *
 * @example
 * ```ts
 * try { await startMariaDbCluster() } catch (e) { if (e instanceof MariaDbClusterError) console.error(e.node, e.message) }
 * ```
 */
export class MariaDbClusterError extends RoutemateError {
  /** The node the error is about (`primary`, `replica1`...), when it is about one. */
  readonly node: string | undefined

  constructor(message: string, options?: { node?: string; logTail?: string; cause?: unknown }) {
    const prefix = options?.node === undefined ? '' : `${options.node}: `
    const tail =
      options?.logTail === undefined || options.logTail === ''
        ? ''
        : `\n--- last lines of the ${options.node ?? 'server'} error log ---\n${options.logTail}`
    super('ROUTEMATE_MARIADB_CLUSTER', `${prefix}${message}${tail}`, { cause: options?.cause })
    this.node = options?.node
  }
}
