import { EventEmitter } from 'node:events'
import type pg from 'pg'
import { describe, expect, it, vi } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import type { DriverNodeOptions } from '../router/driver.js'
import { createRouter } from '../router/router.js'
import { pgDriver } from './pg-driver.js'
import { clientOptionsOf, createPgNodePool, poolOptionsOf } from './pg-node-pool.js'

/** A `pg.Client` stand-in that records its config and connects at once. */
class FakeClient extends EventEmitter {
  readonly config: pg.ClientConfig
  _queryable = false
  readonly connection = { stream: { destroy: vi.fn(), ref: vi.fn(), unref: vi.fn() } }

  constructor(config: pg.ClientConfig) {
    super()
    this.config = config
  }

  connect(cb: (err: Error | null) => void): void {
    this._queryable = true
    cb(null)
  }

  end(): Promise<void> {
    this._queryable = false
    return Promise.resolve()
  }
}

const fakePg = { Client: FakeClient } as unknown as typeof pg

function node(overrides: Partial<DriverNodeOptions> = {}): DriverNodeOptions {
  return {
    name: 'replica-1',
    url: 'postgres://app:secret@db-1:5432/app',
    pool: {},
    connectTimeoutMs: 5_000,
    queryTimeoutMs: 0,
    readOnly: false,
    ...overrides,
  }
}

/** The config the node's pool gives each client it opens. */
async function clientConfigOf(n: DriverNodeOptions, lib: typeof pg = fakePg): Promise<pg.ClientConfig> {
  const pool = createPgNodePool(lib, n, () => {})
  const client = (await pool.acquire()) as unknown as FakeClient
  pool.release(client as unknown as pg.Client, false)
  await pool.end()
  return client.config
}

describe('poolOptionsOf', () => {
  it("applies pg.Pool's defaults when nothing is given", () => {
    expect(poolOptionsOf(node())).toEqual({
      max: 10,
      min: 0,
      idleTimeoutMillis: 10_000,
      maxUses: Number.MAX_SAFE_INTEGER,
      maxLifetimeSeconds: 0,
      allowExitOnIdle: false,
      verify: undefined,
    })
  })

  it('keeps explicit values', () => {
    const verify = (_client: pg.Client, done: (err?: unknown) => void) => done()
    const pool = {
      max: 3,
      min: 1,
      idleTimeoutMillis: 0,
      maxUses: 7500,
      maxLifetimeSeconds: 1.5,
      allowExitOnIdle: true,
      verify,
    }
    expect(poolOptionsOf(node({ pool }))).toEqual(pool)
    expect(poolOptionsOf(node({ pool })).verify).toBe(verify)
  })

  it.each([
    ['max', 0],
    ['max', 'ten'],
    ['max', 2.5],
    ['min', -1],
    ['idleTimeoutMillis', -1],
    ['idleTimeoutMillis', Number.NaN],
    ['maxUses', 0],
    ['maxLifetimeSeconds', -1],
    ['allowExitOnIdle', 'yes'],
  ])('rejects pool.%s = %s with a ConfigError naming the key and the node', (key, value) => {
    const n = node({ pool: { [key]: value } })
    expect(() => poolOptionsOf(n)).toThrow(ConfigError)
    expect(() => poolOptionsOf(n)).toThrow(`pool.${key} (node "replica-1")`)
  })

  it('rejects a verify that is not a function with a ConfigError naming pool.verify and the node', () => {
    const n = node({ pool: { verify: 3 } })
    expect(() => poolOptionsOf(n)).toThrow(ConfigError)
    expect(() => poolOptionsOf(n)).toThrow(
      'pool.verify (node "replica-1"): expected a function (client, done) => void, got 3',
    )
    let path: string | undefined
    try {
      poolOptionsOf(n)
    } catch (err) {
      path = (err as ConfigError).path
    }
    expect(path).toBe('pool.verify (node "replica-1")')
  })

  it('createRouter rejects a bad verify with a ConfigError, as every other bad option', () => {
    const bad = () =>
      createRouter({ driver: pgDriver(), primary: 'postgres://app@127.0.0.1:1/app', pool: { verify: 'yes' } })
    expect(bad).toThrow(ConfigError)
    expect(bad).toThrow('pool.verify (node "primary"): expected a function (client, done) => void, got "yes"')
  })
})

