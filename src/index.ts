/**
 * routemate: a lightweight database router for Node.js. Writes go to the primary, reads in a
 * `readOnly` scope to a healthy, fresh-enough replica; health checks, failover, load balancing.
 *
 * Every value exported here is documented in the README (a unit test checks it). The built-in
 * balancers are in `routemate/balancers`, the shard resolvers and their hash functions in
 * `routemate/sharding`, what a custom driver needs in `routemate/driver`.
 *
 * @packageDocumentation
 */
export type { Balancer, BalancerName, NodeView } from './balancer/balancer.js'
export {
  type AnyMethod,
  type AsyncMethod,
  NoRouterError,
  ReadOnly,
  type RoutedMethodDecorator,
  type RouterSource,
  type ScopeDecoratorOptions,
  Transactional,
  type TransactionalOptions,
  UsePrimary,
  useRouter,
  WithShard,
} from './decorators/index.js'
export {
  ConfigError,
  CrossShardError,
  NodeAbortError,
  NoHealthyReplicaError,
  PoolExhaustedError,
  type PoolExhaustedInit,
  type PoolExhaustedReason,
  PrimaryUnavailableError,
  type QueryTimeoutDetails,
  QueryTimeoutError,
  ReadOnlyViolationError,
  RoutemateError,
  RouterClosedError,
  RouterNotReadyError,
  ShardKeyRequiredError,
  ShardQueryError,
  UnknownNodeError,
  UnknownShardError,
  WriteOutcomeUnknownError,
} from './errors/index.js'
export type { NodeState } from './health/node-health.js'
export {
  type AttachLoggerOptions,
  attachLogger,
  consoleLogger,
  EVENT_LOG_LEVELS,
  type LogFn,
  type Logger,
  type LogLevel,
} from './logging/index.js'
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
} from './router/driver.js'
export type {
  NodeEventBase,
  RouterEventListener,
  RouterEventName,
  RouterEvents,
} from './router/events.js'
export type { FacadeHost, ScopedConnection } from './router/facade-host.js'
export type {
  HealthCheckConfig,
  NodeConfig,
  ReadYourWritesConfig,
  RouterOptions,
  ShardConfig,
  ShardingConfig,
} from './router/options.js'
export {
  type AllShardsOptions,
  type AllShardsResult,
  type CloseOptions,
  createRouter,
  type QueryAllShardsOptions,
  type ReadyOptions,
  Router,
  type ShardHandle,
  type TransactionOptions,
} from './router/router.js'
export type { QueryListener, QueryObservation } from './router/router-node.js'
export { isEvidentWrite } from './router/sql-guard.js'
export type { Statement } from './router/statement.js'
export type { ClusterStats, NodeStats, RouterStats } from './router/stats.js'
export type { TargetSessionAttrs } from './router/target-session-attrs.js'
export type { DrainOptions } from './router/topology.js'
export type { Transaction } from './router/transaction-context.js'
export type { ShardLookup } from './sharding/lookup-resolver.js'
export type { RangeBound, ShardRange } from './sharding/range-resolver.js'
export type { ShardingStrategyName, ShardKey, ShardResolver } from './sharding/shard-resolver.js'
export { redactUrl } from './util/redact.js'
