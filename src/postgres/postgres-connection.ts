import { connect as netConnect, type Socket } from 'node:net'
import type postgres from 'postgres'
import { ReadOnlyViolationError } from '../errors/read-only-violation-error.js'

/** The `postgres` module's default export (postgres.js). */
export type PostgresLib = typeof postgres

/** postgres.js's parsed options (`sql.options`), which `postgres(options)` takes back as they are. */
export type ParsedOptions = postgres.Sql['options'] & {
  host: string[]
  port: number[]
  path?: string | false
  connection: Record<string, unknown>
  parameters: Record<string, string>
  shared: { retries: number; typeArrayMap: Record<string, unknown> }
  onclose?: ((id: number) => void) | undefined
  socket?: ((options: unknown) => Socket) | undefined
  fetch_types: boolean
  /**
   * Whether a connection of this driver fetched the array types already (into the shared parsers
   * and serializers): later connections skip postgres.js's `fetch_types` round trip.
   */
  rmTypes: { fetched: boolean }
}

/** A postgres.js query (`PendingQuery`) as routemate drives it: its backend key once sent. */
export interface PgJsQuery extends Promise<unknown> {
  readonly state: { pid: number | null; secret: number | null } | null
  readonly active: boolean
  cancel(): unknown
}

/**
 * One routemate connection over postgres.js: a postgres.js instance of one connection (`max: 1`),
 * on a socket routemate opens itself (so it can destroy it,
 * ref/unref it, and knows its server for cancel requests).
 */
export interface PostgresConn {
  /** The postgres.js `sql` of this connection (a one-connection instance): every statement runs on it. */
  readonly sql: postgres.Sql
  /** The one-connection postgres.js instance (`end()`ed when the connection is closed). */
  readonly instance: postgres.Sql
  /** Its parsed options (`parameters` are this connection's own ParameterStatus reports). */
  readonly options: ParsedOptions
  /** The server's host (or Unix socket directory) and port, for cancel requests. */
  readonly host: string
  readonly port: number
  /** The socket (undefined until connecting). */
  socket: Socket | undefined
  /** The last statement sent on it (its `state` carries the backend key for cancel requests). */
  current: PgJsQuery | undefined
  /** postgres.js's own handler of the instance (taken from its first query; statements are handed to it directly). */
  handler?: ((q: never) => void) | undefined
  /** The server closed it, or it failed: never handed out again. */
  broken: boolean
  /** Checkouts so far; when it connected and when it last went idle (`Date.now()`). */
  uses: number
  createdAt: number
  idleSince: number
  idle: boolean
}

const noop = (): void => {}

/**
 * Parses a node's postgres.js options once (URL, then `base` then `extra` options, as
 * `postgres(url, options)` does): what every connection of the node is made from. The parsers and
 * serializers are replaced by the driver's shared ones (so `sql.options.parsers` of `router.sql()`,
 * which drizzle changes, apply to every connection).
 */
export function parseNodeOptions(
  lib: PostgresLib,
  url: string,
  options: Record<string, unknown>,
  shared: {
    parsers: Record<string, unknown>
    serializers: Record<string, unknown>
    types: { fetched: boolean }
  },
): ParsedOptions {
  const parsed = lib(url, { ...options, max: 1 } as postgres.Options<Record<string, postgres.PostgresType>>)
    .options as unknown as ParsedOptions
  return {
    ...parsed,
    parsers: shared.parsers,
    serializers: shared.serializers,
    rmTypes: shared.types,
  } as ParsedOptions
}

/** What opening one connection needs. */
export interface OpenOptions {
  /** Deadline for connecting (and authenticating), in ms. */
  readonly connectTimeoutMs: number
  /** The connection's startup parameters beside the node's (`default_transaction_read_only`...), applied last. */
  readonly startup?: Readonly<Record<string, string>>
  /** Startup parameters used only when the node's options do not set them (`application_name`). */
  readonly startupDefaults?: Readonly<Record<string, string>>
  /** Called once when the connection closes or fails (never while connecting). */
  readonly onClose?: () => void
  /** Never fetch array types (probes need none). */
  readonly noTypes?: boolean
}

/**
 * Opens one connection: a one-connection postgres.js instance whose socket routemate opens,
 * connected at once by an empty statement (so a failure to connect is a failed checkout, never a
 * failed statement). The first connection of a driver fetches the server's array types (postgres.js's
 * `fetch_types`) into the parsers every connection shares; later ones skip that round trip. Rejects
 * (having closed everything) when connecting fails or `signal` aborts.
 */
