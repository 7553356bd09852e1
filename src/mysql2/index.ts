/**
 * `routemate/mysql2`: the MySQL/MariaDB driver over `mysql2` (an optional peer dependency), with
 * GTID-based positions for lag and read-your-writes, and `router.pool()` as a mysql2 pool for
 * Kysely and Drizzle.
 *
 * @example
 * ```ts
 * import { createRouter } from 'routemate'
 * import { mysql2Driver } from 'routemate/mysql2'
 * const router = createRouter({ driver: mysql2Driver(), primary: 'mysql://app:pw@db1/app', replicas: ['mysql://app:pw@db2/app'] })
 * ```
 *
 * @module
 */
export { gtidReached, mergeGtidPositions } from './gtid.js'
export { RoutedMysql2Connection } from './mysql2-connection-facade.js'
export { type Mysql2Driver, type Mysql2DriverOptions, mysql2Driver } from './mysql2-driver.js'
export { classifyMysqlError } from './mysql2-errors.js'
export type { Mysql2Command, QueryCallback } from './mysql2-internals.js'
export type { Mysql2Module } from './mysql2-node-pool.js'
export {
  type GetConnectionCallback,
  type Mysql2RouterPool,
  type PoolQueryCallback,
  RoutedMysql2Pool,
} from './mysql2-pool-facade.js'
export { RoutedMysql2PromiseConnection } from './mysql2-promise-connection.js'
export type { Mysql2ResultFields } from './mysql2-result.js'
export { beginStatements } from './mysql2-transaction-sql.js'
export { RoutedMysql2ModuleConnection } from './routed-mysql2-connection.js'
export {
  type RoutedMysql2Module,
  RoutedMysql2ModulePool,
  type RoutedMysql2Options,
  routedMysql2,
} from './routed-mysql2.js'
