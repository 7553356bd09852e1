import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import mysql from 'mysql2/promise'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/errors/config-error.js'
import { type MariaDbCluster, startMariaDbCluster } from '../../src/testing/mariadb-cluster.js'
import { freePorts, isPortClosed, pollUntil } from '../../src/testing/process-control/index.js'
import { distUrl, runNodeScript } from './support/run-node-script.js'

/** Pids of running mariadbd processes whose command line names `dir`. */
function serversUsing(dir: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1]
      if (cmdline.includes('mariadbd') && cmdline.includes(dir) && state !== 'Z') pids.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return pids
}

async function ids(cluster: MariaDbCluster, node: string): Promise<number[]> {
  const rows = (await cluster.query(node, 'SELECT id FROM items ORDER BY id')) as { id: number }[]
  return rows.map((r) => r.id)
}

describe('startMariaDbCluster', () => {
  let cluster: MariaDbCluster
  let ports: number[] = []
  const lines: string[] = []

  beforeAll(async () => {
    ports = await freePorts(3)
    cluster = await startMariaDbCluster({ replicas: 2, ports, log: (l) => lines.push(l) })
    await cluster.query('primary', 'CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(50))')
  })

  afterAll(async () => {
    await cluster?.stop()
  })

  it('describes its nodes with app-user URLs and never logs a password', () => {
    expect(cluster.nodes.map((n) => n.name)).toEqual(['primary', 'replica1', 'replica2'])
    expect(cluster.primary.role).toBe('primary')
    expect(cluster.replicas.map((n) => n.role)).toEqual(['replica', 'replica'])
    expect(cluster.nodes.map((n) => n.port)).toEqual(ports)
    expect(cluster.primary.url).toBe(`mysql://app:app-secret@127.0.0.1:${cluster.primary.port}/app`)
    expect(cluster.superuserUrl).toMatch(/^mysql:\/\/root:[0-9a-f]+@127\.0\.0\.1:\d+\/app$/)
    const rootPassword = new URL(cluster.superuserUrl).password
    for (const line of lines) {
      expect(line).not.toContain('app-secret')
      expect(line).not.toContain(rootPassword)
    }
    for (const n of cluster.nodes) expect(n.pid).toBeGreaterThan(0)
  })

  it('replicates a row written by the app user to every replica', async () => {
    await cluster.query('primary', 'INSERT INTO items VALUES (1, ?)', ['first'])
    await cluster.waitForReplication()
    expect(await ids(cluster, 'replica1')).toEqual([1])
    expect(await ids(cluster, 'replica2')).toEqual([1])
  })

  it('rejects an app-user write on a replica with 1290 (read-only)', async () => {
    await expect(
      cluster.query('replica1', 'INSERT INTO items VALUES (99, ?)', ['nope']),
    ).rejects.toMatchObject({
      errno: 1290,
    })
  })

  it('gives the app user no SUPER (nor any global privilege)', async () => {
    const grants = (await cluster.query('primary', 'SHOW GRANTS')) as Record<string, string>[]
    const text = grants.map((g) => Object.values(g).join(' ')).join('\n')
    expect(text).not.toMatch(/SUPER|READ_ONLY ADMIN|ALL PRIVILEGES ON \*\.\*/)
    const [row] = (await cluster
      .query('primary', 'SELECT COUNT(*) AS n FROM mysql.user')
      .catch(() => [{ n: 'denied' }])) as { n: unknown }[]
    expect(row?.n).toBe('denied')
  })

  it('kill makes a replica refuse connections; restart catches up on writes made meanwhile', async () => {
    const port = cluster.url('replica1').match(/:(\d+)\//)?.[1]
    const oldPid = cluster.replicas[0]?.pid
    await cluster.kill('replica1')
    expect(existsSync(`/proc/${oldPid}`)).toBe(false)
    expect(await isPortClosed(Number(port))).toBe(true)
    await expect(cluster.query('replica1', 'SELECT 1', [], { timeoutMs: 2000 })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    })
    await cluster.query('primary', 'INSERT INTO items VALUES (2, ?), (3, ?)', ['while', 'down'])
    await cluster.restart('replica1')
    expect(cluster.replicas[0]?.pid).not.toBe(oldPid)
    await cluster.waitForReplication()
    expect(await ids(cluster, 'replica1')).toEqual([1, 2, 3])
  })

  it('pause hangs a replica (queries time out); resume brings it back', async () => {
    await cluster.pause('replica2')
    // The deadline of query(), not a driver error: the kernel accepts, the server never answers.
    await expect(cluster.query('replica2', 'SELECT 1', [], { timeoutMs: 1000 })).rejects.toThrow(
      /no answer within 1000 ms/,
    )
    const direct = mysql.createConnection({
      host: '127.0.0.1',
      port: cluster.replicas[1]?.port,
      connectTimeout: 1000,
    })
    await expect(direct).rejects.toMatchObject({ code: 'ETIMEDOUT' })
    await cluster.resume('replica2')
    await cluster.waitForReplication()
    expect(await ids(cluster, 'replica2')).toEqual([1, 2, 3])
  })

  it('setApplyDelay delays a replica by whole seconds', async () => {
    // MASTER_DELAY is set in whole seconds but applied with sub-second precision (measured: ~1.01 s).
    await cluster.setApplyDelay('replica1', 1000)
    const [delayed] = (await cluster.query('replica1', 'SHOW SLAVE STATUS', [], { superuser: true })) as {
      SQL_Delay: number
    }[]
    expect(delayed?.SQL_Delay).toBe(1)
    await cluster.query('primary', 'INSERT INTO items VALUES (4, ?)', ['late'])
    expect(await ids(cluster, 'replica1')).not.toContain(4)
    const arrived = await pollUntil(
      async () => ((await ids(cluster, 'replica1')).includes(4) ? true : undefined),
      {
        timeoutMs: 30_000,
      },
    )
    expect(arrived).toBe(true)
    await cluster.setApplyDelay('replica1', 0)
    const [status] = (await cluster.query('replica1', 'SHOW SLAVE STATUS', [], { superuser: true })) as {
      SQL_Delay: number
    }[]
    expect(status?.SQL_Delay).toBe(0)
  })

  it('stopReplication / startReplication drive the replica threads', async () => {
    await cluster.stopReplication('replica1', 'sql')
    const [stopped] = (await cluster.query('replica1', 'SHOW SLAVE STATUS', [], {
      superuser: true,
    })) as Record<string, string>[]
    expect(stopped?.Slave_SQL_Running).toBe('No')
    expect(stopped?.Slave_IO_Running).toBe('Yes')
    await cluster.query('primary', 'INSERT INTO items VALUES (5, ?)', ['held'])
    await new Promise((r) => setTimeout(r, 200))
    expect(await ids(cluster, 'replica1')).not.toContain(5)
    await cluster.startReplication('replica1')
    await cluster.waitForReplication()
    expect(await ids(cluster, 'replica1')).toContain(5)
  })

  it('promote makes a replica writable for the app user', async () => {
    await cluster.promote('replica2')
    await cluster.query('replica2', 'INSERT INTO items VALUES (100, ?)', ['promoted'])
    expect(await ids(cluster, 'replica2')).toContain(100)
    const [row] = (await cluster.query('replica2', 'SELECT @@read_only AS ro')) as { ro: number }[]
    expect(row?.ro).toBe(0)
  })

  it('stop() leaves no server running, removes the dir and is idempotent', async () => {
    const dir = lines.find((l) => l.includes('data dirs ready'))?.match(/\((\/.*)\)$/)?.[1]
    expect(dir).toBeDefined()
    const pids = cluster.nodes.map((n) => n.pid)
    expect(serversUsing(dir ?? '')).toHaveLength(3)
    await cluster.stop()
    await cluster.stop()
    for (const pid of pids) expect(existsSync(`/proc/${pid}`)).toBe(false)
    expect(serversUsing(dir ?? '')).toEqual([])
    expect(existsSync(dir ?? '')).toBe(false)
    await expect(cluster.query('primary', 'SELECT 1')).rejects.toThrow(/stopped/)
  })
})

