/**
 * routemate's own pg pool against a real PostgreSQL: `max` bounds the connections a node opens
 * (seen from the server), `maxUses` and `idleTimeoutMillis` replace and close connections, client
 * options reach the server, and a connection the server terminates while idle is replaced. A
 * checkout of a full pool waits at most `connectionTimeoutMillis` and the waiting queue is bounded
 * by `maxWaiting` (both `PoolExhaustedError`, the node stays up, a read is not retried
 * elsewhere); a password given only in `pool` logs in; pg's internals routemate reads are there.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ConfigError,
  createRouter,
  PoolExhaustedError,
  PrimaryUnavailableError,
  type Router,
} from '../../src/index.js'
import { pgDriver } from '../../src/pg/index.js'
import { backendKey, onParameterStatus, transactionStatus } from '../../src/pg/pg-internals.js'
import { type PgCluster, startPgCluster } from '../../src/testing/index.js'
import { expectIdle, sleep, stateOf, waitFor } from './support/dialects.js'

const APP = 'rm-pool-test'

describe('pg pool (postgres)', () => {
  let cluster: PgCluster
  let admin: pg.Client

  beforeAll(async () => {
    cluster = await startPgCluster({ replicas: 1 })
    admin = new pg.Client({ connectionString: cluster.primary.url })
    await admin.connect()
  })

  afterAll(async () => {
    await admin?.end()
    await cluster?.stop()
  })

  /** Backends of the router's pool, as the server lists them. */
  async function poolBackends(): Promise<number[]> {
    const r = await admin.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid',
      [APP],
    )
    return r.rows.map((x) => x.pid)
  }

  function router(pool: Record<string, unknown>): Router {
    return createRouter({
      driver: pgDriver(),
      primary: cluster.primary.url,
      healthCheck: false,
      pool: { application_name: APP, ...pool },
    })
  }

  it('max bounds the connections: 40 concurrent statements on 3 server backends, all served', async () => {
    const r = router({ max: 3 })
    try {
      const rows = await Promise.all(
        Array.from({ length: 40 }, () =>
          r.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.02) IS NULL AS slept'),
        ),
      )
      expect(new Set(rows.map((x) => x.rows[0]?.pid)).size).toBe(3)
      expect(await poolBackends()).toHaveLength(3)
      await expectIdle(r)
      expect(r.stats().nodes[0]?.pool).toEqual({ total: 3, idle: 3, waiting: 0 })
    } finally {
      await r.close()
    }
    expect(await poolBackends()).toEqual([])
  })

  it('maxUses replaces a connection after that many checkouts', async () => {
    const r = router({ max: 1, maxUses: 3 })
    try {
      const pids: number[] = []
      for (let i = 0; i < 9; i++)
        pids.push((await r.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid)
      expect(new Set(pids).size).toBe(3)
      expect(pids.slice(0, 3).every((p) => p === pids[0])).toBe(true)
    } finally {
      await r.close()
    }
  })

  it('idleTimeoutMillis closes idle connections (down to min), and they reopen on demand', async () => {
    const r = router({ max: 4, min: 1, idleTimeoutMillis: 200 })
    try {
      await Promise.all(Array.from({ length: 8 }, () => r.query('SELECT pg_sleep(0.02)')))
      expect((await poolBackends()).length).toBe(4)
      await sleep(600)
      expect((await poolBackends()).length).toBe(1)
      expect(r.stats().nodes[0]?.pool.total).toBe(1)
      expect((await r.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one).toBe(1)
    } finally {
      await r.close()
    }
  })

  it('client options reach the server (statement_timeout), and a read-only pool keeps a user options string', async () => {
    const r = createRouter({
      driver: pgDriver(),
      primary: cluster.primary.url,
      healthCheck: false,
      pool: { application_name: APP, statement_timeout: 123, options: '-c search_path=pg_catalog' },
    })
    try {
      const t = await r.query<{ t: string }>("SELECT current_setting('statement_timeout') AS t")
      expect(t.rows[0]?.t).toBe('123ms')
      // no replica: readOnly reads fall back to the primary's read-only pool
      const ro = await r.readOnly(() =>
        r.query<{ sp: string; ro: string }>('SELECT current_setting($1) AS sp, current_setting($2) AS ro', [
          'search_path',
          'default_transaction_read_only',
        ]),
      )
      expect(ro.rows[0]).toEqual({ sp: 'pg_catalog', ro: 'on' })
    } finally {
      await r.close()
    }
  })

  it('a connection the server terminates while idle is replaced: the next statement succeeds', async () => {
    const seen: unknown[] = []
    const r = router({ max: 1 })
    r.on('error', (e) => seen.push(e))
    try {
      const before = (await r.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
      await admin.query('SELECT pg_terminate_backend($1)', [before])
      await sleep(100)
      const after = (await r.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
      expect(after).not.toBe(before)
      expect(seen).toHaveLength(1) // the idle connection's error, reported once as an event
      await expectIdle(r)
    } finally {
      await r.close()
    }
  })

  it('invalid pool options fail at createRouter, naming the option where it is written', () => {
    expect(() => router({ max: 0 })).toThrow(/^pool\.max: expected an integer >= 1, got 0/)
    expect(() => router({ idleTimeoutMillis: 'soon' })).toThrow(/pool\.idleTimeoutMillis/)
    let err: unknown
    try {
      createRouter({
        driver: pgDriver(),
        primary: cluster.primary.url,
        replicas: [{ url: cluster.replicas[0]!.url, pool: { idleTimeoutMilis: 1000 } }],
        healthCheck: false,
      })
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(ConfigError)
    expect((err as ConfigError).path).toBe('replicas[0].pool.idleTimeoutMilis')
    expect((err as Error).message).toContain('(did you mean "idleTimeoutMillis"?)')
  })

  /** Events that would mean the node was blamed for its busy pool. */
  function blame(r: Router): string[] {
    const seen: string[] = []
    for (const name of ['node:suspect', 'node:down', 'retry'] as const) r.on(name, () => seen.push(name))
    return seen
  }

  it('connectionTimeoutMillis: with max 1 busy, a checkout fails after the limit with PoolExhaustedError, not after the busy query', async () => {
    const r = router({ max: 1, connectionTimeoutMillis: 500 })
    const blamed = blame(r)
    try {
      let busyDone = false
      const busy = r.query('SELECT pg_sleep(3)').then(() => {
        busyDone = true
      })
      await waitFor(
        () => r.stats().nodes[0]!.inFlight === 1 && r.stats().nodes[0]!.pool.idle === 0,
        5000,
        'busy',
      )
      const started = Date.now()
      let err: unknown
      try {
        await r.query('SELECT 1')
      } catch (e) {
        err = e
      }
      const waited = Date.now() - started
      expect(busyDone).toBe(false) // it did not wait for the busy connection
      expect(err).toBeInstanceOf(PoolExhaustedError)
      const e = err as PoolExhaustedError
      expect([e.node, e.reason, e.max, e.limit]).toEqual(['primary', 'timeout', 1, 500])
      expect(e.waitedMs).toBeGreaterThanOrEqual(500)
      expect(waited).toBeGreaterThanOrEqual(490)
      expect(e.message).toMatch(/^timeout exceeded when trying to connect/)
      // the node is fine: not suspected, not down, nothing retried, the error counted once
      expect(stateOf(r, 'primary')).toBe('up')
      expect(blamed).toEqual([])
      expect(r.stats().nodes[0]!.errors).toBe(1)
      await busy
      expect((await r.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one).toBe(1)
      await expectIdle(r)
      expect(r.stats().nodes[0]!.pool).toEqual({ total: 1, idle: 1, waiting: 0 })
      expect(await poolBackends()).toHaveLength(1)
    } finally {
      await r.close()
    }
    expect(await poolBackends()).toEqual([])
  })

  it('a readOnly read failing on an exhausted replica pool is not retried on the primary', async () => {
    const r = createRouter({
      driver: pgDriver(),
      primary: { name: 'primary', url: cluster.primary.url },
      replicas: [{ name: 'replica1', url: cluster.replicas[0]!.url }],
      healthCheck: false,
      pool: { application_name: APP, max: 1, connectionTimeoutMillis: 300 },
    })
    const blamed = blame(r)
    try {
      const busy = r.readOnly(() => r.query('SELECT pg_sleep(1.5)'))
      await waitFor(() => r.stats().nodes.find((n) => n.name === 'replica1')!.inFlight === 1, 5000, 'busy')
      const err = await r
        .readOnly(() => r.query('SELECT 1'))
        .then(
          () => undefined,
          (e: unknown) => e,
        )
      expect(err).toBeInstanceOf(PoolExhaustedError)
      expect((err as PoolExhaustedError).node).toBe('replica1')
      expect(blamed).toEqual([])
      expect(stateOf(r, 'replica1')).toBe('up')
      expect(r.stats().nodes.find((n) => n.name === 'primary')!.queries).toBe(0)
      await busy
      await expectIdle(r)
    } finally {
      await r.close()
    }
  })

  it('maxWaiting: past the bound a checkout fails at once, the waiting ones are served', async () => {
    const r = router({ max: 1, maxWaiting: 1 })
    const blamed = blame(r)
    try {
      let busyDone = false
      const busy = r.query('SELECT pg_sleep(1)').then(() => {
        busyDone = true
      })
      await waitFor(
        () => r.stats().nodes[0]!.inFlight === 1 && r.stats().nodes[0]!.pool.idle === 0,
        5000,
        'busy',
      )
      const waiting = r.query<{ one: number }>('SELECT 1 AS one')
      await waitFor(() => r.stats().nodes[0]!.pool.waiting === 1, 5000, 'a waiter')
      const err = await r.query('SELECT 2').then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(busyDone).toBe(false)
      expect(err).toBeInstanceOf(PoolExhaustedError)
      const e = err as PoolExhaustedError
      expect([e.reason, e.waitedMs, e.max, e.waiting, e.limit]).toEqual(['queue-full', 0, 1, 1, 1])
      expect((await waiting).rows[0]?.one).toBe(1)
      await busy
      expect(blamed).toEqual([])
      await expectIdle(r)
    } finally {
      await r.close()
    }
  })

  it('a password given only in pool options logs in (pool and probes), and a wrong one is refused', async () => {
    const url = new URL(cluster.primary.url)
    const password = decodeURIComponent(url.password)
    url.password = ''
    const noPassword = url.toString()
    expect(noPassword).not.toContain(password)
    const secure = (pool: Record<string, unknown>) =>
      createRouter({
        driver: pgDriver(),
        primary: noPassword,
        healthCheck: { intervalMs: 1000, timeoutMs: 900 },
        pool: { application_name: APP, ...pool },
      })
    for (const given of [password, async () => password]) {
      const r = secure({ password: given })
      try {
        await r.ready()
        expect(stateOf(r, 'primary')).toBe('up') // the probe logged in too
        const who = await r.query<{ u: string }>('SELECT current_user AS u')
        expect(who.rows[0]?.u).toBe('app')
        const ro = await r.readOnly(() => r.query<{ u: string }>('SELECT current_user AS u'))
        expect(ro.rows[0]?.u).toBe('app')
        expect(JSON.stringify(r.stats())).not.toContain(password)
      } finally {
        await r.close()
      }
    }
    // The server really checks it (app logs in with SCRAM on 127.0.0.1): a wrong one fails.
    const wrong = secure({ password: 'not-the-password' })
    wrong.on('error', () => {})
    try {
      // A primary never reached yet: the login failure surfaces as PrimaryUnavailableError with the server's error as cause.
      const err = await wrong.query('SELECT 1').then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(PrimaryUnavailableError)
      expect((err as { cause?: { code?: string } }).cause).toMatchObject({ code: '28P01' })
    } finally {
      await wrong.close()
    }
  })

  it('pg internals routemate reads are there on a real connection: backend key, transaction status, ParameterStatus', async () => {
    const client = new pg.Client({ connectionString: cluster.replicas[0]!.url })
    const params = new Map<string, string>()
    onParameterStatus(client, (name, value) => params.set(name, value))
    await client.connect()
    try {
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
      expect(backendKey(client)?.processID).toBe(pid)
      expect(typeof backendKey(client)?.secretKey).toBe('number')
      const version = (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v"))
        .rows[0]!.v
      expect(params.get('server_version')).toBe(version)
      if (Number.parseInt(version, 10) >= 14) expect(params.get('in_hot_standby')).toBe('on')
      await client.query("SET application_name = 'rm-internals'")
      expect(params.get('application_name')).toBe('rm-internals')
      expect(transactionStatus(client)).toBe('I')
      await client.query('BEGIN')
      expect(transactionStatus(client)).toBe('T')
      await expect(client.query('SELECT 1/0')).rejects.toThrow()
      // pg rejects on the ErrorResponse; the status comes with the ReadyForQuery right after it
      for (let i = 0; i < 100 && transactionStatus(client) !== 'E'; i++)
        await new Promise((r) => setTimeout(r, 5))
      expect(transactionStatus(client)).toBe('E')
      await client.query('ROLLBACK')
      expect(transactionStatus(client)).toBe('I')
    } finally {
      await client.end()
    }
  })
})
