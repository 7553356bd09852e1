/**
 * `routemate/mariadb`: the MySQL/MariaDB driver over the `mariadb` connector (an optional peer
 * dependency), with GTID-based positions for lag and read-your-writes, and `router.pool()` as a
 * `mariadb.Pool` for `@prisma/adapter-mariadb` (Prisma 7 on MariaDB/MySQL).
 *
 * @example
 * ```ts
 * import { createRouter } from 'routemate'
 * import { mariadbDriver } from 'routemate/mariadb'
 * const router = createRouter({ driver: mariadbDriver(), primary: 'mariadb://app:pw@db1/app', replicas: ['mariadb://app:pw@db2/app'] })
 * ```
 *
 * @module
 */
export { type MariadbDriver, type MariadbDriverOptions, mariadbDriver } from './mariadb-driver.js'
export { classifyMariadbError } from './mariadb-errors.js'
export type { MariadbModule } from './mariadb-node-pool.js'
export { type MariadbRouterPool, RoutedMariadbConnection, RoutedMariadbPool } from './mariadb-pool-facade.js'
export type { MariadbResultFields } from './mariadb-result.js'