export async function openConnection(
  lib: PostgresLib,
  node: ParsedOptions,
  open: OpenOptions,
  signal?: AbortSignal,
): Promise<PostgresConn> {
  signal?.throwIfAborted()
  const host = node.host[0] ?? 'localhost'
  const port = node.port[0] ?? 5432
  const path = typeof node.path === 'string' && node.path !== '' ? node.path : undefined
  let conn: PostgresConn | undefined
  let sock: Socket | undefined
  let opened = false
  let aborted = false
  const fetchTypes = node.fetch_types && open.noTypes !== true && !node.rmTypes.fetched
  const options = {
    ...node,
    max: 1,
    idle_timeout: null,
    max_lifetime: null,
    connect_timeout: open.connectTimeoutMs / 1000,
    target_session_attrs: null,
    fetch_types: fetchTypes,
    parameters: {},
    shared: { retries: 0, typeArrayMap: node.shared.typeArrayMap },
    connection: { ...open.startupDefaults, ...node.connection, ...open.startup },
    socket: () => {
      // One socket per connection: postgres.js would reconnect a closed one; routemate opens a new connection instead.
      if (opened || aborted || sock !== undefined) throw connectionLostError()
      const s = path !== undefined ? netConnect(path) : netConnect(port, host)
      Object.assign(s, { host, port })
      sock = s
      return s
    },
    onclose: () => {
      if (conn !== undefined) conn.broken = true
      if (opened) open.onClose?.()
    },
  } as unknown as ParsedOptions
  const instance = lib(options as unknown as postgres.Options<Record<string, postgres.PostgresType>>)
  const abort = (): void => {
    aborted = true
    sock?.destroy()
    instance.end({ timeout: 0 }).catch(noop)
  }
  signal?.addEventListener('abort', abort, { once: true })
  try {
    await instance.unsafe('')
  } catch (err) {
    abort()
    throw err
  } finally {
    signal?.removeEventListener('abort', abort)
  }
  opened = true
  if (fetchTypes) node.rmTypes.fetched = true
  const now = Date.now()
  conn = {
    sql: instance,
    instance,
    options,
    host: path !== undefined ? path.slice(0, path.lastIndexOf('/')) : host,
    port,
    socket: sock,
    current: undefined,
    broken: sock === undefined || sock.destroyed,
    uses: 0,
    createdAt: now,
    idleSince: now,
    idle: false,
  }
  if (signal?.aborted === true) {
    closeConnection(conn, true)
    signal.throwIfAborted()
  }
  return conn
}

function connectionLostError(): Error {
  return Object.assign(new Error('the connection was closed'), { code: 'ROUTEMATE_CONNECTION_LOST' })
}

/** Closes a connection: at once (`destroy`: its pending statement fails now), or politely. Idempotent. */
export function closeConnection(conn: PostgresConn, destroy: boolean): void {
  conn.broken = true
  if (destroy) conn.socket?.destroy()
  conn.instance.end({ timeout: 0 }).catch(noop)
}

const SETTING = 'default_transaction_read_only'

/**
 * Verifies a new connection of a read-only pool: its session must default to read-only (the
 * server reports the setting on PostgreSQL 14+; before 14 it is read with `SHOW`). Rejects with a
 * `ReadOnlyViolationError` when a connection option or a role/database setting overrode routemate's.
 */
export async function verifyReadOnly(conn: PostgresConn, node: string): Promise<void> {
  let value: string | undefined = conn.options.parameters[SETTING]
  if (value === undefined) {
    const rows = (await conn.sql.unsafe(`SHOW ${SETTING}`)) as unknown as Array<Record<string, string>>
    value = rows[0]?.[SETTING]
    if (value !== undefined) conn.options.parameters[SETTING] = value
  }
  if (value !== 'on')
    throw new ReadOnlyViolationError(
      `node "${node}": a read-only connection reports ${SETTING}=${value ?? 'unknown'}; ` +
        "a connection option or server setting overrides routemate's read-only session, so it is not used",
    )
}

/** Whether a read-only connection's session is still read-only (the server's last report; PostgreSQL 14+ reports every change). */
export function readOnlyIntact(conn: PostgresConn): boolean {
  return conn.options.parameters[SETTING] === 'on'
}
