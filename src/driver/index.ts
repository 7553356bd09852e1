/**
 * `routemate/driver`: what a custom driver needs beyond the `Driver` interface (whose types
 * `routemate` exports too): {@link KeptConnectionProber}, the kept probe connection that
 * `Driver.createProber` can return, as `routemate/pg` and `routemate/mysql2` do.
 *
 * @example
 * ```ts
 * import { KeptConnectionProber } from 'routemate/driver'
 * createProber(node, { maxAgeMs }) {
 *   return new KeptConnectionProber({ connect, probe, broken, setActive, close, destroy }, maxAgeMs)
 * }
 * ```
 *
 * @module
 */
export { KeptConnectionProber, type ProbeConnectionOps } from '../health/kept-connection-prober.js'
export type {
  AnyDriver,
  BeginOptions,
  Dialect,
  Driver,
  DriverExtrasOf,
  DriverNodeOptions,
  DriverPool,
  DriverPoolOf,
  DriverSqlOf,
  DriverProber,
  ErrorClass,
  IsolationLevel,
  NodeRole,
  ProbeResult,
  QueryResult,
} from '../router/driver.js'
export type { FacadeHost, ScopedConnection } from '../router/facade-host.js'
export type { Statement } from '../router/statement.js'
