/**
 * `routemate/postgres`: the PostgreSQL driver over postgres.js ({@link postgresDriver}), and
 * `router.sql()` as a routed postgres.js `sql`.
 *
 * @example
 * ```ts
 * import { createRouter } from 'routemate'
 * import { postgresDriver } from 'routemate/postgres'
 * const router = createRouter({ driver: postgresDriver(), primary: PRIMARY_URL, replicas: [REPLICA_URL] })
 * const sql = router.sql()
 * ```
 *
 * @module
 */
export type { PostgresConn } from './postgres-connection.js'
export {
  type PostgresDriver,
  type PostgresDriverOptions,
  type PostgresResultFields,
  postgresDriver,
} from './postgres-driver.js'
export { classifyPostgresError } from './postgres-errors.js'
export type { RoutedSql } from './postgres-sql-facade.js'
