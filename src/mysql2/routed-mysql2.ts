import { EventEmitter } from 'node:events'
import mysql2 from 'mysql2/promise'
import { ConfigError } from '../errors/config-error.js'
import type { Router } from '../router/router.js'
import type { Mysql2Driver } from './mysql2-driver.js'
import type { Mysql2Module } from './mysql2-node-pool.js'
import { type RoutedMysql2Host, RoutedMysql2ModuleConnection } from './routed-mysql2-connection.js'

/** Options of {@link routedMysql2}. */
export interface RoutedMysql2Options {
  /**
   * The `mysql2` module whose `format`, `escape`, `escapeId`, `raw` and `Types` the look-alike
   * exposes. Default: the `mysql2` package routemate resolves.
   */
  mysql2?: Mysql2Module
}

/**
 * A `mysql2` pool look-alike made by {@link routedMysql2}'s `createPool`: `getConnection(cb)`
 * hands out {@link RoutedMysql2ModuleConnection}s, `query`/`execute` route one statement by the
 * caller's scope, `end(cb)` gives back what is out and leaves the router open.
 */
export class RoutedMysql2ModulePool extends EventEmitter {
  readonly #host: RoutedMysql2Host
  readonly #out = new Set<RoutedMysql2ModuleConnection>()
  /** The options given (servers, credentials and pool sizes are the router's; result options apply). */
  readonly config: Readonly<Record<string, unknown>>
  #ended = false

  constructor(host: RoutedMysql2Host, config: Readonly<Record<string, unknown>> = {}) {
    super()
    this.#host = host
    this.config = { ...config }
  }

  getConnection(cb: (err: Error | null, conn?: RoutedMysql2ModuleConnection) => void): void {
    if (this.#ended) {
      process.nextTick(cb, new Error('Pool is closed.'))
      return
    }
    const conn = new RoutedMysql2ModuleConnection(this.#host, this.config, (c) => {
      if (this.#out.delete(c)) this.emit('release', c)
    })
    this.#out.add(conn)
    this.emit('acquire', conn)
    process.nextTick(cb, null, conn)
  }

  releaseConnection(conn: RoutedMysql2ModuleConnection): void {
    conn.release()
  }

  query(sql: unknown, values?: unknown, cb?: unknown): unknown {
    return this.#transient().query(sql, values, cb)
  }

  execute(sql: unknown, values?: unknown, cb?: unknown): unknown {
    return this.#transient().execute(sql, values, cb)
  }

  /** Ends the pool: handles still out are released (see `RoutedMysql2ModuleConnection.release`); the router stays open. */
  end(cb?: (err?: Error | null) => void): void {
    if (!this.#ended) {
      this.#ended = true
      for (const c of [...this.#out]) c.release()
    }
    if (typeof cb === 'function') process.nextTick(cb, null)
  }

  escape(value: unknown): string {
    return this.#host.lib.escape(value as never)
  }

  escapeId(value: string | string[]): string {
    return this.#host.lib.escapeId(value)
  }

  format(sql: string, values?: unknown): string {
    return this.#host.lib.format(sql, values as never)
  }

  #transient(): RoutedMysql2ModuleConnection {
    return new RoutedMysql2ModuleConnection(this.#host, this.config)
  }
}

/**
 * A `mysql2` module look-alike backed by a router ({@link routedMysql2}): what TypeORM's MySQL and
 * MariaDB driver and Sequelize's `mysql` dialect use of `mysql2`.
 */
export interface RoutedMysql2Module {
  /** A pool look-alike over the router: see {@link RoutedMysql2ModulePool}. */
  createPool(config?: Readonly<Record<string, unknown>>): RoutedMysql2ModulePool
  /** A connection look-alike over the router (emits `connect` at once): see {@link RoutedMysql2ModuleConnection}. */
  createConnection(config?: Readonly<Record<string, unknown>>): RoutedMysql2ModuleConnection
  /** Refused (`ConfigError`): turn the ORM's replication settings off; the router routes. */
  createPoolCluster(): never
  /** Present so TypeORM recognises a mysql2-style module. */
  readonly Connection: typeof RoutedMysql2ModuleConnection
  readonly format: Mysql2Module['format']
  readonly escape: Mysql2Module['escape']
  readonly escapeId: Mysql2Module['escapeId']
  readonly raw: Mysql2Module['raw']
  readonly Types: Mysql2Module['Types']
}

/**
 * A `mysql2` module look-alike backed by a router, for libraries that take a driver module rather
 * than a pool: TypeORM (`driver`, with `connectorPackage: 'mysql2'`; `type: 'mysql'` or
 * `'mariadb'`) and Sequelize (`dialect: 'mysql'`, `dialectModule`). Their statements are routed
 * by routemate's scopes, as `router.pool()`'s are: outside any scope by the router's rules, inside
 * `router.readOnly` to a replica (retried on another node when one fails), inside
 * `router.transaction` on the transaction's connection. Their transactions hold one connection,
 * chosen by the scope they start in, from `SET TRANSACTION`/`START TRANSACTION` to
 * `COMMIT`/`ROLLBACK`. Turn the ORM's own replication settings off (`createPoolCluster` is refused).
 *
 * The connection options the ORM passes are ignored for servers, credentials and pool sizes (the
 * router's), but the ones that shape results or parameters (`typeCast`, `timezone`,
 * `supportBigNumbers`, `bigNumberStrings`, `dateStrings`, `nestTables`, `rowsAsArray`,
 * `stringifyObjects`) apply to each statement. `pool.end()` (TypeORM's `destroy()`) and
 * `connection.end()` (Sequelize's `close()`) give back what the ORM holds and leave the router
 * open: close it yourself. Caveats: `SET time_zone` sent outside a transaction (Sequelize sends it
 * on each new connection) is answered without being run: set the server's `default_time_zone`
 * instead; another session setting outside a transaction pins that handle to one connection
 * (closed when released); connection `flags` (Sequelize's `-FOUND_ROWS`) are the router's.
 *
 * @example
 * ```ts
 * import { DataSource } from 'typeorm'
 * const dataSource = new DataSource({ type: 'mariadb', connectorPackage: 'mysql2', driver: routedMysql2(router), entities: [User] })
 * const users = await router.readOnly(() => dataSource.getRepository(User).find()) // on a replica
 * ```
 */
export function routedMysql2(
  router: Router<Mysql2Driver>,
  options: RoutedMysql2Options = {},
): RoutedMysql2Module {
  const lib = options.mysql2 ?? mysql2
  const host: RoutedMysql2Host = {
    get pool() {
      return router.pool()
    },
    lib,
  }
  return Object.freeze({
    createPool: (config?: Readonly<Record<string, unknown>>) => new RoutedMysql2ModulePool(host, config),
    createConnection: (config?: Readonly<Record<string, unknown>>) => {
      const conn = new RoutedMysql2ModuleConnection(host, config)
      process.nextTick(() => conn.emit('connect'))
      return conn
    },
    createPoolCluster: (): never => {
      throw new ConfigError(
        'driver',
        "routedMysql2 offers no pool cluster: turn the ORM's replication settings off, the router routes reads to replicas",
      )
    },
    Connection: RoutedMysql2ModuleConnection,
    format: lib.format,
    escape: lib.escape,
    escapeId: lib.escapeId,
    raw: lib.raw,
    Types: lib.Types,
  })
}
