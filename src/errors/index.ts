export { ConfigError } from './config-error.js'
export { CrossShardError } from './cross-shard-error.js'
export { NoHealthyReplicaError } from './no-healthy-replica-error.js'
export { NodeAbortError } from './node-abort-error.js'
export {
  PoolExhaustedError,
  type PoolExhaustedInit,
  type PoolExhaustedReason,
} from './pool-exhausted-error.js'
export { PrimaryUnavailableError } from './primary-unavailable-error.js'
export { type QueryTimeoutDetails, QueryTimeoutError } from './query-timeout-error.js'
export { ReadOnlyViolationError } from './read-only-violation-error.js'
export { RoutemateError } from './routemate-error.js'
export { RouterClosedError } from './router-closed-error.js'
export { RouterNotReadyError } from './router-not-ready-error.js'
export { ShardKeyRequiredError } from './shard-key-required-error.js'
export { ShardQueryError } from './shard-query-error.js'
export { UnknownNodeError } from './unknown-node-error.js'
export { UnknownShardError } from './unknown-shard-error.js'
export { WriteOutcomeUnknownError } from './write-outcome-unknown-error.js'
