import type pg from 'pg'
import type { DriverNodeOptions, DriverPool } from '../router/driver.js'
import { type PgClientPoolOptions, PgClientPool, type PooledClient } from './pg-client-pool.js'
import { destroyClient } from './pg-internals.js'
import { checkPgPoolOptions, knownPgPoolOptions, PG_POOL_OPTIONS, poolPasswordOf } from './pg-pool-options.js'

/** `pg.Pool` options that mean nothing to a single `pg.Client` (the rest of a node's `pool` options go to each client). */
const POOL_ONLY_OPTIONS = new Set(PG_POOL_OPTIONS)

/** The option names pg's `pool` takes when the driver allows no extra ones. */
const KNOWN_OPTIONS = knownPgPoolOptions([])

/** A node's `pool` options without the pool's own: what each `pg.Client` gets (`ssl`, `password`, `statement_timeout`...). */
export function clientOptionsOf(pool: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(pool)) if (!POOL_ONLY_OPTIONS.has(k)) out[k] = v
  return out
}

/**
 * The pool's own options, checked (a `ConfigError` names `pool.<key>` and the node; `createRouter`
 * checks each `pool` object earlier, naming its path), with `pg.Pool`'s defaults: see
 * {@link checkPgPoolOptions}.
 */
export function poolOptionsOf(
  node: DriverNodeOptions,
  known: ReadonlySet<string> = KNOWN_OPTIONS,
  lib?: typeof pg,
): PgClientPoolOptions {
  const at = (key: string) => `pool.${key} (node "${node.name}")`
  return checkPgPoolOptions(node.pool, at, known, lib)
}

/**
 * The `pg.Client` class a node's pool opens: the node's client options, the connect deadline
 * (`connectTimeoutMs`, on opening a connection only: waiting for a free connection of a busy pool is
 * not bounded by it — work waiting on a node marked down is aborted instead), `query_timeout` from
 * `queryTimeoutMs`, and for a read-only pool `default_transaction_read_only` added to `options`.
 */
function clientClass(lib: typeof pg, node: DriverNodeOptions): new () => pg.Client {
  const base = (typeof node.pool.Client === 'function' ? node.pool.Client : lib.Client) as typeof pg.Client
  const own = clientOptionsOf(node.pool)
  const userOptions = typeof own.options === 'string' ? own.options : ''
  const config: pg.ClientConfig = {
    ...own,
    connectionString: node.url,
    connectionTimeoutMillis: node.connectTimeoutMs,
    ...(node.queryTimeoutMs > 0 ? { query_timeout: node.queryTimeoutMs } : {}),
    ...(node.readOnly ? { options: `${userOptions} -c default_transaction_read_only=on`.trim() } : {}),
  }
  return class extends base {
    constructor() {
      super(config)
    }
  }
}

/**
 * The client class with the `pool`'s password set on each client when the URL has none (pg
 * would let the URL's empty password win): see {@link poolPasswordOf}.
 */
function withPoolPassword(Client: new () => pg.Client, node: DriverNodeOptions): new () => pg.Client {
  const password = poolPasswordOf(node.url, node.pool)
  if (password === undefined) return Client
  return class extends Client {
    constructor() {
      super()
      this.password = password as string
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
  known: ReadonlySet<string> = KNOWN_OPTIONS,
): DriverPool<pg.Client> {
  const options = poolOptionsOf(node, known, lib)
  const pool = new PgClientPool(withPoolPassword(clientClass(lib, node), node), options, onError, node.name)
  return {
    acquire: () => pool.acquire(),
    acquireCallback: (cb) => pool.acquireCallback(cb),
    release: (conn, destroy) => pool.release(conn as PooledClient, destroy),
    destroy: (conn) => destroyClient(conn),
    end: () => pool.end(),
    counts: () => pool.counts(),
  }
}
