import { EventEmitter } from 'node:events'
import type { FieldPacket, QueryOptions } from 'mysql2/promise'
import type { RoutedMysql2Connection } from './mysql2-connection-facade.js'
import { type EventRelay, relayEvents } from './mysql2-event-relay.js'
import type { CoreConnection, QueryCallback } from './mysql2-internals.js'

/**
 * A routed connection in mysql2's promise style (like `mysql2/promise`'s `PoolConnection`), as
 * Drizzle uses it: `query`/`execute` resolve to mysql2's native `[rows, fields]`;
 * `beginTransaction`/`commit`/`rollback`/`ping`/`end` return promises; `release()`, `destroy()`;
 * `connection` is the callback-style {@link RoutedMysql2Connection} (for `.query(...).stream()`).
 *
 * @example
 * ```ts
 * const conn = await router.pool().getConnection()
 * try {
 *   await conn.beginTransaction()
 *   const [result] = await conn.query('UPDATE users SET name = ? WHERE id = ?', ['Ada', 1])
 *   await conn.commit()
 * } finally {
 *   conn.release()
 * }
 * ```
 */
export class RoutedMysql2PromiseConnection extends EventEmitter {
  /** The callback-style connection (mysql2's promise connections expose their core one here). */
  readonly connection: RoutedMysql2Connection
  readonly #core: CoreConnection
  readonly #relay: EventRelay

  constructor(connection: RoutedMysql2Connection, core: CoreConnection) {
    super()
    this.connection = connection
    this.#core = core
    this.#relay = relayEvents(core, this)
    this.#relay.arm()
  }

  /** The server's id of this connection (`CONNECTION_ID()`). */
  get threadId(): number {
    return this.#core.threadId ?? 0
  }

  get config(): object {
    return this.#core.config
  }

  // biome-ignore lint/suspicious/noExplicitAny: mysql2's promise API types results by a caller-chosen generic
  query<T = any>(sql: string | QueryOptions, values?: unknown): Promise<[T, FieldPacket[]]> {
    return this.#call('query', sql, values)
  }

  // biome-ignore lint/suspicious/noExplicitAny: as above
  execute<T = any>(sql: string | QueryOptions, values?: unknown): Promise<[T, FieldPacket[]]> {
    return this.#call('execute', sql, values)
  }

  async beginTransaction(): Promise<void> {
    await this.query('START TRANSACTION')
  }

  async commit(): Promise<void> {
    await this.query('COMMIT')
  }

  async rollback(): Promise<void> {
    await this.query('ROLLBACK')
  }

  ping(): Promise<void> {
    return new Promise((resolve, reject) => this.connection.ping((err) => (err ? reject(err) : resolve())))
  }

  release(): void {
    this.connection.release()
  }

  destroy(): void {
    this.connection.destroy()
  }

  async end(): Promise<void> {
    this.connection.release()
  }

  escape(value: unknown): string {
    return this.#core.escape(value)
  }

  escapeId(value: string | string[]): string {
    return this.#core.escapeId(value)
  }

  format(sql: string, values?: unknown): string {
    return this.#core.format(sql, values)
  }

  /** Stops relaying events (called on release). */
  detach(): void {
    this.#relay.disarm()
  }

  /** Relays events again (called on a new checkout of the same physical connection). */
  attach(): void {
    this.#relay.arm()
  }

  #call<T>(kind: 'query' | 'execute', sql: unknown, values: unknown): Promise<[T, FieldPacket[]]> {
    if (typeof values === 'function') {
      return Promise.reject(new Error('Callback function is not available with promise clients.'))
    }
    return new Promise((resolve, reject) => {
      const done: QueryCallback = (err, result, fields) =>
        err ? reject(err) : resolve([result as T, fields as FieldPacket[]])
      if (kind === 'query') this.connection.query(sql as QueryOptions, values, done)
      else this.connection.execute(sql as QueryOptions, values, done)
    })
  }
}
