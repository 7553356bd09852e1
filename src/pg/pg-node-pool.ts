import type pg from 'pg'
import type { DriverNodeOptions, DriverPool } from '../router/driver.js'
import { PgClientPool, type PgClientPoolOptions, type PooledClient } from './pg-client-pool.js'
import { destroyClient } from './pg-internals.js'
import { checkPgPoolOptions, knownPgPoolOptions, PG_POOL_OPTIONS, poolPasswordOf } from './pg-pool-options.js'
import { readOnlySessionIntact, trackReadOnlySetting, verifyReadOnlySession } from './pg-read-only-session.js'

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
 * not bounded by it — work waiting on a node marked down is aborted instead), and for a read-only
 * pool `default_transaction_read_only` added to `options`. No `query_timeout` from
 * `queryTimeoutMs`: the router times statements itself and cancels them on the server (a
 * client-side timeout would leave the statement running and race the cancel).
 */
function clientClass(lib: typeof pg, node: DriverNodeOptions): new () => pg.Client {
  const base = (typeof node.pool.Client === 'function' ? node.pool.Client : lib.Client) as typeof pg.Client
  const own = clientOptionsOf(node.pool)
  let url = node.url
  let readOnlyOptions: string | undefined
  if (node.readOnly) {
    // pg lets a URL's `?options=` replace the config's `options`: take it out of the URL and merge
    // (URL, then pool options or PGOPTIONS, then routemate's setting last, so it wins).
    const split = splitUrlOptions(node.url)
    url = split.url
    const userOptions = typeof own.options === 'string' ? own.options : (process.env.PGOPTIONS ?? '')
    readOnlyOptions = [split.options, userOptions, '-c default_transaction_read_only=on']
      .filter((o) => o !== '')
      .join(' ')
  }
  const config: pg.ClientConfig = {
    ...own,
    connectionString: url,
    connectionTimeoutMillis: node.connectTimeoutMs,
    ...(readOnlyOptions !== undefined ? { options: readOnlyOptions } : {}),
  }
  const readOnly = node.readOnly
  return class extends base {
    constructor() {
      super(config)
      if (readOnly) trackReadOnlySetting(this)
    }
  }
}

/** A URL without its `options` query parameter, and that parameter's value (`''` if none). */
export function splitUrlOptions(url: string): { url: string; options: string } {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return { url, options: '' } // pg reports the bad URL; a read-only session is verified at connect anyway
  }
  const options = parsed.searchParams.get('options')
  if (options === null) return { url, options: '' }
  parsed.searchParams.delete('options')
  return { url: parsed.toString(), options }
}

/** A read-only pool's `verify`: routemate's read-only session check, then the user's own `verify`. */
function readOnlyVerify(node: string, user: PgClientPoolOptions['verify']): PgClientPoolOptions['verify'] {
  return (client, done) =>
    verifyReadOnlySession(client, node, (err) => {
      if (err != null || user === undefined) done(err)
      else user(client, done)
    })
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
  const pool = new PgClientPool(
    withPoolPassword(clientClass(lib, node), node),
    node.readOnly ? { ...options, verify: readOnlyVerify(node.name, options.verify) } : options,
    onError,
    node.name,
  )
  return {
    acquire: () => pool.acquire(),
    acquireCallback: (cb) => pool.acquireCallback(cb),
    // A read-only connection whose session is no longer read-only (or that has a transaction
    // open) is closed instead of pooled: the next read never runs on a writable session.
    release: node.readOnly
      ? (conn, destroy) => pool.release(conn as PooledClient, destroy || !readOnlySessionIntact(conn))
      : (conn, destroy) => pool.release(conn as PooledClient, destroy),
    destroy: (conn) => destroyClient(conn),
    end: () => pool.end(),
    counts: () => pool.counts(),
  }
}
