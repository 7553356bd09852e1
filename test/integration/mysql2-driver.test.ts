/**
 * The mysql2 driver against a real MariaDB primary + replica: pools, results, timeouts, aborting
 * work on a frozen server, probes (role, GTID position, replication state), read-your-writes
 * positions, error classification of real errors, and the pool facade through a router.
 */
import { readFileSync } from 'node:fs'
import { eq } from 'drizzle-orm'
import { int, mysqlTable, varchar } from 'drizzle-orm/mysql-core'
import { drizzle } from 'drizzle-orm/mysql2'
import { type Generated, Kysely, MysqlDialect, sql } from 'kysely'
import type { Pool, PoolConnection } from 'mysql2/promise'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRouter,
  type DriverNodeOptions,
  type DriverPool,
  PoolExhaustedError,
  ReadOnlyViolationError,
  type Router,
} from '../../src/index.js'
import { mysql2Driver, type RoutedMysql2Connection, type RoutedMysql2Pool } from '../../src/mysql2/index.js'
import { parseReplicaStatus } from '../../src/mysql2/mysql2-replica-status.js'
import { type MariaDbCluster, startMariaDbCluster } from '../../src/testing/mariadb-cluster.js'

/**
 * Kysely's `MysqlPool` / `MysqlPoolConnection` (kysely/src/dialect/mysql/mysql-dialect-config.ts),
 * copied to check at compile time that `router.pool()` fits `new MysqlDialect({ pool })`.
 */
interface KyselyMysqlPool {
  getConnection(callback: (error: unknown, connection: KyselyMysqlPoolConnection) => void): void
  end(callback: (error: unknown) => void): void
}
interface KyselyMysqlPoolConnection {
  config: object
  connect(callback?: (error: unknown) => void): void
  destroy(): void
  query(
    sql: string,
    parameters: Array<unknown>,
  ): {
    stream: <T>(options: { highWaterMark?: number; objectMode?: true }) => {
      [Symbol.asyncIterator](): AsyncIterableIterator<T>
    }
  }
  query(sql: string, parameters: Array<unknown>, callback: (error: unknown, result: unknown) => void): void
  threadId: number
  release(): void
}
/** `router.pool()` typed as Kysely's pool: compiles only while the facade fits Kysely's interfaces. */
function asKyselyPool(pool: RoutedMysql2Pool): KyselyMysqlPool {
  return {
    getConnection: (cb: (error: unknown, connection: KyselyMysqlPoolConnection) => void) =>
      pool.getConnection(cb),
    end: (cb: (error: unknown) => void) => pool.end(cb),
  }
}

const driver = mysql2Driver()
let cluster: MariaDbCluster

