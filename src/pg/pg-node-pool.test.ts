import { EventEmitter } from 'node:events'
import pg from 'pg'
import { describe, expect, it, vi } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import type { DriverNodeOptions } from '../router/driver.js'
import { createRouter } from '../router/router.js'
import { pgDriver } from './pg-driver.js'
import { clientOptionsOf, createPgNodePool, poolOptionsOf } from './pg-node-pool.js'
import { knownPgPoolOptions, poolPasswordOf } from './pg-pool-options.js'

/**
 * A `pg.Client` stand-in (with the members routemate reads of pg's) that records its config and
 * connects at once, reporting `default_transaction_read_only` as a PostgreSQL 14+ server does (from
 * its `-c` options).
 */
class FakeClient extends EventEmitter {
  readonly config: pg.ClientConfig
  _queryable = false
  _ending = false
  processID: number | null = null
  secretKey: number | null = null
  password: unknown = undefined
  readonly connection = Object.assign(new EventEmitter(), {
    stream: { destroy: vi.fn(), ref: vi.fn(), unref: vi.fn() },
  })

  constructor(config: pg.ClientConfig) {
    super()
    this.config = config
  }

  connect(cb: (err: Error | null) => void): void {
    this._queryable = true
    const all = [...(this.config.options ?? '').matchAll(/default_transaction_read_only=(\w+)/g)]
    this.connection.emit('parameterStatus', {
      parameterName: 'default_transaction_read_only',
      parameterValue: all.at(-1)?.[1] ?? 'off',
    })
    cb(null)
  }

  getTransactionStatus(): string {
    return 'I'
  }

  end(): Promise<void> {
    this._queryable = false
    return Promise.resolve()
  }
}

const fakePg = { Client: FakeClient } as unknown as typeof pg

/** pg's real Client, whose connect succeeds at once without a server (to inspect how the pool builds it). */
class NoConnectClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: pg's connect overloads
  override connect(cb?: any): any {
    cb(null)
  }
}

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
      connectionTimeoutMillis: 0,
      maxWaiting: Number.POSITIVE_INFINITY,
      onConnect: undefined,
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
      connectionTimeoutMillis: 500,
      maxWaiting: 20,
      onConnect: () => {},
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
    ['connectionTimeoutMillis', -1],
    ['connectionTimeoutMillis', '500'],
    ['maxWaiting', -1],
    ['maxWaiting', 1.5],
    ['onConnect', 'yes'],
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
    expect(bad).toThrow('pool.verify: expected a function (client, done) => void, got "yes"')
  })
})

