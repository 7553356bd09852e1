// biome-ignore-all lint/suspicious/noTemplateCurlyInString: a URL with a ${DB_PASSWORD} reference
/**
 * Multi-host URLs on real replicated clusters, both dialects: one libpq-style URL listing the
 * primary and the replicas in any order becomes nodes whose roles the probes discover (writes to
 * the primary, readOnly reads to the replicas); `target_session_attrs` sets the default scope of
 * `router.pool()`, each value checked by the port of the server that answered; a replica promoted
 * after the primary is killed gets the writes. Where a statement landed is read from the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/run-cli.js'
import {
  createRouter,
  NoHealthyReplicaError,
  ReadOnlyViolationError,
  type Router,
  type RouterEvents,
  type RouterOptions,
  type TargetSessionAttrs,
} from '../../src/index.js'
import {
  type DialectCase,
  dialects,
  expectIdle,
  LIVENESS_MS,
  nodeByPort,
  stateOf,
  type TestCluster,
  testRouter,
  waitFor,
} from './support/dialects.js'

/** Probes with room for a loaded machine: a slow probe must not mark a node down mid-test. */
const HC = { intervalMs: 1000, timeoutMs: 800, failureThreshold: 3, successThreshold: 1, maxBackoffMs: 2000 }
const TABLE = 'mh_items'
/** `ready()` also waits (liveness only) until a probe found the primary: a first probe may time out on a loaded machine. */
const PRIMARY_FOUND = { timeoutMs: LIVENESS_MS }

/** What the tests need of a pool facade of either driver, promise style. */
// biome-ignore lint/suspicious/noExplicitAny: a pg.Pool or a mysql2 pool, by dialect
type AnyPool = any

