import type pg from 'pg'
import { ConfigError } from '../errors/config-error.js'
import { checkBoolean, checkNumber, describe } from '../router/config-checks.js'
import type { DriverNodeOptions, DriverPool } from '../router/driver.js'
import { destroyClient, type PgClientPoolOptions, PgClientPool, type PooledClient } from './pg-client-pool.js'

/** `pg.Pool` options that mean nothing to a single `pg.Client` (the rest of a node's `pool` options go to each client). */
const POOL_ONLY_OPTIONS = new Set([
  'Client',
  'max',
  'min',
  'idleTimeoutMillis',
  'maxUses',
  'maxLifetimeSeconds',
  'allowExitOnIdle',
  'log',
  'verify',
  'Promise',
])

/** A node's `pool` options without the pool's own: what each `pg.Client` gets (`ssl`, `password`, `statement_timeout`...). */
export function clientOptionsOf(pool: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(pool)) if (!POOL_ONLY_OPTIONS.has(k)) out[k] = v
  return out
}

/**
 * The pool's own options, checked (a `ConfigError` names `pool.<key>` and the node), with
 * `pg.Pool`'s defaults: `max` 10, `min` 0, `idleTimeoutMillis` 10000, no `maxUses` or
 * `maxLifetimeSeconds` limit, `allowExitOnIdle` false.
 */
export function poolOptionsOf(node: DriverNodeOptions): PgClientPoolOptions {
  const p = node.pool
  const at = (key: string) => `pool.${key} (node "${node.name}")`
  const verify = p.verify
  if (verify !== undefined && typeof verify !== 'function')
    throw new ConfigError(at('verify'), `expected a function (client, done) => void, got ${describe(verify)}`)
  const maxUses = checkNumber(p.maxUses ?? Number.MAX_SAFE_INTEGER, at('maxUses'), { integer: true, min: 1 })
  return {
    max: checkNumber(p.max, at('max'), { integer: true, min: 1, default: 10 }),
    min: checkNumber(p.min, at('min'), { integer: true, min: 0, default: 0 }),
    idleTimeoutMillis: checkNumber(p.idleTimeoutMillis, at('idleTimeoutMillis'), {
      integer: true,
      min: 0,
      default: 10_000,
    }),
    maxUses,
    maxLifetimeSeconds: checkNumber(p.maxLifetimeSeconds, at('maxLifetimeSeconds'), { min: 0, default: 0 }),
    allowExitOnIdle: checkBoolean(p.allowExitOnIdle, at('allowExitOnIdle'), false),
    verify: verify as PgClientPoolOptions['verify'],
  }
}

/**
 * The `pg.Client` class a node's pool opens: the node's client options, the connect deadline
 * (`connectTimeoutMs`, on opening a connection only: waiting for a free connection of a busy pool is
 * not bounded by it — work waiting on a node marked down is aborted instead), and for a read-only
 * pool `default_transaction_read_only` added to `options`. No `query_timeout` from
 * `queryTimeoutMs`: the router times statements itself and cancels them on the server (a
 * client-side timeout would leave the statement running and race the cancel).
 */
function clientClass(lib: typeof pg, node: DriverNodeOptions): new () => pg.Client {
  const base = (typeof node.pool.Client === 'function' ? node.pool.Client : lib.Client) as typeof pg.Client
  const own = clientOptionsOf(node.pool)
  const userOptions = typeof own.options === 'string' ? own.options : ''
  const config: pg.ClientConfig = {
    ...own,
    connectionString: node.url,
    connectionTimeoutMillis: node.connectTimeoutMs,
    ...(node.readOnly ? { options: `${userOptions} -c default_transaction_read_only=on`.trim() } : {}),
  }
  return class extends base {
    constructor() {
      super(config)
    }
  }
}

/**
 * The DriverPool of one node: a {@link PgClientPool} of `pg.Client`s. Errors of idle connections go
 * to `onError` (they never crash the process); the connection is replaced on demand.
 */
export function createPgNodePool(
  lib: typeof pg,
  node: DriverNodeOptions,
  onError: (err: unknown) => void,
): DriverPool<pg.Client> {
  const pool = new PgClientPool(clientClass(lib, node), poolOptionsOf(node), onError)
  return {
    acquire: () => pool.acquire(),
    acquireCallback: (cb) => pool.acquireCallback(cb),
    release: (conn, destroy) => pool.release(conn as PooledClient, destroy),
    destroy: (conn) => destroyClient(conn),
    end: () => pool.end(),
    counts: () => pool.counts(),
  }
}