describe('clientOptionsOf', () => {
  it("drops the pool's own options", () => {
    const pool = {
      Client: FakeClient,
      max: 3,
      min: 1,
      idleTimeoutMillis: 1,
      maxUses: 2,
      maxLifetimeSeconds: 3,
      allowExitOnIdle: true,
      log: () => {},
      verify: () => {},
      Promise,
    }
    expect(clientOptionsOf(pool)).toEqual({})
  })

  it('keeps client options', () => {
    const ssl = { rejectUnauthorized: false }
    const out = clientOptionsOf({
      max: 5,
      ssl,
      password: 'pw',
      statement_timeout: 1000,
      options: '-c search_path=app',
    })
    expect(out).toEqual({ ssl, password: 'pw', statement_timeout: 1000, options: '-c search_path=app' })
    expect(out.ssl).toBe(ssl)
  })

  it('does not modify its argument', () => {
    const pool = { max: 5, ssl: true }
    clientOptionsOf(pool)
    expect(pool).toEqual({ max: 5, ssl: true })
  })
})

describe('createPgNodePool', () => {
  it('opens clients with the node url as connectionString and connectTimeoutMs as connectionTimeoutMillis', async () => {
    const config = await clientConfigOf(node({ connectTimeoutMs: 1234 }))
    expect(config.connectionString).toBe('postgres://app:secret@db-1:5432/app')
    expect(config.connectionTimeoutMillis).toBe(1234)
  })

  it('sets no query_timeout from queryTimeoutMs: the router times statements and cancels them on the server', async () => {
    expect(await clientConfigOf(node({ queryTimeoutMs: 750 }))).not.toHaveProperty('query_timeout')
    expect(await clientConfigOf(node({ queryTimeoutMs: 0 }))).not.toHaveProperty('query_timeout')
  })

  it("keeps a query_timeout the application set in the node's pool options", async () => {
    const config = await clientConfigOf(node({ queryTimeoutMs: 750, pool: { query_timeout: 60_000 } }))
    expect(config.query_timeout).toBe(60_000)
  })

  it('passes client options through, without the pool options', async () => {
    const config = await clientConfigOf(
      node({ pool: { max: 2, idleTimeoutMillis: 5, password: 'pw', statement_timeout: 100 } }),
    )
    expect(config).toMatchObject({ password: 'pw', statement_timeout: 100 })
    expect(config).not.toHaveProperty('max')
    expect(config).not.toHaveProperty('idleTimeoutMillis')
  })

  it('makes a read-only pool set default_transaction_read_only in options', async () => {
    const config = await clientConfigOf(node({ readOnly: true }))
    expect(config.options).toBe('-c default_transaction_read_only=on')
  })

  it("keeps a user's own options in front of default_transaction_read_only", async () => {
    const config = await clientConfigOf(node({ readOnly: true, pool: { options: '-c search_path=app' } }))
    expect(config.options).toBe('-c search_path=app -c default_transaction_read_only=on')
    expect(config.options?.endsWith('-c default_transaction_read_only=on')).toBe(true)
  })

  it("leaves a user's options untouched in a pool that is not read-only", async () => {
    const config = await clientConfigOf(node({ readOnly: false, pool: { options: '-c search_path=app' } }))
    expect(config.options).toBe('-c search_path=app')
  })

  it('uses pool.Client instead of the driver module Client when given', async () => {
    class OwnClient extends FakeClient {}
    const pool = createPgNodePool(fakePg, node({ pool: { Client: OwnClient } }), () => {})
    const client = await pool.acquire()
    expect(client).toBeInstanceOf(OwnClient)
    expect((client as unknown as FakeClient).config.connectionString).toBe(node().url)
    pool.release(client, false)
    await pool.end()
  })

  it('checks the pool options when the pool is created', () => {
    expect(() => createPgNodePool(fakePg, node({ pool: { max: 0 } }), () => {})).toThrow('pool.max')
  })

  it('wires the DriverPool to the pool: counts, release, destroy and end', async () => {
    const pool = createPgNodePool(fakePg, node({ pool: { max: 1 } }), () => {})
    const a = await pool.acquire()
    expect(pool.counts()).toEqual({ total: 1, idle: 0, waiting: 0 })
    const next = new Promise<pg.Client>((resolve, reject) =>
      pool.acquireCallback!((err, c) => (err == null ? resolve(c as pg.Client) : reject(err))),
    )
    expect(pool.counts().waiting).toBe(1)
    pool.release(a, false)
    expect(await next).toBe(a)

    pool.destroy(a)
    expect((a as unknown as FakeClient).connection.stream.destroy).toHaveBeenCalledTimes(1)
    pool.release(a, true)
    expect(pool.counts()).toEqual({ total: 0, idle: 0, waiting: 0 })
    await pool.end()
    await expect(pool.acquire()).rejects.toThrow()
  })

  it('sends errors of idle connections to onError', async () => {
    const errors: unknown[] = []
    const pool = createPgNodePool(fakePg, node(), (err) => errors.push(err))
    const a = await pool.acquire()
    pool.release(a, false)
    const err = new Error('server closed the connection unexpectedly')
    a.emit('error', err)
    expect(errors).toEqual([err])
    expect(pool.counts().total).toBe(0)
  })
})
