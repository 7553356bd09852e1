/**
 * `routemate/testing`: real local PostgreSQL clusters (a primary plus hot-standby streaming
 * replicas) for integration tests, with the failure knobs a router needs tested: kill, pause
 * (SIGSTOP), restart, replication delay, replay pause and promotion.
 *
 * @example
 * ```ts
 * import { startPgCluster } from 'routemate/testing'
 * const cluster = await startPgCluster({ replicas: 2 })
 * // cluster.primary.url, cluster.replicas[0].url ...
 * await cluster.stop()
 * ```
 *
 * @module
 */
export type { PgBinaries, PgBinariesSource } from './find-pg-binaries.js'
export { embeddedPgBinDir, findPgBinaries } from './find-pg-binaries.js'
export type { MariaDbCluster, MariaDbNodeInfo } from './mariadb-cluster.js'
export { startMariaDbCluster } from './mariadb-cluster.js'
export { MariaDbClusterError } from './mariadb-cluster-error.js'
export type { MariaDbClusterOptions } from './mariadb-cluster-options.js'
export type { ClusterNodeInfo, PgCluster, PgQueryOptions } from './pg-cluster.js'
export { startPgCluster } from './pg-cluster.js'
export { PgClusterError } from './pg-cluster-error.js'
export type { PgClusterOptions } from './pg-cluster-options.js'