describe('pool option names', () => {
  it('rejects a misspelled option with a "did you mean", naming the node', () => {
    const n = node({ pool: { idleTimeoutMilis: 1000 } })
    expect(() => poolOptionsOf(n)).toThrow(ConfigError)
    expect(() => poolOptionsOf(n)).toThrow(
      'pool.idleTimeoutMilis (node "replica-1"): unknown option "idleTimeoutMilis" (did you mean "idleTimeoutMillis"?)',
    )
  })

  it.each([
    ['statment_timeout', 'statement_timeout'],
    ['conectionTimeoutMillis', 'connectionTimeoutMillis'],
    ['application_nme', 'application_name'],
    ['maxwaiting', 'maxWaiting'],
  ])('suggests %s → %s', (typo, meant) => {
    expect(() => poolOptionsOf(node({ pool: { [typo]: 1 } }))).toThrow(`(did you mean "${meant}"?)`)
  })

  it('accepts every pg.Pool and pg.Client option name', () => {
    const pool = {
      max: 2,
      min: 0,
      idleTimeoutMillis: 1,
      maxUses: 5,
      maxLifetimeSeconds: 1,
      allowExitOnIdle: false,
      verify: () => {},
      onConnect: () => {},
      log: () => {},
      Promise,
      connectionTimeoutMillis: 1,
      maxWaiting: 1,
      application_name: 'a',
      fallback_application_name: 'b',
      ssl: false,
      sslnegotiation: 'postgres',
      password: 'pw',
      statement_timeout: 1,
      lock_timeout: 1,
      idle_in_transaction_session_timeout: 1,
      query_timeout: 1,
      keepAlive: true,
      keepAliveInitialDelayMillis: 1,
      options: '-c x=y',
      client_encoding: 'UTF8',
      binary: false,
      types: { getTypeParser: () => String },
      enableChannelBinding: false,
      scramMaxIterations: 10_000,
      pipeline: false,
    }
    expect(() => poolOptionsOf(node({ pool }))).not.toThrow()
  })

  it.each(['host', 'port', 'database', 'user', 'connectionString'])(
    'rejects pool.%s: the node URL decides the server and the login',
    (key) => {
      expect(() => poolOptionsOf(node({ pool: { [key]: 'x' } }))).toThrow(
        `pool.${key} (node "replica-1"): unknown option "${key}" for a pool: give it in the node's URL`,
      )
    },
  )

  it('says what to use for an option pg computes itself or once had', () => {
    expect(() => poolOptionsOf(node({ pool: { poolSize: 3 } }))).toThrow(
      'unknown option "poolSize": use "max"',
    )
    expect(() => poolOptionsOf(node({ pool: { connect_timeout: 3 } }))).toThrow('"connectTimeoutMs"')
  })

  it('allows the names given in extraPoolOptions', () => {
    const known = knownPgPoolOptions(['brandNewOption'])
    expect(() => poolOptionsOf(node({ pool: { brandNewOption: 1 } }), known)).not.toThrow()
    expect(() => poolOptionsOf(node({ pool: { brandNewOption: 1 } }))).toThrow(
      'unknown option "brandNewOption"',
    )
  })

  it('rejects a password that is not a string or a function, without printing it', () => {
    const bad = () => poolOptionsOf(node({ pool: { password: 123456 } }))
    expect(bad).toThrow(
      'pool.password (node "replica-1"): expected a string (quote it in a YAML or JSON file)',
    )
    expect(bad).not.toThrow('123456')
    expect(() => poolOptionsOf(node({ pool: { password: () => 'pw' } }))).not.toThrow()
  })

  it('createRouter names the path of the pool object the option is in', () => {
    const driver = pgDriver()
    const path = (options: Record<string, unknown>): string | undefined => {
      try {
        createRouter({ driver, healthCheck: false, ...options } as never)
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError)
        return (err as ConfigError).path
      }
      return undefined
    }
    const url = (n: number) => `postgres://app@127.0.0.1:${n}/app`
    expect(path({ primary: url(1), pool: { idleTimeoutMilis: 1 } })).toBe('pool.idleTimeoutMilis')
    expect(
      path({ primary: url(1), replicas: [url(2), { url: url(3), pool: { idleTimeoutMilis: 1 } }] }),
    ).toBe('replicas[1].pool.idleTimeoutMilis')
    expect(path({ primary: { url: url(1), pool: { max: 0 } } })).toBe('primary.pool.max')
    expect(
      path({
        shards: { s1: { primary: url(1), pool: { maxWaitng: 1 } } },
        sharding: { strategy: 'hash' },
      }),
    ).toBe('shards.s1.pool.maxWaitng')
    expect(path({ nodes: [url(1), { url: url(2), pool: { host: 'elsewhere' } }], healthCheck: {} })).toBe(
      'nodes[1].pool.host',
    )
  })

  it('createRouter reports the did-you-mean for a replica', () => {
    expect(() =>
      createRouter({
        driver: pgDriver(),
        primary: 'postgres://app@127.0.0.1:1/app',
        replicas: [
          'postgres://app@127.0.0.1:2/app',
          { url: 'postgres://app@127.0.0.1:3/app', pool: { idleTimeoutMilis: 5 } },
        ],
        healthCheck: false,
      }),
    ).toThrow(
      'replicas[1].pool.idleTimeoutMilis: unknown option "idleTimeoutMilis" (did you mean "idleTimeoutMillis"?)',
    )
  })
})

