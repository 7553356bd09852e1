import { ConfigError } from '../errors/config-error.js'
import { checkNumber, describe, didYouMean, isPlainObject, quote } from '../router/config-checks.js'

/** The pool's own options of a node (postgres.js names, plus routemate's `maxWaiting` and `connectionTimeoutMillis`). */
export interface PostgresPoolOptions {
  /** Most connections open at once. Default 10 (as postgres.js). */
  readonly max: number
  /** An idle connection is closed after this long, in s; 0 = never (postgres.js's `idle_timeout`, default none). */
  readonly idleTimeoutSeconds: number
  /** A connection this old, in s, is closed when next released or found idle; 0 = no limit (`max_lifetime`). */
  readonly maxLifetimeSeconds: number
  /** Most checkouts waiting at once; one more fails at once with a `PoolExhaustedError`. Default: no bound. */
  readonly maxWaiting: number
  /** A checkout waiting for a connection of a full pool fails after this long, in ms (`PoolExhaustedError`); 0 = no limit. */
  readonly connectionTimeoutMillis: number
}

/** Options of a node's `pool` that size the pool (never passed to postgres.js as they are). */
export const POSTGRES_POOL_OPTIONS: readonly string[] = [
  'max',
  'idle_timeout',
  'max_lifetime',
  'maxWaiting',
  'connectionTimeoutMillis',
]

/** postgres.js connection options a node's `pool` may set; they go to each connection. */
export const POSTGRES_CONNECTION_OPTIONS: readonly string[] = [
  'ssl',
  'sslnegotiation',
  'connection',
  'prepare',
  'fetch_types',
  'keep_alive',
  'max_pipeline',
  'onnotice',
  'onparameter',
  'debug',
  'password',
  'pass',
]

/** Options a node may not set, with why or what to use instead. */
const REFUSED: Readonly<Record<string, string>> = {
  host: "the node's URL names the server",
  hostname: "the node's URL names the server",
  port: "the node's URL names the server",
  path: "the node's URL names the server",
  database: "the node's URL names the database",
  db: "the node's URL names the database",
  user: "the node's URL names the user",
  username: "the node's URL names the user",
  connect_timeout: 'the connect deadline is the node\'s "connectTimeoutMs"',
  target_session_attrs: 'routemate finds each node\'s role itself (see the router\'s "url" option)',
  socket: 'routemate opens the sockets itself',
  onclose: 'routemate watches its connections itself',
  types: 'set it for every node: postgresDriver({ types })',
  transform: 'set it for every node: postgresDriver({ transform })',
  timeout: 'use "idle_timeout"',
  idleTimeoutMillis: 'use "idle_timeout" (in seconds)',
  backoff: 'routemate does not reconnect a postgres.js connection: it opens a new one',
  publications: 'logical replication subscriptions are not routed',
  no_prepare: 'use "prepare: false"',
}

/** Every option name a node's `pool` may use. */
export const POSTGRES_NODE_OPTIONS: readonly string[] = [
  ...POSTGRES_POOL_OPTIONS,
  ...POSTGRES_CONNECTION_OPTIONS,
]

/**
 * Checks one node `pool` object for the postgres.js driver, throwing a `ConfigError` at `at(key)`
 * for an unknown key ("did you mean"), a refused one (the URL decides it...) or a bad value; returns
 * the pool's own options with their defaults.
 */
export function checkPostgresPoolOptions(
  pool: Readonly<Record<string, unknown>>,
  at: (key: string) => string,
): PostgresPoolOptions {
  for (const key of Object.keys(pool)) {
    if (POSTGRES_NODE_OPTIONS.includes(key)) continue
    const refused = REFUSED[key]
    if (refused !== undefined) throw new ConfigError(at(key), `not a node option: ${refused}`)
    const hint = didYouMean(key, POSTGRES_NODE_OPTIONS)
    throw new ConfigError(
      at(key),
      `unknown option ${quote(key)}${hint ? ` (did you mean "${hint}"?)` : ''} for the postgres.js driver; expected one of: ${POSTGRES_NODE_OPTIONS.join(', ')}`,
    )
  }
  const connection = pool.connection
  if (connection !== undefined && !isPlainObject(connection))
    throw new ConfigError(
      at('connection'),
      `expected an object of startup parameters, got ${describe(connection)}`,
    )
  const seconds = (key: string): number => {
    const v = pool[key]
    if (v === undefined || v === null || v === 0) return 0
    return checkNumber(v, at(key), { min: 0 })
  }
  return {
    max: checkNumber(pool.max, at('max'), { integer: true, min: 1, default: 10 }),
    idleTimeoutSeconds: seconds('idle_timeout'),
    maxLifetimeSeconds: seconds('max_lifetime'),
    maxWaiting: checkNumber(pool.maxWaiting, at('maxWaiting'), {
      integer: true,
      min: 0,
      default: Number.POSITIVE_INFINITY,
    }),
    connectionTimeoutMillis: checkNumber(pool.connectionTimeoutMillis, at('connectionTimeoutMillis'), {
      integer: true,
      min: 0,
      default: 0,
    }),
  }
}

/** A node's postgres.js connection options (its `pool` without the pool's own). */
export function connectionOptionsOf(pool: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(pool)) if (!POSTGRES_POOL_OPTIONS.includes(k)) out[k] = v
  return out
}
