import { EventEmitter } from 'node:events'
import pg from 'pg'
import type { Router } from '../router/router.js'
import type { PgDriver } from './pg-driver.js'
import { RoutedPgClient, type RoutedPgClientHost } from './routed-pg-client.js'

/** Options of {@link routedPg}. */
export interface RoutedPgOptions {
  /**
   * The `pg` module whose `types`, `defaults`, `escapeIdentifier`/`escapeLiteral` and
   * `DatabaseError` the look-alike exposes: the one the router's `pgDriver({ pg })` uses. Default:
   * the `pg` package routemate resolves.
   */
  pg?: typeof pg
}

/**
 * A `pg` module look-alike backed by a router ({@link routedPg}): what TypeORM's and Sequelize's
 * PostgreSQL drivers use of `pg`.
 */
export interface RoutedPgModule {
  /** A `pg.Pool` look-alike over the router (see {@link routedPg}). */
  readonly Pool: new (
    config?: pg.PoolConfig,
  ) => pg.Pool
  /** A `pg.Client` look-alike over the router (see {@link RoutedPgClient}). */
  readonly Client: new (
    config?: pg.ClientConfig,
  ) => pg.Client
  /** pg's `types` (type parsers), shared with the router's connections. */
  readonly types: typeof pg.types
  /** pg's `defaults` (`parseInt8`...), shared with the router's connections. */
  readonly defaults: typeof pg.defaults
  /** pg's `DatabaseError`. */
  readonly DatabaseError: typeof pg.DatabaseError
  /** pg's `escapeIdentifier`. */
  readonly escapeIdentifier: (str: string) => string
  /** pg's `escapeLiteral`. */
  readonly escapeLiteral: (str: string) => string
  /** Always `null`: the native client is not offered (TypeORM and Sequelize then use `Pool`/`Client`). */
  readonly native: null
}

/**
 * Builds the module's `Pool` class: a `pg.Pool` look-alike whose `connect()` hands out
 * {@link RoutedPgClient}s and whose `query` is `router.pool().query`.
 */