describe('startMariaDbCluster option checks', () => {
  it('rejects bad options with a ConfigError naming the option, before creating anything', async () => {
    await expect(startMariaDbCluster({ replicas: 17 })).rejects.toMatchObject({
      path: 'replicas',
      message: 'replicas: expected an integer from 0 to 16, got 17',
    })
    await expect(startMariaDbCluster({ user: 'root' })).rejects.toMatchObject({ path: 'user' })
    await expect(startMariaDbCluster({ ports: [40001] })).rejects.toMatchObject({
      path: 'ports',
      message: 'ports: expected 2 (one per node: primary, replica1) ports, got 1',
    })
    await expect(startMariaDbCluster({ replicas: 0, ports: [80] })).rejects.toMatchObject({
      path: 'ports[0]',
    })
  })

  it('rejects a port that is taken, naming it and its node, creating nothing', async () => {
    const [taken = 0, free = 0] = await freePorts(2)
    const server = net.createServer()
    await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: taken }, resolve))
    const before = readdirSync(tmpdir()).filter((f) => f.startsWith('routemate-mariadb-'))
    try {
      const err = await startMariaDbCluster({ ports: [taken, free] }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ConfigError)
      expect(err).toMatchObject({
        path: 'ports[0]',
        message: expect.stringContaining(`port ${taken} (for primary) on 127.0.0.1 is in use`),
      })
    } finally {
      await new Promise((r) => server.close(r))
    }
    expect(readdirSync(tmpdir()).filter((f) => f.startsWith('routemate-mariadb-'))).toEqual(before)
  })
})

describe('startMariaDbCluster and a process that exits without stop()', () => {
  it("the 'exit' hook SIGKILLs the servers, then removes the dir it created", async () => {
    const parent = mkdtempSync(join(tmpdir(), 'rm-mdb-exit-'))
    chmodSync(parent, 0o755) // traversable by the `mysql` user when we are root
    const baseDir = join(parent, 'cluster')
    try {
      const run = await runNodeScript(`
        import { startMariaDbCluster } from ${distUrl('testing/index.js')}
        const cluster = await startMariaDbCluster({ replicas: 1, baseDir: ${JSON.stringify(baseDir)} })
        console.log(JSON.stringify({ pids: cluster.nodes.map((n) => n.pid) }))
        process.exit(0)
      `)
      expect(run.code, run.stderr).toBe(0)
      const { pids } = JSON.parse(run.stdout.trim().split('\n').pop() ?? '') as { pids: number[] }
      expect(pids).toHaveLength(2)
      expect(existsSync(baseDir)).toBe(false)
      // Orphaned by the exit, the SIGKILLed servers are reaped by PID 1, sometimes a moment later.
      const gone = await pollUntil(() => (serversUsing(baseDir).length === 0 ? true : undefined), {
        timeoutMs: 10_000,
      })
      expect(gone).toBe(true)
    } finally {
      rmSync(parent, { recursive: true, force: true })
    }
  })
})