function node(url: string, extra: Partial<DriverNodeOptions> = {}): DriverNodeOptions {
  return { name: 'n', url, pool: {}, connectTimeoutMs: 2000, queryTimeoutMs: 0, readOnly: false, ...extra }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Pauses a node and waits until its process is really stopped (SIGSTOP is delivered asynchronously). */
async function pause(name: string): Promise<void> {
  await cluster.pause(name)
  const pid = cluster.nodes.find((n) => n.name === name)?.pid
  const t0 = Date.now()
  while (Date.now() - t0 < 30_000) {
    const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
    if (state === 'T') return
    await sleep(5)
  }
  throw new Error(`${name} did not stop`)
}

/** Runs `fn` on a fresh pool that is ended afterwards; collects the pool's background errors. */
async function withPool<T>(
  options: DriverNodeOptions,
  fn: (pool: DriverPool<PoolConnection>, errors: unknown[]) => Promise<T>,
): Promise<T> {
  const errors: unknown[] = []
  const pool = driver.createPool(options, (err) => errors.push(err))
  try {
    return await fn(pool, errors)
  } finally {
    await pool.end()
  }
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (err) {
    return err
  }
  throw new Error('expected a rejection')
}

/** The driver probes go through (a driver remembers for a minute that a user may not read replication status). */
let probeDriver = driver

function probe(url: string, timeoutMs = 2000) {
  return probeDriver.probe(node(url, { connectTimeoutMs: timeoutMs }), AbortSignal.timeout(timeoutMs))
}

beforeAll(async () => {
  cluster = await startMariaDbCluster({ replicas: 1 })
  await cluster.query('primary', 'CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(50))')
  await cluster.waitForReplication()
})

afterAll(async () => {
  await cluster?.stop()
})

describe('pool and execute', () => {
  it('runs reads and writes and maps their results', async () => {
    await withPool(node(cluster.primary.url), async (pool) => {
      const conn = await pool.acquire()
      try {
        const ins = await driver.execute(conn, 'INSERT INTO items (v) VALUES (?), (?)', ['a', 'b'])
        expect(ins).toMatchObject({ rows: [], rowCount: 2, affectedRows: 2 })
        expect(Number(ins.insertId)).toBeGreaterThan(0)
        const upd = await driver.execute(conn, 'UPDATE items SET v = ? WHERE v = ?', ['a', 'a'])
        expect(upd).toMatchObject({ rowCount: 1, affectedRows: 1, changedRows: 0 })
        const sel = await driver.execute(conn, 'SELECT id, v FROM items WHERE v IN (?, ?) ORDER BY id', [
          'a',
          'b',
        ])
        expect(sel.rowCount).toBe(2)
        expect(sel.rows.map((r) => r.v)).toEqual(['a', 'b'])
        expect((sel.fields as { name: string }[]).map((f) => f.name)).toEqual(['id', 'v'])
        const opts = await driver.execute(
          conn,
          { sql: 'SELECT ? AS x', values: [7], rowsAsArray: true } as never,
          undefined,
        )
        expect(opts.rows).toEqual([[7]])
        expect(pool.counts()).toEqual({ total: 1, idle: 0, waiting: 0 })
      } finally {
        pool.release(conn, false)
      }
      expect(pool.counts()).toEqual({ total: 1, idle: 1, waiting: 0 })
    })
  })

  it('maps several result sets (multipleStatements)', async () => {
    await withPool(node(cluster.primary.url, { pool: { multipleStatements: true } }), async (pool) => {
      const conn = await pool.acquire()
      try {
        const res = await driver.execute(
          conn,
          'SELECT 1 AS a; UPDATE items SET v = v WHERE 0; SELECT 2 AS b',
          [],
        )
        expect(res.rowCount).toBeNull()
        expect(res.rows).toHaveLength(3)
        expect(res.rows[0]).toEqual([{ a: 1 }])
      } finally {
        pool.release(conn, false)
      }
    })
  })

  it('runs BEGIN as its statements (isolation level first), and savepoints', async () => {
    await withPool(node(cluster.primary.url), async (pool) => {
      const conn = await pool.acquire()
      try {
        for (const stmt of driver.beginSql({ readOnly: false, isolation: 'serializable' })) {
          await driver.execute(conn, stmt, undefined)
        }
        const [row] = (await driver.execute(conn, 'SELECT @@in_transaction AS t', undefined)).rows
        expect(row?.t).toBe(1)
        await driver.execute(conn, driver.savepointSql('sp1', 'create'), undefined)
        await driver.execute(conn, "INSERT INTO items (v) VALUES ('sp')", undefined)
        await driver.execute(conn, driver.savepointSql('sp1', 'rollback'), undefined)
        await driver.execute(conn, driver.savepointSql('sp1', 'release'), undefined)
        await driver.execute(conn, 'COMMIT', undefined)
        const n = await driver.execute(conn, "SELECT COUNT(*) AS n FROM items WHERE v = 'sp'", undefined)
        expect(Number(n.rows[0]?.n)).toBe(0)
        for (const stmt of driver.beginSql({ readOnly: true })) await driver.execute(conn, stmt, undefined)
        const err = await failure(driver.execute(conn, "INSERT INTO items (v) VALUES ('ro')", undefined))
        expect(err).toMatchObject({ errno: 1792 })
        expect(driver.classify(err)).toBe('read-only')
        await driver.execute(conn, 'ROLLBACK', undefined)
      } finally {
        pool.release(conn, false)
      }
    })
  })

  it('a read-only pool refuses writes (1792) on every connection, first use and reuse', async () => {
    await withPool(node(cluster.primary.url, { readOnly: true }), async (pool) => {
      for (let i = 0; i < 2; i++) {
        const conn = await pool.acquire()
        try {
          const err = await failure(driver.execute(conn, "INSERT INTO items (v) VALUES ('x')", undefined))
          expect(err).toMatchObject({ errno: 1792 })
          expect(driver.classify(err)).toBe('read-only')
          const res = await driver.execute(conn, 'SELECT @@tx_read_only AS ro', undefined)
          expect(Number(res.rows[0]?.ro)).toBe(1)
        } finally {
          pool.release(conn, false)
        }
      }
      expect(pool.counts().total).toBe(1)
    })
  })

  it('a write on a replica is refused with 1290, classified read-only', async () => {
    await withPool(node(cluster.replicas[0]?.url ?? ''), async (pool) => {
      const conn = await pool.acquire()
      try {
        const err = await failure(driver.execute(conn, "INSERT INTO items (v) VALUES ('x')", undefined))
        expect(err).toMatchObject({ errno: 1290 })
        expect(driver.classify(err)).toBe('read-only')
      } finally {
        pool.release(conn, false)
      }
    })
  })

  it("queryTimeoutMs sets no mysql2 timeout (the router cancels with KILL QUERY); a statement's own timeout is a timeout-class error and destroying the connection frees the pool", async () => {
    await withPool(node(cluster.primary.url, { queryTimeoutMs: 200 }), async (pool) => {
      const conn = await pool.acquire()
      // Not bounded by the driver: the router times statements itself.
      expect((await driver.execute(conn, 'SELECT SLEEP(0.4) AS s', undefined)).rows).toEqual([{ s: 0 }])
      const id = Number((await driver.execute(conn, 'SELECT CONNECTION_ID() AS id', undefined)).rows[0]?.id)
      const err = await failure(driver.execute(conn, { sql: 'SELECT SLEEP(60)', timeout: 200 }, undefined))
      expect(err).toMatchObject({ code: 'PROTOCOL_SEQUENCE_TIMEOUT' })
      expect(driver.classify(err)).toBe('timeout')
      // The error came while the statement was still running on the server (an ordering fact, not
      // a duration): it is the client's deadline, not the end of the statement.
      const running = (await cluster.query(
        'primary',
        'SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE ?',
        [id, 'SELECT SLEEP(60)%'],
        { superuser: true },
      )) as { n: number }[]
      expect(Number(running[0]?.n)).toBe(1)
      await cluster.query('primary', `KILL ${id}`, [], { superuser: true }).catch(() => {})
      pool.release(conn, true)
      expect(pool.counts().total).toBe(0)
      const again = await pool.acquire()
      expect((await driver.execute(again, 'SELECT 1 AS one', undefined)).rows).toEqual([{ one: 1 }])
      pool.release(again, false)
    })
  })

  it('an idle connection killed by the server is reported to onError, never crashes', async () => {
    await withPool(node(cluster.primary.url), async (pool, errors) => {
      const conn = await pool.acquire()
      const id = Number((await driver.execute(conn, 'SELECT CONNECTION_ID() AS id', undefined)).rows[0]?.id)
      pool.release(conn, false)
      await cluster.query('primary', `KILL ${id}`, [], { superuser: true })
      const t0 = Date.now()
      while (errors.length === 0 && Date.now() - t0 < 30_000) await sleep(20) // liveness only
      expect(errors.length).toBeGreaterThan(0)
      expect(driver.classify(errors[0])).toBe('connection')
      expect(pool.counts().total).toBe(0)
      const next = await pool.acquire()
      expect((await driver.execute(next, 'SELECT 1 AS one', undefined)).rows).toEqual([{ one: 1 }])
      pool.release(next, false)
    })
  })
})

describe('frozen server', () => {
  it('destroy() fails a query pending on a paused server at once', async () => {
    const url = cluster.replicas[0]?.url ?? ''
    await withPool(node(url), async (pool) => {
      const conn = await pool.acquire()
      await driver.execute(conn, 'SELECT 1', undefined)
      await pause('replica1')
      try {
        let settled = false
        const pending = failure(driver.execute(conn, 'SELECT 2', undefined)).finally(() => {
          settled = true
        })
        await sleep(200)
        expect(settled).toBe(false) // the frozen server never answers: only destroy() can end it
        pool.destroy(conn)
        const err = await pending
        expect(driver.classify(err)).toBe('connection')
        pool.release(conn, true)
        expect(pool.counts().total).toBe(0)
        // A probe of the frozen server gives up when its signal aborts (its own connect timeout,
        // 60 s, is not what ends it).
        const ac = new AbortController()
        let probeSettled = false
        const probing = probeDriver.probe(node(url, { connectTimeoutMs: 60_000 }), ac.signal).finally(() => {
          probeSettled = true
        })
        probing.catch(() => {})
        await sleep(200)
        expect(probeSettled).toBe(false)
        ac.abort()
        await expect(probing).rejects.toBeDefined()
      } finally {
        await cluster.resume('replica1')
      }
    })
  })

  it('end() of a pool with an idle connection to a frozen server does not hang', async () => {
    const url = cluster.replicas[0]?.url ?? ''
    const pool = driver.createPool(node(url, { connectTimeoutMs: 500 }), () => {})
    const conn = await pool.acquire()
    pool.release(conn, false)
    await pause('replica1')
    try {
      // Resolves while the server is still frozen (it never answers a QUIT): end() does not wait on it.
      await pool.end()
    } finally {
      await cluster.resume('replica1')
    }
  })
})

describe('probe', () => {
  it('reads a primary: role and GTID binlog position', async () => {
    await cluster.query('primary', "INSERT INTO items (v) VALUES ('p')")
    const [row] = (await cluster.query('primary', 'SELECT @@gtid_binlog_pos AS pos')) as { pos: string }[]
    expect(await probe(cluster.primary.url)).toEqual({ role: 'primary', position: row?.pos })
  })

  it('reads a replica without the privilege for replication status: role and position only', async () => {
    await cluster.query('primary', "REVOKE SLAVE MONITOR ON *.* FROM 'app'@'%'", [], { superuser: true })
    await cluster.waitForReplication()
    const result = await probe(cluster.replicas[0]?.url ?? '')
    const [row] = (await cluster.query('replica1', 'SELECT @@gtid_slave_pos AS pos')) as { pos: string }[]
    expect(result).toEqual({ role: 'replica', position: row?.pos })
  })

  it('parses the real SHOW ALL REPLICAS STATUS of MariaDB', async () => {
    const rows = (await cluster.query('replica1', 'SHOW ALL REPLICAS STATUS', [], {
      superuser: true,
    })) as Record<string, unknown>[]
    expect(parseReplicaStatus(rows)).toEqual({ replicating: true, reportedLagMs: 0 })
  })

  describe('with SLAVE MONITOR granted', () => {
    beforeAll(async () => {
      await cluster.query('primary', "GRANT SLAVE MONITOR ON *.* TO 'app'@'%'", [], { superuser: true })
      await cluster.waitForReplication()
    })

    it('a driver refused before asks again only later; a new driver reads replication state', async () => {
      expect(await probe(cluster.replicas[0]?.url ?? '')).not.toHaveProperty('replicating')
      probeDriver = mysql2Driver()
      expect(await probe(cluster.replicas[0]?.url ?? '')).toHaveProperty('replicating', true)
    })

    it('reads replication state of a healthy replica', async () => {
      expect(await probe(cluster.replicas[0]?.url ?? '')).toMatchObject({
        role: 'replica',
        replicating: true,
        reportedLagMs: 0,
      })
    })

    it('STOP SLAVE: not replicating; START SLAVE: replicating again', async () => {
      await cluster.stopReplication('replica1')
      expect(await probe(cluster.replicas[0]?.url ?? '')).toMatchObject({ replicating: false })
      await cluster.startReplication('replica1')
      expect(await probe(cluster.replicas[0]?.url ?? '')).toMatchObject({ replicating: true })
    })

    it('positionAfterWrite / positionReached follow a replica applying a write', async () => {
      await withPool(node(cluster.primary.url), async (pool) => {
        await cluster.stopReplication('replica1', 'sql')
        const conn = await pool.acquire()
        let token: string
        try {
          await driver.execute(conn, "INSERT INTO items (v) VALUES ('ryw')", undefined)
          token = await driver.positionAfterWrite(conn)
        } finally {
          pool.release(conn, false)
        }
        expect(token).toMatch(/^\d+-\d+-\d+/)
        const behind = await probe(cluster.replicas[0]?.url ?? '')
        expect(behind.replicating).toBe(false)
        expect(driver.positionReached(behind.position ?? '', token)).toBe(false)
        await withPool(
          node(cluster.replicas[0]?.url ?? '', { queryTimeoutMs: 1000 }),
          async (replicaPool) => {
            const rc = await replicaPool.acquire()
            try {
              const now = await driver.waitForPosition(rc, token, 0)
              expect(now).toBe(behind.position)
              const t0 = Date.now()
              const stuck = await driver.waitForPosition(rc, token, 300)
              expect(Date.now() - t0).toBeGreaterThanOrEqual(250)
              expect(driver.positionReached(stuck ?? '', token)).toBe(false)
              const starting = sleep(300).then(() => cluster.startReplication('replica1'))
              // Returns with the position reached, not at its (generous) deadline.
              const reached = await driver.waitForPosition(rc, token, 60_000)
              await starting
              expect(driver.positionReached(reached ?? '', token)).toBe(true)
            } finally {
              replicaPool.release(rc, false)
            }
          },
        )
        const caughtUp = await probe(cluster.replicas[0]?.url ?? '')
        expect(driver.positionReached(caughtUp.position ?? '', token)).toBe(true)
      })
    })

    it('a replica whose primary is killed keeps replicating (IO thread Connecting)', async () => {
      await cluster.kill('primary')
      try {
        await sleep(1500)
        const [status] = (await cluster.query('replica1', 'SHOW SLAVE STATUS', [], {
          superuser: true,
        })) as Record<string, unknown>[]
        expect(status?.Slave_IO_Running).toBe('Connecting')
        const result = await probe(cluster.replicas[0]?.url ?? '')
        expect(result.role).toBe('replica')
        expect(result.replicating).not.toBe(false)
        // The dead primary: connection refused, classified as a connection error.
        const err = await failure(probe(cluster.primary.url))
        expect(err).toMatchObject({ code: 'ECONNREFUSED' })
        expect(driver.classify(err)).toBe('connection')
      } finally {
        await cluster.restart('primary')
      }
    })
  })
})

describe('classify real errors', () => {
  it('a pooled connection whose server is killed: connection', async () => {
    // Its own one-node cluster, so killing it does not disturb the others.
    const solo = await startMariaDbCluster({ replicas: 0 })
    try {
      await withPool(node(solo.primary.url), async (pool, errors) => {
        const busy = await pool.acquire()
        const idle = await pool.acquire()
        pool.release(idle, false)
        const pending = failure(driver.execute(busy, 'SELECT SLEEP(5)', undefined))
        await sleep(100)
        await solo.kill('primary')
        const err = await pending
        expect(driver.classify(err)).toBe('connection')
        pool.release(busy, true)
        const t0 = Date.now()
        while (errors.length === 0 && Date.now() - t0 < 30_000) await sleep(20) // liveness only
        expect(errors.map((e) => driver.classify(e))).toContain('connection')
        const refused = await failure(pool.acquire())
        expect(driver.classify(refused)).toBe('connection')
      })
    } finally {
      await solo.stop()
    }
  })

  it('bad password (1045) and unknown database (1049) at login: connection', async () => {
    const bad = new URL(cluster.primary.url)
    bad.password = 'wrong'
    const e1 = await failure(probe(bad.toString()))
    expect(e1).toMatchObject({ errno: 1045 })
    expect(driver.classify(e1)).toBe('connection')
    const noDb = new URL(cluster.superuserUrl)
    noDb.pathname = '/missing_db'
    const e2 = await failure(probe(noDb.toString()))
    expect(e2).toMatchObject({ errno: 1049 })
    expect(driver.classify(e2)).toBe('connection')
    await withPool(node(cluster.primary.url), async (pool) => {
      const conn = await pool.acquire()
      try {
        const e3 = await failure(driver.execute(conn, 'USE missing_db', undefined))
        expect(e3).toMatchObject({ errno: 1044 })
        expect(driver.classify(e3)).toBe('statement')
        const e4 = await failure(driver.execute(conn, 'SELEC 1', undefined))
        expect(driver.classify(e4)).toBe('statement')
      } finally {
        pool.release(conn, false)
      }
    })
  })
})

describe('a full pool (queueLimit, waitForConnections: false)', () => {
  /** A router whose primary pool has one connection, held by a SLEEP(1) when `hold` runs. */
  async function fullPool(pool: Record<string, unknown>) {
    const r = createRouter({
      driver: mysql2Driver(),
      primary: { name: 'primary', url: cluster.primary.url },
      healthCheck: false,
      connectTimeoutMs: 2000,
      pool: { connectionLimit: 1, ...pool },
    })
    const blamed: string[] = []
    for (const name of ['node:suspect', 'node:down', 'retry'] as const) r.on(name, () => blamed.push(name))
    let busyDone = false
    const busy = r.query('SELECT SLEEP(1)').then(() => {
      busyDone = true
    })
    const held = () => r.stats().nodes[0]!.inFlight === 1 && r.stats().nodes[0]!.pool.total === 1
    for (let i = 0; i < 200 && !held(); i++) await sleep(10)
    expect(held()).toBe(true)
    return { r, blamed, busy, busyDone: () => busyDone }
  }

  it('past queueLimit a checkout fails at once with PoolExhaustedError (mysql2 error as cause); the node stays up', async () => {
    const { r, blamed, busy, busyDone } = await fullPool({ queueLimit: 1 })
    try {
      const waiting = r.query('SELECT 1 AS one')
      for (let i = 0; i < 200 && r.stats().nodes[0]!.pool.waiting !== 1; i++) await sleep(10)
      expect(r.stats().nodes[0]!.pool.waiting).toBe(1)
      const err = await failure(r.query('SELECT 2'))
      expect(busyDone()).toBe(false)
      expect(err).toBeInstanceOf(PoolExhaustedError)
      const e = err as PoolExhaustedError
      expect([e.node, e.reason, e.max, e.waiting, e.limit]).toEqual(['primary', 'queue-full', 1, 1, 1])
      expect((e.cause as Error).message).toBe('Queue limit reached.')
      expect(((await waiting).rows as { one: number }[])[0]?.one).toBe(1)
      await busy
      expect(blamed).toEqual([])
      expect(r.stats().nodes[0]!.state).toBe('up')
    } finally {
      await r.close()
    }
  })

  it('waitForConnections: false fails a checkout of a full pool at once', async () => {
    const { r, blamed, busy, busyDone } = await fullPool({ waitForConnections: false })
    try {
      const err = await failure(r.query('SELECT 2'))
      expect(busyDone()).toBe(false)
      expect(err).toBeInstanceOf(PoolExhaustedError)
      expect([(err as PoolExhaustedError).reason, (err as PoolExhaustedError).limit]).toEqual([
        'queue-full',
        0,
      ])
      expect(((err as PoolExhaustedError).cause as Error).message).toBe('No connections available.')
      await busy
      expect(blamed).toEqual([])
    } finally {
      await r.close()
    }
  })
})

describe('through a router', () => {
  let router: Router
  let pool: RoutedMysql2Pool
  let serverIds: Map<number, string>

  async function serverOf(p: Promise<[unknown, unknown]>): Promise<string | undefined> {
    const [rows] = await p
    return serverIds.get(Number((rows as { id: number }[])[0]?.id))
  }

  beforeAll(async () => {
    router = createRouter({
      driver: mysql2Driver(),
      primary: { name: 'primary', url: cluster.primary.url },
      replicas: [{ name: 'replica1', url: cluster.replicas[0]?.url ?? '' }],
      healthCheck: { intervalMs: 300, timeoutMs: 250 },
      connectTimeoutMs: 2000,
      queryTimeoutMs: 5000,
    })
    await router.ready()
    pool = router.pool<RoutedMysql2Pool>()
    serverIds = new Map([
      [1, 'primary'],
      [2, 'replica1'],
    ])
  })

  afterAll(async () => {
    await router?.close()
  })

  it('routes writes to the primary and readOnly reads to the replica, with uniform results', async () => {
    const ins = await router.query('INSERT INTO items (v) VALUES (?)', ['routed'])
    expect(ins).toMatchObject({ rows: [], rowCount: 1, affectedRows: 1 })
    await cluster.waitForReplication()
    const { rows, rowCount } = await router.readOnly(() =>
      router.query<{ id: number }>('SELECT @@server_id AS id'),
    )
    expect(rowCount).toBe(1)
    expect(rows[0]?.id).toBe(2)
    await expect(
      router.readOnly(() => router.query('INSERT INTO items (v) VALUES (1)')),
    ).rejects.toBeInstanceOf(ReadOnlyViolationError)
  })

  it('runs transactions with an isolation level, and read-only ones on the replica', async () => {
    // READ COMMITTED sees a row another session commits meanwhile; REPEATABLE READ keeps its snapshot.
    const seen = (isolation: 'read committed' | 'repeatable read') =>
      router.transaction(
        async (tx) => {
          const count = async () =>
            Number(
              (await tx.query<{ n: number }>("SELECT COUNT(*) AS n FROM items WHERE v = 'iso'")).rows[0]?.n,
            )
          const before = await count()
          await cluster.query('primary', "INSERT INTO items (v) VALUES ('iso')")
          return (await count()) - before
        },
        { isolation },
      )
    expect(await seen('read committed')).toBe(1)
    expect(await seen('repeatable read')).toBe(0)
    await router.transaction(
      async (tx) => {
        expect(tx.node).toBe('replica1')
        await expect(tx.query('SELECT 1')).resolves.toMatchObject({ rowCount: 1 })
      },
      { readOnly: true, isolation: 'repeatable read' },
    )
  })

  it('pool facade, promise style (Drizzle): native [rows, fields] and [ResultSetHeader]', async () => {
    expect(pool).toBeInstanceOf((await import('node:events')).EventEmitter)
    expect(pool.promise()).toBe(pool)
    const [rows, fields] = await pool.query('SELECT ? AS x', [5])
    expect(rows).toEqual([{ x: 5 }])
    expect((fields as { name: string }[])[0]?.name).toBe('x')
    const [header] = await pool.query<{ affectedRows: number; insertId: number }>(
      'INSERT INTO items (v) VALUES (?)',
      ['facade'],
    )
    expect(header.affectedRows).toBe(1)
    expect(header.insertId).toBeGreaterThan(0)
    const [prepared] = await pool.execute({ sql: 'SELECT ? + 1 AS y', rowsAsArray: true }, [1])
    expect(prepared).toEqual([[2]])
    await cluster.waitForReplication()
    expect(await router.readOnly(() => serverOf(pool.query('SELECT @@server_id AS id')))).toBe('replica1')
    await expect(router.readOnly(() => pool.query("UPDATE items SET v = 'x'"))).rejects.toBeInstanceOf(
      ReadOnlyViolationError,
    )
  })

  it("pool facade, text statements in mysql2's text form: execute is prepared, every value shape still works", async () => {
    const status = async (name: string) =>
      Number(
        ((await cluster.query('primary', `SHOW GLOBAL STATUS LIKE '${name}'`)) as { Value: string }[])[0]
          ?.Value,
      )
    // pool.execute(sql, values): a server-side prepared statement, as with mysql2's own pool
    const executed = await status('Com_stmt_execute')
    await router.primary(async () => {
      expect((await pool.execute('SELECT ? + 1 AS y', [1]))[0]).toEqual([{ y: 2 }])
      expect((await pool.execute('SELECT 3 AS z'))[0]).toEqual([{ z: 3 }])
    })
    expect((await status('Com_stmt_execute')) - executed).toBe(2)
    // pool.query(sql, values): not prepared
    const beforeQuery = await status('Com_stmt_execute')
    await router.primary(async () => {
      expect((await pool.query('SELECT ? AS x', [4]))[0]).toEqual([{ x: 4 }])
      expect((await pool.query('SELECT ? AS x', 5 as never))[0]).toEqual([{ x: 5 }]) // a scalar value
      expect((await pool.query('SELECT 6 AS x'))[0]).toEqual([{ x: 6 }])
    })
    expect((await status('Com_stmt_execute')) - beforeQuery).toBe(0)
    // bad values fail as mysql2 fails them; the pool keeps working
    await expect(pool.execute('SELECT ? AS x', [undefined])).rejects.toThrow(/undefined/)
    // inside a transaction, on its connection: rolled back with it
    await router
      .transaction(async () => {
        await pool.execute('INSERT INTO items (v) VALUES (?)', ['text-form'])
        const [n] = await pool.execute("SELECT COUNT(*) AS n FROM items WHERE v = 'text-form'")
        expect(Number((n as { n: number }[])[0]?.n)).toBe(1)
        throw new Error('roll back')
      })
      .catch((err: Error) => expect(err.message).toBe('roll back'))
    const [after] = await pool.query("SELECT COUNT(*) AS n FROM items WHERE v = 'text-form'")
    expect(Number((after as { n: number }[])[0]?.n)).toBe(0)
    // the read-only guard still sees the text
    await expect(
      router.readOnly(() => pool.execute('DELETE FROM items WHERE id = ?', [1])),
    ).rejects.toBeInstanceOf(ReadOnlyViolationError)
    // options objects (Drizzle's form) keep the options form: their options hold, the caller's object is unchanged
    const typeCast = (field: { name: string }, next: () => unknown) =>
      field.name === 'five' ? 'cast' : next()
    const drizzleForm = { sql: 'SELECT ? + 1 AS y, 5 AS five', rowsAsArray: true, typeCast }
    expect((await pool.query(drizzleForm, [1]))[0]).toEqual([[2, 'cast']])
    expect((await pool.execute(drizzleForm, [2]))[0]).toEqual([[3, 'cast']])
    expect(drizzleForm).toEqual({ sql: 'SELECT ? + 1 AS y, 5 AS five', rowsAsArray: true, typeCast })
    expect((await pool.query({ sql: 'SELECT ? AS x', values: [9] }))[0]).toEqual([{ x: 9 }])
    expect((await pool.query({ sql: 'SELECT ? AS x', values: [9] }, [10]))[0]).toEqual([{ x: 10 }])
    // a held connection's query(sql, values) in the text form
    const conn = await pool.getConnection()
    expect((await conn.query('SELECT ? AS x', [7]))[0]).toEqual([{ x: 7 }])
    expect((await conn.execute('SELECT ? AS x', [8]))[0]).toEqual([{ x: 8 }])
    conn.release()
  })

  it('pool facade, promise connections: transactions, and savepoints inside router.transaction', async () => {
    const conn = await pool.getConnection()
    await conn.beginTransaction()
    await conn.query('INSERT INTO items (v) VALUES (?)', ['own-tx'])
    await conn.rollback()
    conn.release()
    const [own] = await pool.query("SELECT COUNT(*) AS n FROM items WHERE v = 'own-tx'")
    expect(Number((own as { n: number }[])[0]?.n)).toBe(0)

    await router.transaction(async () => {
      await router.query('INSERT INTO items (v) VALUES (?)', ['outer'])
      const inner = await pool.getConnection()
      await inner.beginTransaction() // a savepoint: the outer transaction wins
      await inner.query('INSERT INTO items (v) VALUES (?)', ['inner'])
      await inner.rollback()
      inner.release()
      const [n] = await pool.query("SELECT COUNT(*) AS n FROM items WHERE v = 'outer'")
      expect(Number((n as { n: number }[])[0]?.n)).toBe(1)
    })
    const [counts] = await pool.query(
      "SELECT SUM(v = 'outer') AS outer_n, SUM(v = 'inner') AS inner_n FROM items",
    )
    expect(counts).toEqual([{ outer_n: '1', inner_n: '0' }])
  })

  it('pool facade, callback style (Kysely): getConnection(cb), query(sql, params, cb), stream()', async () => {
    const kysely = asKyselyPool(pool)
    const conn = await new Promise<KyselyMysqlPoolConnection>((resolve, reject) =>
      kysely.getConnection((err, c) => (err ? reject(err) : resolve(c))),
    )
    expect(conn.threadId).toBeGreaterThan(0)
    const rows = await new Promise<unknown>((resolve, reject) =>
      conn.query('SELECT ? AS x', [3], (err, result) => (err ? reject(err) : resolve(result))),
    )
    expect(rows).toEqual([{ x: 3 }])
    const streamed: unknown[] = []
    for await (const row of conn.query('SELECT seq FROM seq_1_to_5', []).stream({ objectMode: true })) {
      streamed.push(row)
    }
    expect(streamed).toEqual([1, 2, 3, 4, 5].map((seq) => ({ seq })))
    conn.release()
    await router.readOnly(async () => {
      const c = await new Promise<RoutedMysql2Connection>((resolve, reject) =>
        pool.getConnection((err, x) => (err || x === undefined ? reject(err) : resolve(x))),
      )
      expect(c.node).toBe('replica1')
      const err = await new Promise<unknown>((resolve) => c.query('DELETE FROM items', [], (e) => resolve(e)))
      expect(err).toBeInstanceOf(ReadOnlyViolationError)
      c.release()
    })
  })

  it('pool facade emits error for a background failure only while someone listens', async () => {
    const errors: unknown[] = []
    pool.on('error', (err) => errors.push(err))
    const conn = await pool.getConnection()
    const [rows] = await conn.query('SELECT CONNECTION_ID() AS id')
    conn.release()
    await cluster.query('primary', `KILL ${(rows as { id: number }[])[0]?.id}`, [], { superuser: true })
    const t0 = Date.now()
    while (errors.length === 0 && Date.now() - t0 < 30_000) await sleep(20) // liveness only
    expect(errors.length).toBeGreaterThan(0)
    pool.removeAllListeners('error')
  })

  it('Kysely over router.pool(): writes, readOnly reads on the replica, transactions, streams', async () => {
    interface DB {
      items: { id: Generated<number>; v: string | null }
    }
    const db = new Kysely<DB>({ dialect: new MysqlDialect({ pool: router.pool() }) })
    const ins = await db.insertInto('items').values({ v: 'kysely' }).executeTakeFirstOrThrow()
    expect(Number(ins.insertId)).toBeGreaterThan(0)
    await cluster.waitForReplication()
    const read = await router.readOnly(() =>
      db.selectFrom('items').select(['id', 'v']).where('v', '=', 'kysely').execute(),
    )
    expect(read.map((r) => r.v)).toEqual(['kysely'])
    const server = await router.readOnly(() => sql<{ id: number }>`SELECT @@server_id AS id`.execute(db))
    expect(server.rows).toEqual([{ id: 2 }])
    await expect(
      router.readOnly(() => db.insertInto('items').values({ v: 'nope' }).execute()),
    ).rejects.toBeInstanceOf(ReadOnlyViolationError)
    await db
      .transaction()
      .setIsolationLevel('read committed')
      .execute(async (trx) => {
        await trx.insertInto('items').values({ v: 'kysely-tx' }).execute()
      })
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('items').values({ v: 'kysely-rolled-back' }).execute()
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    const streamed: unknown[] = []
    for await (const row of db.selectFrom('items').select('v').where('v', 'like', 'kysely%').stream()) {
      streamed.push(row.v)
    }
    expect(streamed.sort()).toEqual(['kysely', 'kysely-tx'])
  })

  it('Drizzle over router.pool(): writes, readOnly reads, transactions with savepoints', async () => {
    const items = mysqlTable('items', {
      id: int('id').primaryKey().autoincrement(),
      v: varchar('v', { length: 50 }),
    })
    const db = drizzle({ client: router.pool<Pool>() })
    const [header] = await db.insert(items).values({ v: 'drizzle' })
    expect(header.affectedRows).toBe(1)
    await cluster.waitForReplication()
    const rows = await router.readOnly(() => db.select().from(items).where(eq(items.v, 'drizzle')))
    expect(rows.map((r) => r.v)).toEqual(['drizzle'])
    await db.transaction(async (tx) => {
      await tx.insert(items).values({ v: 'drizzle-tx' })
      await tx
        .transaction(async (inner) => {
          await inner.insert(items).values({ v: 'drizzle-inner' })
          throw new Error('inner fails')
        })
        .catch(() => {})
    })
    // Drizzle inside router.transaction: its BEGIN/COMMIT become a savepoint of the outer transaction.
    await router
      .transaction(async () => {
        await db.transaction(async (tx) => {
          await tx.insert(items).values({ v: 'drizzle-nested' })
        })
        throw new Error('outer rolls back')
      })
      .catch(() => {})
    const all = await db.select({ v: items.v }).from(items)
    const vs = all.map((r) => r.v).filter((v) => v?.startsWith('drizzle'))
    expect(vs.sort()).toEqual(['drizzle', 'drizzle-tx'])
  })

  it('end(cb) closes the router', async () => {
    await new Promise<void>((resolve, reject) => pool.end((err) => (err ? reject(err) : resolve())))
    expect(router.closed).toBe(true)
  })
})
