import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type pg from 'pg'
import { ConfigError } from '../errors/config-error.js'

/**
 * Every use routemate makes of `pg`'s undocumented members, in one place. `pg` (node-postgres)
 * has no public way to close a client's socket at once, to ref/unref it, to tell whether a client
 * was ended or lost its connection, to read the backend key (for a cancel request), the
 * transaction status of its last ReadyForQuery (public as `getTransactionStatus()` only since
 * pg 8.2x) or the ParameterStatus messages the server sends. {@link checkPgClient} verifies at
 * startup (`pgDriver()`, and a node's `pool.Client`) that a client has them, so a pg release that
 * renames one fails with a clear error instead of misbehaving later.
 *
 * `pg.native` (the libpq client of `pg-native`) has none of these: see {@link checkPgClient}.
 */

/** A ParameterStatus message as pg's connection emits it (`parameterStatus` event). */
interface ParameterStatusMessage {
  readonly parameterName: string
  readonly parameterValue: string
}

/** The members of pg's `Connection` routemate uses. */
interface ConnectionInternals {
  readonly stream?: { destroy?(): void; ref?(): void; unref?(): void }
  on?(event: 'parameterStatus', listener: (msg: ParameterStatusMessage) => void): unknown
  removeListener?(event: 'parameterStatus', listener: (msg: ParameterStatusMessage) => void): unknown
}

/** The members of pg's JavaScript `Client` routemate uses (all read guarded). */
interface ClientInternals {
  readonly connection?: ConnectionInternals
  readonly _queryable?: boolean
  readonly _ending?: boolean
  readonly processID?: number | null
  readonly secretKey?: number | Uint8Array | null
  readonly _txStatus?: string | null
  getTransactionStatus?(): string | null
  /** Set on pg.native's clients (the libpq binding). */
  readonly native?: unknown
}

function internals(client: pg.Client): ClientInternals {
  return client as unknown as ClientInternals
}

/**
 * Closes a client's socket at once (`client.connection.stream.destroy()`): a query pending on it
 * fails now with "Connection terminated". No-op for a client without a socket.
 */
export function destroyClient(client: pg.Client): void {
  internals(client).connection?.stream?.destroy?.()
}

/** Lets a client's socket keep the process alive (`ref`) or not (`unref`). */
export function refClient(client: pg.Client, ref: boolean): void {
  const stream = internals(client).connection?.stream
  if (ref) stream?.ref?.()
  else stream?.unref?.()
}

/** Whether a client was ended (`end()` called) or lost its connection (`_ending`, `_queryable`): never reuse it. */
export function clientClosing(client: pg.Client): boolean {
  const c = internals(client)
  return c._queryable === false || c._ending === true
}

/** A connection's backend key, from the server's BackendKeyData message: what a cancel request names. */
export interface BackendKey {
  /** The backend's process id (`pg_backend_pid()`). */
  readonly processID: number
  /** The secret key: an int32 in protocol 3.0; a byte string if a future pg speaks protocol 3.2. */
  readonly secretKey: number | Uint8Array
}

/**
 * The backend key of a connected client (`client.processID`, `client.secretKey`), for a
 * PostgreSQL cancel request; `undefined` before the server sent it (not connected yet).
 *
 * @example
 * ```ts
 * const key = backendKey(client) // { processID: 4242, secretKey: -1834723411 }
 * ```
 */
export function backendKey(client: pg.Client): BackendKey | undefined {
  const { processID, secretKey } = internals(client)
  if (typeof processID !== 'number') return undefined
  if (typeof secretKey !== 'number' && !(secretKey instanceof Uint8Array)) return undefined
  return { processID, secretKey }
}

/** The transaction status byte of the last ReadyForQuery: idle, in a transaction, in a failed transaction. */
export type TransactionStatus = 'I' | 'T' | 'E'

/**
 * The client's transaction status as of the last ReadyForQuery message: `'I'` idle, `'T'` in a
 * transaction block, `'E'` in a failed one (only ROLLBACK works). `undefined` before the first
 * ReadyForQuery, or with a pg too old to track it (before `getTransactionStatus()`; see
 * {@link PgSupport.transactionStatus}).
 *
 * @example
 * ```ts
 * await client.query('BEGIN'); transactionStatus(client) // 'T'
 * ```
 */
export function transactionStatus(client: pg.Client): TransactionStatus | undefined {
  const c = internals(client)
  const status = typeof c.getTransactionStatus === 'function' ? c.getTransactionStatus() : c._txStatus
  return status === 'I' || status === 'T' || status === 'E' ? status : undefined
}

/**
 * Calls `listener(name, value)` for each ParameterStatus message the server sends on this
 * client's connection (`client.connection.on('parameterStatus')`): the GUC_REPORT settings —
 * `server_version`, `in_hot_standby` (PostgreSQL 14+), `default_transaction_read_only`,
 * `TimeZone`... — at startup, and again whenever one changes. Attach before `connect()` to see
 * the startup values. Returns a function that removes the listener.
 *
 * @example
 * ```ts
 * const off = onParameterStatus(client, (name, value) => { if (name === 'in_hot_standby') standby = value === 'on' })
 * ```
 */
