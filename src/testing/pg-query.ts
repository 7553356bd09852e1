import type pg from 'pg'
import { PgClusterError } from './pg-cluster-error.js'

/** The `pg` module, as loaded by {@link loadPg}. */
export type PgModule = typeof pg

let loading: Promise<PgModule> | undefined

/**
 * Loads `pg` on first use, so importing `routemate/testing` (and starting MariaDB clusters) never
 * requires it. Rejects with a `PgClusterError` saying how to install it when it is missing.
 *
 * @example
 * ```ts
 * const { escapeIdentifier } = await loadPg()
 * ```
 */
export function loadPg(): Promise<PgModule> {
  loading ??= import('pg').then(
    (mod) => mod.default ?? (mod as unknown as PgModule),
    (cause: unknown) => {
      loading = undefined
      throw new PgClusterError('startPgCluster needs the `pg` package: npm install -D pg', { cause })
    },
  )
  return loading
}

/** Where and as whom to connect for one query. */
export interface QueryTarget {
  readonly port: number
  readonly user: string
  readonly password?: string
  readonly database: string
}

/** Destroys the client's socket: never waits on a server that may be frozen or gone. */
function destroy(client: pg.Client): void {
  try {
    client.connection.stream.destroy()
  } catch {
    // already closed
  }
}

/**
 * Opens one `pg` connection to `127.0.0.1:port`, runs `fn` with it and closes it. `timeoutMs` bounds
 * the connect and every query (client side), so a frozen (SIGSTOPped) server makes it fail instead of
 * hang. Driver errors are passed through untouched.
 *
 * @example
 * ```ts
 * const rows = await withClient({ port, user: 'postgres', database: 'postgres' }, 2000, async (c) => (await c.query('SELECT 1')).rows)
 * ```
 */
export async function withClient<T>(
  target: QueryTarget,
  timeoutMs: number,
  fn: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const { Client } = await loadPg()
  const client = new Client({
    host: '127.0.0.1',
    port: target.port,
    user: target.user,
    database: target.database,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    application_name: 'routemate-testing',
    ...(target.password === undefined ? {} : { password: target.password }),
  })
  // A server killed under an open connection emits 'error' on the client: never let it crash us.
  client.on('error', () => {})
  let ok = false
  try {
    await client.connect()
    const result = await fn(client)
    ok = true
    return result
  } finally {
    if (ok) {
      // A healthy server answers Terminate at once; never wait more than a moment anyway.
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        client.end().catch(() => {}),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, 1000)
        }),
      ])
      clearTimeout(timer)
    }
    destroy(client)
  }
}

/**
 * Runs one statement on a one-shot connection (see {@link withClient}) and returns its rows.
 *
 * @example
 * ```ts
 * const [row] = await queryOnce({ port, user: 'postgres', database: 'postgres' }, 'SELECT pg_is_in_recovery() AS r', [], 2000)
 * ```
 */
export function queryOnce(
  target: QueryTarget,
  sql: string,
  params: readonly unknown[],
  timeoutMs: number,
): Promise<Record<string, unknown>[]> {
  return withClient(target, timeoutMs, async (client) => {
    const result = await client.query<Record<string, unknown>>(sql, [...params])
    return result.rows
  })
}