function poolClass(host: RoutedPgClientHost): new (config?: pg.PoolConfig) => pg.Pool {
  return class RoutedPgModulePool extends EventEmitter {
    /** The options given (ignored: servers, credentials and pool sizes are the router's). */
    readonly options: pg.PoolConfig
    readonly #clients = new Set<RoutedPgClient>()
    readonly #relay = (err: unknown) => {
      if (this.listenerCount('error') > 0) this.emit('error', err)
    }
    ending = false
    ended = false

    constructor(config: pg.PoolConfig = {}) {
      super()
      this.options = { ...config }
      host.pool.on('error', this.#relay)
    }

    get totalCount(): number {
      return host.pool.totalCount
    }

    get idleCount(): number {
      return host.pool.idleCount
    }

    get waitingCount(): number {
      return host.pool.waitingCount
    }

    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads
    connect(cb?: any): any {
      if (this.ending) {
        const err = new Error('Cannot use a pool after calling end on the pool')
        if (typeof cb === 'function') {
          process.nextTick(() => cb(err))
          return undefined
        }
        return Promise.reject(err)
      }
      const client = new RoutedPgClient(host, undefined, (c) => {
        if (this.#clients.delete(c)) this.emit('release', undefined, c)
      })
      this.#clients.add(client)
      client._connected = true
      this.emit('connect', client)
      this.emit('acquire', client)
      if (typeof cb === 'function') {
        process.nextTick(() => cb(null, client, (err?: unknown) => client.release(err)))
        return undefined
      }
      return Promise.resolve(client)
    }

    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads
    query(config: any, values?: any, cb?: any): any {
      return (host.pool.query as (c: unknown, v?: unknown, cb?: unknown) => unknown)(config, values, cb)
    }

    /**
     * Ends this pool: handles still out give their pinned connections back. The router stays
     * open (close it with `router.close()`), so several ORM instances can share it.
     */
    end(cb?: (err?: Error) => void): Promise<void> | undefined {
      if (!this.ending) {
        this.ending = true
        host.pool.removeListener('error', this.#relay)
        for (const c of this.#clients) c.release()
        this.#clients.clear()
        this.ended = true
        process.nextTick(() => this.emit('end'))
      }
      if (typeof cb === 'function') {
        process.nextTick(() => cb())
        return undefined
      }
      return Promise.resolve()
    }
  } as unknown as new (
    config?: pg.PoolConfig,
  ) => pg.Pool
}

/**
 * A `pg` module look-alike backed by a router, for libraries that take a driver module rather than
 * a pool: TypeORM (`driver`) and Sequelize (`dialectModule`). Their statements are routed by
 * routemate's scopes, as `router.pool()`'s are: outside any scope by the router's rules (writes
 * and unproven reads to the primary; `target_session_attrs` applies), inside `router.readOnly`
 * to a replica (retried on another node when one fails), inside `router.transaction` on the
 * transaction's connection. Their transactions (`dataSource.transaction`, a QueryRunner's
 * `startTransaction`, `sequelize.transaction`) hold one connection, chosen by the scope they start
 * in, from `BEGIN` to `COMMIT`/`ROLLBACK`. Turn the ORM's own replication settings off.
 *
 * What the module offers: `Pool` and `Client` (see {@link RoutedPgClient}: a handle that holds a
 * physical connection only while a transaction, a session setting or a stream needs one), and
 * pg's own `types`, `defaults`, `DatabaseError`, `escapeIdentifier`, `escapeLiteral`. The
 * connection options the ORM passes (host, user, password, pool size...) are ignored: servers,
 * credentials and pool sizes are the router's. `pool.end()` (TypeORM's `destroy()`, Sequelize's
 * `close()`) gives back what the ORM holds and leaves the router open: close it yourself.
 * Caveats: `SET client_min_messages`, `SET standard_conforming_strings` and `SET TIME ZONE` sent
 * outside a transaction (ORMs send them on each new connection) are answered without being run;
 * set the time zone of the database or role instead (`ALTER ROLE app SET timezone = 'UTC'`).
 * Another session setting outside a transaction pins that handle to one connection (closed when
 * released). `LISTEN` notifications are not relayed.
 *
 * @example
 * ```ts
 * import { DataSource } from 'typeorm'
 * import { Sequelize } from 'sequelize'
 * const dataSource = new DataSource({ type: 'postgres', driver: routedPg(router), entities: [User] })
 * const sequelize = new Sequelize({ dialect: 'postgres', dialectModule: routedPg(router) })
 * const users = await router.readOnly(() => dataSource.getRepository(User).find()) // on a replica
 * ```
 */
export function routedPg(router: Router<PgDriver>, options: RoutedPgOptions = {}): RoutedPgModule {
  const lib = options.pg ?? pg
  let params: Promise<ReadonlyArray<readonly [string, string]>> | undefined
  const host: RoutedPgClientHost = {
    get pool() {
      return router.pool()
    },
    lib,
    serverParameters: () => {
      params ??= router
        .pool()
        .query<{ v: string; s: string }>(
          "SELECT current_setting('server_version') AS v, current_setting('standard_conforming_strings') AS s",
        )
        .then((r) => {
          const row = r.rows[0] as { v: string; s: string }
          return [
            ['server_version', row.v],
            ['standard_conforming_strings', row.s],
          ] as const
        })
      params.catch(() => {
        params = undefined
      })
      return params
    },
  }
  const Client = class RoutedPgModuleClient extends RoutedPgClient {
    constructor(config?: pg.ClientConfig) {
      super(host, config as { types?: unknown } | undefined)
    }
  } as unknown as new (
    config?: pg.ClientConfig,
  ) => pg.Client
  return Object.freeze({
    Pool: poolClass(host),
    Client,
    types: lib.types,
    defaults: lib.defaults,
    DatabaseError: lib.DatabaseError,
    escapeIdentifier: (str: string) => lib.escapeIdentifier(str),
    escapeLiteral: (str: string) => lib.escapeLiteral(str),
    native: null,
  })
}
