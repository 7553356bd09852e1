/**
 * The edges of a router's life at startup, on real clusters: a replica that accepts TCP and never
 * answers gets no read at all (not even before its first probe has failed), an unreachable
 * primary gives typed errors (`PrimaryUnavailableError` with the driver's error as `cause`,
 * `RouterNotReadyError` from `ready({ timeoutMs })`), unreachable replicas with
 * `fallbackToPrimary: false` give `NoHealthyReplicaError`, and `ready({ timeoutMs })` waits for a
 * primary that comes up in time.
 */
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRouter,
  NoHealthyReplicaError,
  PrimaryUnavailableError,
  type Router,
  RouterNotReadyError,
} from '../../src/index.js'
import { freePorts } from '../../src/testing/process-control/ports.js'

const freePort = async (): Promise<number> => (await freePorts(1))[0] as number

import {
  type DialectCase,
  dialects,
  expectIdle,
  nodeByPort,
  type TestCluster,
  waitFor,
} from './support/dialects.js'

const HC = { intervalMs: 500, timeoutMs: 450, failureThreshold: 2, successThreshold: 1, maxBackoffMs: 1000 }

/** A TCP server that accepts every connection and never sends a byte: a hung server's stand-in. */
async function silentServer(): Promise<{ port: number; accepted: () => number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>()
  let accepted = 0
  const server = net.createServer((s) => {
    accepted++
    sockets.add(s)
    s.on('error', () => {})
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port
  return {
    port,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

/** `url` with its port replaced. */
function withPort(url: string, port: number): string {
  const u = new URL(url)
  u.port = String(port)
  return u.toString()
}

/** The password in a URL (to check it never shows). */
function passwordOf(url: string): string {
  return decodeURIComponent(new URL(url).password)
}

describe.each(dialects)('startup edges ($name)', (d: DialectCase) => {
  let cluster: TestCluster
  let who: (port: unknown) => string

  beforeAll(async () => {
    cluster = await d.start(1)
    who = nodeByPort(cluster)
  })

  afterAll(async () => {
    await cluster?.stop()
  })

  it('a replica that accepts TCP and never answers gets no read, ever, from createRouter on', async () => {
    const silent = await silentServer()
    const router = createRouter({
      driver: d.driver(),
      primary: { name: 'primary', url: cluster.primary.url },
      replicas: [
        { name: 'replica1', url: cluster.replicas[0]!.url },
        { name: 'silent', url: withPort(cluster.replicas[0]!.url, silent.port) },
      ],
      healthCheck: HC,
      connectTimeoutMs: 2000,
    })
    const retries: unknown[] = []
    router.on('retry', (e) => retries.push(e))
    const served: Record<string, number> = {}
    const failures: unknown[] = []
    const silentStats = () => router.stats().nodes.find((n) => n.name === 'silent')!
    let running = true
    let sawSilentWork = false
    // Readers from the very first moment: before ready(), before any probe has finished.
    const loops = Array.from({ length: 8 }, async () => {
      while (running) {
        try {
          const { rows } = await router.readOnly(() => router.query<{ port: number }>(d.whoAmI))
          const node = who(rows[0]?.port)
          served[node] = (served[node] ?? 0) + 1
        } catch (err) {
          failures.push(err)
        }
        const s = silentStats()
        if (s.inFlight !== 0 || s.queries !== 0 || s.errors !== 0) sawSilentWork = true
      }
    })
    try {
      await router.ready()
      await waitFor(() => silentStats().state === 'down', 5000, 'the silent replica marked down')
      await waitFor(() => silentStats().probes >= 4, 10_000, 'a few more probes of the silent replica')
    } finally {
      running = false
      await Promise.all(loops)
    }
    const s = silentStats()
    const probes = s.probes
    await router.close()
    await silent.close()
    console.log(
      `[${d.name}] silent replica: ${probes} probes, ${silent.accepted()} TCP connections, reads ${JSON.stringify(served)}`,
    )
    expect(failures).toEqual([])
    expect(sawSilentWork).toBe(false)
    expect(s.queries).toBe(0)
    expect(s.errors).toBe(0)
    expect(s.unusableReason).toBe('not-probed-yet')
    expect(retries).toEqual([]) // no read ever failed over from it
    // Only probes connected to it: no pool connection was ever opened (one probe may be running).
    expect(silent.accepted()).toBeLessThanOrEqual(probes + 1)
    expect(served.replica1 ?? 0).toBeGreaterThan(0)
    expect(served.silent).toBeUndefined()
  })

  it('a fresh router whose primary is unreachable: writes are PrimaryUnavailableError with cause, ready() resolves, ready({ timeoutMs }) is RouterNotReadyError', async () => {
    const closedPort = await freePort()
    const primaryUrl = withPort(cluster.primary.url, closedPort)
    const secret = passwordOf(cluster.primary.url)
    expect(secret.length).toBeGreaterThan(0)
    const router = createRouter({
      driver: d.driver(),
      primary: { name: 'primary', url: primaryUrl },
      replicas: [{ name: 'replica1', url: cluster.replicas[0]!.url }],
      healthCheck: HC,
    })
    try {
      // The very first query, before any probe finished.
      const first = (await router.query('SELECT 1').catch((e: unknown) => e)) as PrimaryUnavailableError
      expect(first).toBeInstanceOf(PrimaryUnavailableError)
      expect((first.cause as { code?: string }).code).toBe('ECONNREFUSED')
      expect(first.message).toMatch(/the primary of cluster "default" \("primary"\) cannot be reached/)
      await router.ready() // resolves: it never rejects
      const later = (await router.query('SELECT 1').catch((e: unknown) => e)) as PrimaryUnavailableError
      expect(later).toBeInstanceOf(PrimaryUnavailableError)
      expect((later.cause as { code?: string }).code).toBe('ECONNREFUSED')
      // Reads carry on on the replica.
      const { rows } = await router.readOnly(() => router.query<{ port: number }>(d.whoAmI))
      expect(who(rows[0]?.port)).toBe('replica1')
      const err = (await router.ready({ timeoutMs: 500 }).catch((e: unknown) => e)) as RouterNotReadyError
      expect(err).toBeInstanceOf(RouterNotReadyError)
      expect(err.message).toMatch(
        /^router not ready after 500 ms: the primary of cluster "default" \("primary"\)/,
      )
      expect(err.message).toMatch(
        /primary \(primary, \w+:\/\/app:\*\*\*@127\.0\.0\.1:\d+\/\w+\): down: .*ECONNREFUSED/,
      )
      expect(err.nodes).toEqual({
        primary: expect.stringMatching(/^down: .*ECONNREFUSED/),
        replica1: 'usable',
      })
      expect((err.cause as { code?: string }).code).toBe('ECONNREFUSED')
      const shown = JSON.stringify({
        m: err.message,
        n: err.nodes,
        s: err.stack,
        f: first.message,
        l: later.message,
      })
      expect(shown).not.toContain(secret)
      await expectIdle(router)
    } finally {
      await router.close()
    }
  })

  it('replicas unreachable at start with fallbackToPrimary: false: reads are NoHealthyReplicaError, not the connect error', async () => {
    const router = createRouter({
      driver: d.driver(),
      primary: { name: 'primary', url: cluster.primary.url },
      replicas: [{ name: 'replica1', url: withPort(cluster.replicas[0]!.url, await freePort()) }],
      fallbackToPrimary: false,
      healthCheck: HC,
    })
    try {
      const before = await router.readOnly(() => router.query('SELECT 1')).catch((e: unknown) => e)
      expect(before).toBeInstanceOf(NoHealthyReplicaError)
      await router.ready()
      const after = (await router.readOnly(() => router.query('SELECT 1')).catch((e: unknown) => e)) as Error
      expect(after).toBeInstanceOf(NoHealthyReplicaError)
      expect(after.message).toContain('replica1: not-probed-yet')
      await router.ready({ timeoutMs: 1000 }) // the primary is fine: writes can go
      await expect(router.query('SELECT 1')).resolves.toMatchObject({ rowCount: 1 })
    } finally {
      await router.close()
    }
  })

  it('ready({ timeoutMs }) waits for a primary that is down at createRouter and comes up in time', async () => {
    await cluster.kill('primary')
    let router: Router | undefined
    try {
      router = createRouter({
        driver: d.driver(),
        primary: { name: 'primary', url: cluster.primary.url },
        replicas: [{ name: 'replica1', url: cluster.replicas[0]!.url }],
        healthCheck: HC,
      })
      const r = router
      let settled: unknown = 'pending'
      const ready = r.ready({ timeoutMs: 60_000 }).then(
        () => {
          settled = 'resolved'
        },
        (e: unknown) => {
          settled = e
        },
      )
      await r.ready()
      await waitFor(
        () => (r.stats().nodes[0]?.probes ?? 0) >= 3,
        10_000,
        'three failed probes of the primary',
      )
      expect(settled).toBe('pending')
      await cluster.restart('primary')
      await ready
      expect(settled).toBe('resolved')
      await expect(r.query('SELECT 1')).resolves.toMatchObject({ rowCount: 1 })
    } finally {
      await router?.close()
    }
  })
})
