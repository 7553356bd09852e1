import type pg from 'pg'
import { ConfigError } from '../errors/config-error.js'
import { checkBoolean, checkNumber, describe, didYouMean } from '../router/config-checks.js'
import type { PgClientPoolOptions } from './pg-client-pool.js'
import { checkPgClient } from './pg-internals.js'

/** The pool's own options (`pg.Pool`'s names, plus routemate's `maxWaiting`): never passed to a `pg.Client`. */
export const PG_POOL_OPTIONS: readonly string[] = [
  'Client',
  'allowExitOnIdle',
  'connectionTimeoutMillis',
  'idleTimeoutMillis',
  'log',
  'max',
  'maxLifetimeSeconds',
  'maxUses',
  'maxWaiting',
  'min',
  'onConnect',
  'Promise',
  'verify',
]

/** `pg.Client` options (pg 8.x, `ClientConfig`) a node's `pool` may set; they go to each client. */
export const PG_CLIENT_OPTIONS: readonly string[] = [
  'application_name',
  'binary',
  'client_encoding',
  'enableChannelBinding',
  'fallback_application_name',
  'idle_in_transaction_session_timeout',
  'keepAlive',
  'keepAliveInitialDelayMillis',
  'lock_timeout',
  'options',
  'password',
  'pipeline',
  'query_timeout',
  'replication',
  'scramMaxIterations',
  'ssl',
  'sslnegotiation',
  'statement_timeout',
  'stream',
  'types',
]

/**
 * Client options that name the server or the login: the node's URL decides them (and tells two
 * nodes apart), so a `pool` may not (pg would let the URL win over them without a word).
 * `password` is the exception, see {@link poolPasswordOf}.
 */
const URL_OPTIONS = new Set(['connectionString', 'host', 'port', 'database', 'user'])

/** Options pg once had, or computes itself, with what to use instead. */
const REPLACED: Readonly<Record<string, string>> = {
  poolSize: 'use "max"',
  connect_timeout: 'the connect deadline is the node\'s "connectTimeoutMs"',
  keepalives: 'use "keepAlive"',
  keepalives_idle: 'use "keepAliveInitialDelayMillis"',
}

/**
 * The option names a node's `pool` may use: {@link PG_POOL_OPTIONS}, {@link PG_CLIENT_OPTIONS}
 * and `extra` (`pgDriver({ extraPoolOptions })`, for an option of a newer pg).
 *
 * @example
 * ```ts
 * knownPgPoolOptions([]).has('statement_timeout') // true
 * ```
 */
export function knownPgPoolOptions(extra: readonly string[]): ReadonlySet<string> {
  return new Set([...PG_POOL_OPTIONS, ...PG_CLIENT_OPTIONS, ...extra])
}

/**
 * Checks a node's (or the router's, or a shard's) `pool` options for pg, naming each offending
 * option with `at(key)`: an unknown key (with a "did you mean" for a likely typo), a key the URL
 * decides, or a value of the wrong kind. Returns the pool's own options with `pg.Pool`'s
 * defaults: `max` 10, `min` 0, `idleTimeoutMillis` 10000, no `maxUses` or `maxLifetimeSeconds`
 * limit, `allowExitOnIdle` false, `connectionTimeoutMillis` 0 (a checkout waits however long),
 * `maxWaiting` unbounded.
 *
 * @example
 * ```ts
 * checkPgPoolOptions({ idleTimeoutMilis: 1 }, (k) => `replicas[1].pool.${k}`, known, pg)
 * // ConfigError: replicas[1].pool.idleTimeoutMilis: unknown option "idleTimeoutMilis" (did you mean "idleTimeoutMillis"?) ...
 * ```
 */