export function onParameterStatus(
  client: pg.Client,
  listener: (name: string, value: string) => void,
): () => void {
  const connection = internals(client).connection
  if (typeof connection?.on !== 'function') return () => {}
  const relay = (msg: ParameterStatusMessage): void => listener(msg.parameterName, msg.parameterValue)
  connection.on('parameterStatus', relay)
  return () => {
    connection.removeListener?.('parameterStatus', relay)
  }
}

/** Marks a `pg.Pool` (the facade) ending, as its own `end()` does (`pool.ending`, read-only in pg's typings). */
export function markPoolEnding(pool: pg.Pool): void {
  ;(pool as unknown as { ending: boolean }).ending = true
}

/** What the checked pg client supports beyond what routemate requires. */
export interface PgSupport {
  /** The version of the `pg` package the client comes from, or `'unknown'`. */
  readonly version: string
  /** Whether {@link transactionStatus} works (`getTransactionStatus()` or `_txStatus`, pg 8.2x and later). */
  readonly transactionStatus: boolean
}

/** The members a client must have: routemate's own pool, aborting work and timeouts depend on them. */
const REQUIRED: ReadonlyArray<readonly [string, (c: ClientInternals) => boolean]> = [
  ['connection.stream.destroy()', (c) => typeof c.connection?.stream?.destroy === 'function'],
  ['connection.on()', (c) => typeof c.connection?.on === 'function'],
  ['_queryable', (c) => typeof c._queryable === 'boolean'],
  ['_ending', (c) => typeof c._ending === 'boolean'],
  ['processID', (c) => 'processID' in c],
  ['secretKey', (c) => 'secretKey' in c],
]

const checked = new WeakMap<object, PgSupport>()

/**
 * Checks, once per class, that a new (unconnected) instance of `Client` has the pg internals
 * routemate relies on; throws a `ConfigError` at `path` naming what is missing and pg's version
 * otherwise. A client of `pg.native` (the `pg-native` libpq binding, also what `pg` exports with
 * `NODE_PG_FORCE_NATIVE` set) is rejected: it has no socket routemate can destroy (aborting work
 * on a node marked down, `queryTimeoutMs`, closing a pool at once), no ref/unref
 * (`allowExitOnIdle`), no backend key and no ParameterStatus messages.
 *
 * @param lib the pg module the class comes from, to name its version.
 *
 * @example
 * ```ts
 * checkPgClient(pg.Client, 'driver', pg) // { version: '8.23.1', transactionStatus: true }
 * checkPgClient(pg.native.Client, 'driver', pg.native) // ConfigError: driver: routemate needs pg's JavaScript client ...
 * ```
 */
export function checkPgClient(Client: new () => pg.Client, path: string, lib?: unknown): PgSupport {
  const known = checked.get(Client)
  if (known !== undefined) return known
  const version = pgVersion(lib ?? Client)
  let client: ClientInternals
  try {
    client = internals(new Client())
  } catch (cause) {
    throw new ConfigError(path, `could not create a pg client to check it (pg ${version})`, { cause })
  }
  const missing = REQUIRED.filter(([, has]) => !has(client)).map(([name]) => name)
  if (missing.length > 0) {
    const native =
      client.native !== undefined
        ? '; it is a client of pg.native (pg-native, or NODE_PG_FORCE_NATIVE set), which has no socket to destroy when a node is marked down or a query times out, no backend key and no ParameterStatus messages: use pg.Client'
        : ''
    throw new ConfigError(
      path,
      `routemate needs the JavaScript client of pg (node-postgres) 8.11 or later; this client (pg ${version}) lacks ${missing.join(', ')}${native}`,
    )
  }
  const support: PgSupport = {
    version,
    transactionStatus: typeof client.getTransactionStatus === 'function' || '_txStatus' in client,
  }
  checked.set(Client, support)
  return support
}

/**
 * The version of the `pg` package that loaded `lib` (the module object, or one of its classes),
 * found through Node's CommonJS module cache (pg is a CommonJS package); `'unknown'` if not found.
 */
export function pgVersion(lib: unknown): string {
  if (lib === undefined || lib === null) return 'unknown'
  try {
    const client = (lib as { Client?: unknown }).Client
    const cache = createRequire(join(process.cwd(), 'noop.js')).cache
    for (const mod of Object.values(cache)) {
      if (mod === undefined || (mod.exports !== lib && (client === undefined || mod.exports !== client)))
        continue
      // The nearest package.json above the module is pg's own (pg/lib/index.js, pg/lib/native/index.js).
      for (let dir = dirname(mod.filename); dir !== dirname(dir); dir = dirname(dir)) {
        const file = join(dir, 'package.json')
        if (!existsSync(file)) continue
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown }
        if (pkg.name === 'pg' && typeof pkg.version === 'string') return pkg.version
        break
      }
    }
  } catch {
    // no module cache to search (not Node's CommonJS loader): unknown
  }
  return 'unknown'
}