describe('pool password', () => {
  it('poolPasswordOf: the pool password when the URL has none; the URL one wins', () => {
    expect(poolPasswordOf('postgres://app@db/app', { password: 'pw' })).toBe('pw')
    expect(poolPasswordOf('postgres://app:@db/app', { password: 'pw' })).toBe('pw')
    expect(poolPasswordOf('postgres://app:url@db/app', { password: 'pw' })).toBeUndefined()
    expect(poolPasswordOf('postgres://app@db/app?password=url', { password: 'pw' })).toBeUndefined()
    expect(poolPasswordOf('postgres://app@db/app', {})).toBeUndefined()
    const fn = () => 'pw'
    expect(poolPasswordOf('postgres://app@db/app', { password: fn })).toBe(fn)
  })

  it("a real pg.Client built as the pool builds it gets the pool's password despite the URL's empty one", async () => {
    const n = node({ url: 'postgres://app@db-1:5432/app', pool: { password: 'from-pool' } })
    // Without routemate's fix pg parses the URL over the options: its empty password wins.
    expect(new pg.Client({ password: 'from-pool', connectionString: n.url }).password).not.toBe('from-pool')
    const pool = createPgNodePool(pg, { ...n, pool: { ...n.pool, Client: NoConnectClient } }, () => {})
    const client = await pool.acquire()
    expect(client.password).toBe('from-pool')
    pool.release(client, true)
    await pool.end()
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

  it("merges a URL's ?options= with routemate's setting instead of letting it replace the setting", async () => {
    const config = await clientConfigOf(
      node({
        readOnly: true,
        url: 'postgres://app:secret@db-1:5432/app?options=-c%20statement_timeout%3D5000',
      }),
    )
    expect(config.options).toBe('-c statement_timeout=5000 -c default_transaction_read_only=on')
    expect(config.connectionString).not.toContain('options')
  })

  it("puts routemate's setting last, so a user's default_transaction_read_only=off cannot win", async () => {
    const config = await clientConfigOf(
      node({ readOnly: true, pool: { options: '-c default_transaction_read_only=off' } }),
    )
    expect(config.options).toBe('-c default_transaction_read_only=off -c default_transaction_read_only=on')
  })

  it('refuses a read-only connection whose session does not report read-only, and closes it', async () => {
    class Overridden extends FakeClient {
      override connect(cb: (err: Error | null) => void): void {
        this._queryable = true
        this.connection.emit('parameterStatus', {
          parameterName: 'default_transaction_read_only',
          parameterValue: 'off',
        })
        cb(null)
      }
    }
    const pool = createPgNodePool(
      { Client: Overridden } as unknown as typeof pg,
      node({ readOnly: true }),
      () => {},
    )
    await expect(pool.acquire()).rejects.toThrow(/default_transaction_read_only=off/)
    expect(pool.counts().total).toBe(0)
    await pool.end()
  })

  it('closes a read-only connection on release once its session stopped being read-only or a transaction is open', async () => {
    const pool = createPgNodePool(fakePg, node({ readOnly: true }), () => {})
    const a = (await pool.acquire()) as unknown as FakeClient
    a.connection.emit('parameterStatus', {
      parameterName: 'default_transaction_read_only',
      parameterValue: 'off',
    })
    pool.release(a as unknown as pg.Client, false)
    expect(pool.counts().total).toBe(0)
    const b = (await pool.acquire()) as unknown as FakeClient
    b.getTransactionStatus = () => 'T'
    pool.release(b as unknown as pg.Client, false)
    expect(pool.counts().total).toBe(0)
    const c = (await pool.acquire()) as unknown as FakeClient
    pool.release(c as unknown as pg.Client, false)
    expect(pool.counts()).toMatchObject({ total: 1, idle: 1 })
    await pool.end()
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