describe.each(dialects)('multi-host url ($name)', (d: DialectCase) => {
  let cluster: TestCluster & { promote(name: string): Promise<void> }
  let who: (port: unknown) => string
  let setup: Router
  /** `127.0.0.1:<port>` of each node, by the test cluster's names: the router's node names. */
  const nameOf: Record<string, string> = {}

  /** The cluster's URL with the hosts of `nodes` (by test-cluster name), in that order, and `query`. */
  const urlOf = (nodes: readonly string[], query = ''): string => {
    const u = new URL(cluster.primary.url)
    const hosts = nodes.map((n) => nameOf[n]).join(',')
    const params = new URLSearchParams(u.search)
    for (const [k, v] of new URLSearchParams(query)) params.set(k, v)
    const search = params.toString()
    return `${u.protocol}//${u.username}:${u.password}@${hosts}${u.pathname}${search ? `?${search}` : ''}`
  }

  const urlRouter = (url: string, options: Partial<RouterOptions> = {}): Router =>
    createRouter({ driver: d.driver(), url, healthCheck: HC, connectTimeoutMs: 2000, ...options })

  /** Where one unscoped statement of the pool facade ran. */
  const poolNode = async (pool: AnyPool): Promise<string> => {
    if (d.name === 'postgres') return who((await pool.query(d.whoAmI)).rows[0]?.port)
    const [rows] = await pool.query(d.whoAmI)
    return who(rows[0]?.port)
  }

  /** Where a connection checked out of the pool facade (`connect` / `getConnection`) is. */
  const clientNode = async (pool: AnyPool): Promise<string> => {
    const client = d.name === 'postgres' ? await pool.connect() : await pool.getConnection()
    try {
      const result = await client.query(d.whoAmI)
      return who(d.name === 'postgres' ? result.rows[0]?.port : result[0][0]?.port)
    } finally {
      client.release()
    }
  }

  const rowCount = async (): Promise<number> => {
    const { rows } = await setup.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${TABLE}`)
    return Number(rows[0]?.n)
  }

  /** Until both replicas take reads (their first probes done, lag known). */
  const replicasUsable = (router: Router) =>
    waitFor(() => router.stats().clusters[0]?.candidates.length === 2, LIVENESS_MS, 'both replicas usable')

  beforeAll(async () => {
    cluster = (await d.start(2)) as typeof cluster
    who = nodeByPort(cluster)
    for (const n of [cluster.primary, ...cluster.replicas]) nameOf[n.name] = `127.0.0.1:${n.port}`
    setup = testRouter(d, cluster, { healthCheck: false }) // fixtures and row counts on the primary, no probes to time out
    await setup.ready()
    for (const sql of d.setup(TABLE)) await setup.query(sql)
    await cluster.waitForReplication()
  })

  afterAll(async () => {
    await setup?.close()
    await cluster?.stop()
  })

  it('a URL listing replica2, primary, replica1: roles discovered, writes to the primary, readOnly reads to both replicas', async () => {
    const url = urlOf(['replica2', 'primary', 'replica1'])
    const router = urlRouter(url)
    try {
      await router.ready(PRIMARY_FOUND)
      await replicasUsable(router)
      const stats = router.stats()
      // Names from host:port, in the URL's order, no credentials.
      expect(stats.nodes.map((n) => n.name)).toEqual([nameOf.replica2, nameOf.primary, nameOf.replica1])
      expect(stats.clusters[0]?.primary).toBe(nameOf.primary)
      expect(JSON.stringify(stats)).not.toContain(new URL(cluster.primary.url).password)
      for (let i = 0; i < 10; i++) {
        const r = await router.query(`INSERT INTO ${TABLE} (v) VALUES (${d.param(1)})`, [`w${i}`])
        expect(r.rowCount).toBe(1) // a replica would have refused it
        const { rows } = await router.query<{ port: number }>(d.whoAmI)
        expect(who(rows[0]?.port)).toBe('primary')
      }
      const served = new Set<string>()
      await router.readOnly(async () => {
        for (let i = 0; i < 20; i++) {
          const { rows } = await router.query<{ port: number }>(d.whoAmI)
          served.add(who(rows[0]?.port))
        }
      })
      expect([...served].sort()).toEqual(['replica1', 'replica2'])
      await expectIdle(router)
    } finally {
      await router.close()
    }
  })

  /** Where unscoped router.pool() statements go under each value (with two usable replicas). */
  const EXPECTED: ReadonlyArray<[TargetSessionAttrs, 'primary' | 'replica']> = [
    ['any', 'primary'],
    ['read-write', 'primary'],
    ['primary', 'primary'],
    ['read-only', 'replica'],
    ['prefer-standby', 'replica'],
    ['standby', 'replica'],
  ]

  it.each(EXPECTED)(
    'target_session_attrs=%s: unscoped router.pool() statements go to the %s; explicit scopes and router.query keep their routing',
    async (attrs, role) => {
      const router = urlRouter(urlOf(['replica1', 'primary', 'replica2'], `target_session_attrs=${attrs}`))
      const pool = router.pool<AnyPool>()
      try {
        await router.ready(PRIMARY_FOUND)
        await replicasUsable(router)
        const reads = new Set<string>()
        for (let i = 0; i < 6; i++) reads.add(await poolNode(pool))
        const checkouts = new Set<string>()
        for (let i = 0; i < 4; i++) checkouts.add(await clientNode(pool))
        const before = await rowCount()
        const write = () => pool.query(`INSERT INTO ${TABLE} (v) VALUES ('pool ${attrs}')`)
        const hidden = () => pool.query(d.hiddenWrite(TABLE))
        if (role === 'primary') {
          expect([...reads]).toEqual(['primary'])
          expect([...checkouts]).toEqual(['primary'])
          await write()
          await hidden()
          expect(await rowCount()).toBe(before + 2)
        } else {
          expect([...reads].sort()).toEqual(['replica1', 'replica2'])
          expect([...checkouts].every((n) => n.startsWith('replica'))).toBe(true)
          // A read-only default scope refuses writes: an evident one before sending it, a hidden
          // one by the replica's read-only session; nothing is written anywhere.
          await expect(write()).rejects.toBeInstanceOf(ReadOnlyViolationError)
          await expect(hidden()).rejects.toBeInstanceOf(ReadOnlyViolationError)
          await cluster.waitForReplication()
          expect(await rowCount()).toBe(before)
        }
        // Explicit scopes win over the default.
        expect(await router.primary(() => poolNode(pool))).toBe('primary')
        expect(await router.transaction(() => poolNode(pool))).toBe('primary')
        expect(await router.primary(() => clientNode(pool))).toBe('primary')
        expect(await router.readOnly(() => poolNode(pool))).toMatch(/^replica/)
        // A session scope alone routes nothing: the default applies inside it too.
        expect(await router.session(() => poolNode(pool))).toMatch(
          role === 'primary' ? /^primary$/ : /^replica/,
        )
        // router.query is not affected: unscoped statements go to the primary.
        const { rows } = await router.query<{ port: number }>(d.whoAmI)
        expect(who(rows[0]?.port)).toBe('primary')
        await expectIdle(router)
      } finally {
        await router.close()
      }
    },
  )

  it('no usable replica (a URL listing the primary alone): read-only and prefer-standby fall back to the primary read-only, standby fails', async () => {
    const primaryOnly = (attrs: TargetSessionAttrs, options: Partial<RouterOptions> = {}) =>
      urlRouter(urlOf(['primary'], `target_session_attrs=${attrs}`), options)
    const routers: Router[] = []
    try {
      const readOnly = primaryOnly('read-only')
      const preferStrict = primaryOnly('prefer-standby', { fallbackToPrimary: false })
      const readOnlyStrict = primaryOnly('read-only', { fallbackToPrimary: false })
      const standby = primaryOnly('standby')
      routers.push(readOnly, preferStrict, readOnlyStrict, standby)
      await Promise.all(routers.map((r) => r.ready(PRIMARY_FOUND)))
      const before = await rowCount()
      // read-only: reads on the primary, which still refuses the writes (evident and hidden).
      const pool = readOnly.pool<AnyPool>()
      expect(await poolNode(pool)).toBe('primary')
      expect(await clientNode(pool)).toBe('primary')
      await expect(pool.query(`INSERT INTO ${TABLE} (v) VALUES ('fallback')`)).rejects.toBeInstanceOf(
        ReadOnlyViolationError,
      )
      await expect(pool.query(d.hiddenWrite(TABLE))).rejects.toBeInstanceOf(ReadOnlyViolationError)
      expect(await rowCount()).toBe(before)
      // prefer-standby falls back whatever fallbackToPrimary says; read-only follows it.
      expect(await poolNode(preferStrict.pool<AnyPool>())).toBe('primary')
      await expect(poolNode(readOnlyStrict.pool<AnyPool>())).rejects.toBeInstanceOf(NoHealthyReplicaError)
      // standby: replicas only.
      const strict = standby.pool<AnyPool>()
      await expect(poolNode(strict)).rejects.toBeInstanceOf(NoHealthyReplicaError)
      await expect(clientNode(strict)).rejects.toThrow(/target_session_attrs=standby/)
      // Its explicit scopes still reach the primary.
      expect(await standby.primary(() => poolNode(strict))).toBe('primary')
      for (const r of routers) await expectIdle(r)
    } finally {
      await Promise.all(routers.map((r) => r.close()))
    }
  })

  it('routemate check and status take the multi-host URL in place of a config file (${VAR} from the environment)', async () => {
    const u = new URL(cluster.primary.url)
    const password = decodeURIComponent(u.password)
    // Single-quoted on a shell: the password stays out of the process list.
    const arg = urlOf(['replica2', 'replica1', 'primary']).replace(`:${u.password}@`, ':${DB_PASSWORD}@')
    const cli = async (argv: string[]) => {
      let out = ''
      const code = await runCli(argv, {
        stdout: { write: (t: string) => (out += t) },
        stderr: { write: (t: string) => (out += t) },
        isTTY: false,
        env: { DB_PASSWORD: password },
      })
      return { code, out }
    }
    const check = await cli(['check', arg])
    expect(check).toEqual({
      code: 0,
      out: `✓ ${arg.replace('${DB_PASSWORD}', '***')} is valid: 3 nodes, roles discovered (${d.name === 'postgres' ? 'postgres' : 'mysql'})\n`,
    })
    const status = await cli(['status', arg, '--json', '--timeout', '5000'])
    expect(status.code).toBe(0)
    expect(status.out).not.toContain(password)
    const report = JSON.parse(status.out) as {
      ok: boolean
      nodes: Array<{ name: string; expectedRole: string; actualRole: string; state: string }>
    }
    expect(report.ok).toBe(true)
    expect(report.nodes.map((n) => [n.name, n.expectedRole, n.actualRole, n.state])).toEqual([
      [nameOf.replica2, 'any', 'replica', 'up'],
      [nameOf.replica1, 'any', 'replica', 'up'],
      [nameOf.primary, 'any', 'primary', 'up'],
    ])
  })

  // Last: the promotion changes the cluster for good.
  it('the primary is followed on promotion: after the primary is killed and replica1 promoted, writes (router.query and router.pool()) reach replica1', async () => {
    const router = urlRouter(urlOf(['replica1', 'replica2', 'primary'], 'target_session_attrs=read-write'))
    const changes: Array<RouterEvents['primary:changed']> = []
    router.on('primary:changed', (e) => changes.push(e))
    const pool = router.pool<AnyPool>()
    try {
      await router.ready(PRIMARY_FOUND)
      expect(changes).toEqual([{ cluster: 'default', from: undefined, to: nameOf.primary }])
      expect(await poolNode(pool)).toBe('primary')
      await cluster.kill('primary')
      await waitFor(
        () => stateOf(router, nameOf.primary as string) === 'down',
        LIVENESS_MS,
        'old primary down',
      )
      await cluster.promote('replica1')
      await waitFor(() => changes.length === 2, LIVENESS_MS, 'primary:changed')
      expect(changes[1]).toMatchObject({ from: nameOf.primary, to: nameOf.replica1 })
      const r = await router.query(`INSERT INTO ${TABLE} (v) VALUES ('after promotion')`)
      expect(r.rowCount).toBe(1)
      const { rows } = await router.query<{ port: number }>(d.whoAmI)
      expect(who(rows[0]?.port)).toBe('replica1')
      expect(await poolNode(pool)).toBe('replica1')
      await pool.query(`INSERT INTO ${TABLE} (v) VALUES ('pool after promotion')`) // read-write: the new primary
      // Reads never reach the dead node.
      for (let i = 0; i < 10; i++) {
        const read = await router.readOnly(() => router.query<{ port: number }>(d.whoAmI))
        expect(['replica1', 'replica2']).toContain(who(read.rows[0]?.port))
      }
      await expectIdle(router)
    } finally {
      await router.close()
    }
  })
})
