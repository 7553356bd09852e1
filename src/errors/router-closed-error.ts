import { RoutemateError } from './routemate-error.js'

/**
 * The router was closed (`router.close()`); it takes no new queries.
 *
 * @example
 * ```ts
 * await router.close(); await router.query('SELECT 1') // rejects with RouterClosedError
 * ```
 */
export class RouterClosedError extends RoutemateError {
  constructor() {
    super('ROUTEMATE_CLOSED', 'the router is closed')
  }
}