export function checkPgPoolOptions(
  p: Readonly<Record<string, unknown>>,
  at: (key: string) => string,
  known: ReadonlySet<string>,
  lib?: typeof pg,
): PgClientPoolOptions {
  for (const key of Object.keys(p)) {
    if (known.has(key)) continue
    if (URL_OPTIONS.has(key)) {
      throw new ConfigError(
        at(key),
        `unknown option "${key}" for a pool: give it in the node's URL (postgres://user@host:port/database), which decides the server and the login`,
      )
    }
    const replaced = REPLACED[key]
    if (replaced !== undefined) throw new ConfigError(at(key), `unknown option "${key}": ${replaced}`)
    const hint = didYouMean(key, [...known])
    throw new ConfigError(
      at(key),
      `unknown option "${key}"${hint ? ` (did you mean "${hint}"?)` : ''}; expected a pg.Pool option (${PG_POOL_OPTIONS.join(', ')}) or a pg.Client option (${PG_CLIENT_OPTIONS.join(', ')}); an option of a newer pg can be allowed with pgDriver({ extraPoolOptions: ["${key}"] })`,
    )
  }
  const fn = (key: string, what: string): void => {
    const v = p[key]
    if (v !== undefined && typeof v !== 'function')
      throw new ConfigError(at(key), `expected ${what}, got ${describe(v)}`)
  }
  fn('verify', 'a function (client, done) => void')
  fn('onConnect', 'a function (client) => void | Promise<void>')
  fn('log', 'a function')
  const password = p.password
  if (password !== undefined && typeof password !== 'string' && typeof password !== 'function') {
    // Never describe the value: it is (meant to be) a password. YAML reads an unquoted 123456 as a number.
    throw new ConfigError(
      at('password'),
      `expected a string (quote it in a YAML or JSON file) or a function returning one, got a ${password === null ? 'null' : typeof password}`,
    )
  }
  const Client = p.Client
  if (Client !== undefined) {
    if (typeof Client !== 'function')
      throw new ConfigError(at('Client'), `expected a pg.Client class, got ${describe(Client)}`)
    checkPgClient(Client as new () => pg.Client, at('Client'), lib)
  }
  const maxUses = checkNumber(p.maxUses ?? Number.MAX_SAFE_INTEGER, at('maxUses'), { integer: true, min: 1 })
  const maxWaiting =
    p.maxWaiting === undefined
      ? Number.POSITIVE_INFINITY
      : checkNumber(p.maxWaiting, at('maxWaiting'), { integer: true, min: 0 })
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
    verify: p.verify as PgClientPoolOptions['verify'],
    connectionTimeoutMillis: checkNumber(p.connectionTimeoutMillis, at('connectionTimeoutMillis'), {
      integer: true,
      min: 0,
      default: 0,
    }),
    maxWaiting,
    onConnect: p.onConnect as PgClientPoolOptions['onConnect'],
  }
}

/**
 * The password a node's `pool` gives for a URL without one (`pool: { password }`, a string or
 * pg's password function), else `undefined`: the URL's own password (user info or `?password=`)
 * wins, as it does in pg. pg itself would drop it: it parses the connection string over the
 * client options, and an URL without a password yields an empty one, so the login fails with
 * "SASL: client password must be a string". The caller sets it on each client after construction
 * (`client.password`, a public `pg.Client` field).
 *
 * @example
 * ```ts
 * poolPasswordOf('postgres://app@db1/app', { password: 's3cret' }) // 's3cret'
 * poolPasswordOf('postgres://app:pw@db1/app', { password: 's3cret' }) // undefined: the URL's wins
 * ```
 */
export function poolPasswordOf(
  url: string,
  pool: Readonly<Record<string, unknown>>,
): string | (() => string | Promise<string>) | undefined {
  const password = pool.password
  if (typeof password !== 'string' && typeof password !== 'function') return undefined
  try {
    const parsed = new URL(url)
    if (parsed.password !== '' || parsed.searchParams.get('password')) return undefined
  } catch {
    return undefined // not a URL pg's parser would read a password from either
  }
  return password as string | (() => string | Promise<string>)
}
