/**
 * Telemetry against a real PostgreSQL cluster (a primary, two replicas): OpenTelemetry metrics
 * through a real SDK, the Prometheus text helper, the serving node on the active span, and the
 * event logger. Every count is checked against what the test itself issued.
 */
import { context } from '@opentelemetry/api'
import { type Histogram, MeterProvider, type ResourceMetrics } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRouter, type Router } from '../../src/index.js'
import { attachLogger, type Logger, type LogLevel } from '../../src/logging/index.js'
import { pgDriver } from '../../src/pg/index.js'
import { instrumentRouter } from '../../src/telemetry/opentelemetry.js'
import { AlsContextManager, ManualReader } from '../../src/telemetry/otel-test-kit.js'
import { type PrometheusMetrics, prometheusMetrics } from '../../src/telemetry/prometheus.js'
import { type PgCluster, startPgCluster } from '../../src/testing/index.js'
import { expectIdle, sleep, stateOf, waitFor } from './support/dialects.js'

const WHO = 'SELECT inet_server_port() AS port'

type Attrs = Record<string, unknown>

/** The data points of one metric whose attributes include `attrs`. */
function points(
  rm: ResourceMetrics,
  name: string,
  attrs: Attrs = {},
): Array<{ attributes: Attrs; value: unknown }> {
  const out: Array<{ attributes: Attrs; value: unknown }> = []
  for (const sm of rm.scopeMetrics)
    for (const m of sm.metrics)
      if (m.descriptor.name === name)
        for (const p of m.dataPoints as Array<{ attributes: Attrs; value: unknown }>)
          if (Object.entries(attrs).every(([k, v]) => p.attributes[k] === v)) out.push(p)
  return out
}

/** Sum of a counter's or gauge's points matching `attrs` (0 when none). */
const total = (rm: ResourceMetrics, name: string, attrs: Attrs = {}) =>
  points(rm, name, attrs).reduce((a, p) => a + (p.value as number), 0)

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** Parses the samples of a Prometheus text exposition (0.0.4). */
function parseProm(text: string): Sample[] {
  const out: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (m === null) throw new Error(`bad sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1] as string] = (l[2] as string).replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c))
    out.push({
      name: m[1] as string,
      labels,
      value: m[3] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[3]),
    })
  }
  return out
}

const promTotal = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0)

describe('telemetry (postgres)', () => {
  let cluster: PgCluster
  let router: Router
  let reader: ManualReader
  let prom: PrometheusMetrics
  let uninstall: () => void
  let password: string
  const collect = async () => (await reader.collect()).resourceMetrics

  beforeAll(async () => {
    cluster = await startPgCluster({ replicas: 2 })
    password = decodeURIComponent(new URL(cluster.primary.url).password)
    expect(password.length).toBeGreaterThan(0)
    await cluster.query('primary', 'CREATE TABLE t (id serial PRIMARY KEY, v text)')
    await cluster.waitForReplication()
    router = createRouter({
      driver: pgDriver(),
      primary: { name: 'primary', url: cluster.primary.url },
      replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
      healthCheck: {
        intervalMs: 500,
        timeoutMs: 450,
        failureThreshold: 2,
        successThreshold: 1,
        maxBackoffMs: 1000,
      },
      connectTimeoutMs: 2000,
    })
    reader = new ManualReader()
    uninstall = instrumentRouter(router, { meterProvider: new MeterProvider({ readers: [reader] }) })
    prom = prometheusMetrics(router)
    await router.ready()
    await waitFor(() => router.stats().clusters[0]?.candidates.length === 2, 10_000, 'both replicas usable')
  })

  afterAll(async () => {
    uninstall?.()
    prom?.uninstall()
    context.disable()
    await router?.close()
    await cluster?.stop()
  })

  it('counts every statement by node and role, exactly as issued; latency count matches; 3 nodes up', async () => {
    const byPort = new Map(cluster.nodes.map((n) => [n.port, n.name]))
    const N = 7
    const M = 12
    for (let i = 0; i < N; i++) await router.query('INSERT INTO t (v) VALUES ($1)', [`w${i}`])
    const served: Record<string, number> = {}
    for (let i = 0; i < M; i++) {
      const { rows } = await router.readOnly(() => router.query<{ port: number }>(WHO))
      const name = byPort.get(Number(rows[0]?.port)) ?? 'unknown'
      served[name] = (served[name] ?? 0) + 1
    }
    expect(Object.keys(served).sort()).toEqual(['replica1', 'replica2'])
    await expectIdle(router)
    const lagged = () => router.stats().nodes.filter((n) => n.lagMs !== undefined).length
    await waitFor(() => lagged() === 2, 10_000, 'both replicas with a measured lag')

    const rm = await collect()
    const q = 'routemate.queries'
    expect(
      total(rm, q, { 'routemate.node': 'primary', 'routemate.role': 'primary', 'routemate.outcome': 'ok' }),
    ).toBe(N)
    for (const r of ['replica1', 'replica2']) {
      expect(
        total(rm, q, { 'routemate.node': r, 'routemate.role': 'replica', 'routemate.outcome': 'ok' }),
      ).toBe(served[r])
    }
    expect(total(rm, q)).toBe(N + M)
    expect(total(rm, q, { 'routemate.cluster': 'default' })).toBe(N + M)
    const hist = points(rm, 'routemate.query.duration').map((p) => p.value as Histogram)
    expect(hist.reduce((a, h) => a + h.count, 0)).toBe(N + M)
    expect(hist.reduce((a, h) => a + h.buckets.counts.reduce((x, y) => x + y, 0), 0)).toBe(N + M)
    for (const n of ['primary', 'replica1', 'replica2']) {
      expect(total(rm, 'routemate.node.state', { 'routemate.node': n, 'routemate.state': 'up' })).toBe(1)
    }
    expect(total(rm, 'routemate.node.state', { 'routemate.state': 'up' })).toBe(3)
    expect(total(rm, 'routemate.node.state', { 'routemate.state': 'down' })).toBe(0)
    expect(total(rm, 'routemate.node.in_flight')).toBe(0)
    expect(points(rm, 'routemate.node.lag').length).toBe(2) // the replicas only

    const s = parseProm(prom.collect())
    const pq = 'routemate_queries_total'
    expect(promTotal(s, pq, { node: 'primary', role: 'primary', outcome: 'ok' })).toBe(N)
    for (const r of ['replica1', 'replica2'])
      expect(promTotal(s, pq, { node: r, role: 'replica', outcome: 'ok' })).toBe(served[r])
    expect(promTotal(s, pq)).toBe(N + M)
    expect(promTotal(s, 'routemate_query_duration_seconds_count')).toBe(N + M)
    expect(promTotal(s, 'routemate_query_duration_seconds_bucket', { le: '+Inf' })).toBe(N + M)
    expect(promTotal(s, 'routemate_node_state', { state: 'up' })).toBe(3)
    expect(JSON.stringify(s)).not.toContain(password)
  })

  it("names the serving node on the active span (onQuery runs in the caller's async context)", async () => {
    context.setGlobalContextManager(new AlsContextManager())
    const exporter = new InMemorySpanExporter()
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(
      't',
    )
    const byPort = new Map(cluster.nodes.map((n) => [n.port, n.name]))
    const expected: Record<string, string> = {}
    for (let i = 0; i < 4; i++) {
      await tracer.startActiveSpan(`read-${i}`, async (span) => {
        const { rows } = await router.readOnly(() => router.query<{ port: number }>(WHO))
        expected[`read-${i}`] = byPort.get(Number(rows[0]?.port)) ?? 'unknown'
        span.end()
      })
    }
    await tracer.startActiveSpan('write', async (span) => {
      await router.query('INSERT INTO t (v) VALUES ($1)', ['traced'])
      span.end()
    })
    await tracer.startActiveSpan('read-only-tx', async (span) => {
      await router.transaction(async (tx) => tx.query(WHO), { readOnly: true })
      span.end()
    })
    const spans = new Map(exporter.getFinishedSpans().map((s) => [s.name, s.attributes]))
    for (const [name, node] of Object.entries(expected)) {
      expect(spans.get(name)?.['routemate.node']).toBe(node)
      expect(spans.get(name)?.['routemate.role']).toBe('replica')
    }
    expect(new Set(Object.values(expected))).toEqual(new Set(['replica1', 'replica2']))
    expect(spans.get('write')?.['routemate.node']).toBe('primary')
    expect(spans.get('write')?.['routemate.role']).toBe('primary')
    expect(spans.get('read-only-tx')?.['routemate.node']).toMatch(/^replica[12]$/)
    expect(spans.get('write')?.['routemate.cluster']).toBe('default')
  })

  it('a killed replica shows in the state gauge and the node:down counter, then comes back', async () => {
    const before = await collect()
    const downBefore = total(before, 'routemate.node.state_changes', {
      'routemate.node': 'replica1',
      'routemate.state': 'down',
    })
    expect(downBefore).toBe(0)
    await cluster.kill('replica1')
    await waitFor(() => stateOf(router, 'replica1') === 'down', 10_000, 'replica1 down')

    let rm = await collect()
    const r1 = { 'routemate.node': 'replica1', 'routemate.role': 'replica', 'routemate.cluster': 'default' }
    expect(total(rm, 'routemate.node.state', { ...r1, 'routemate.state': 'down' })).toBe(1)
    expect(total(rm, 'routemate.node.state', { ...r1, 'routemate.state': 'up' })).toBe(0)
    expect(total(rm, 'routemate.node.state', { 'routemate.state': 'up' })).toBe(2)
    expect(total(rm, 'routemate.node.usable', r1)).toBe(0)
    expect(total(rm, 'routemate.node.state_changes', { ...r1, 'routemate.state': 'down' })).toBe(1)
    expect(total(rm, 'routemate.fallbacks')).toBe(0) // replica2 still serves reads
    let s = parseProm(prom.collect())
    expect(promTotal(s, 'routemate_node_state', { node: 'replica1', state: 'down' })).toBe(1)
    expect(promTotal(s, 'routemate_node_state', { state: 'up' })).toBe(2)
    expect(promTotal(s, 'routemate_node_state_changes_total', { node: 'replica1', state: 'down' })).toBe(1)

    await cluster.restart('replica1')
    await waitFor(() => stateOf(router, 'replica1') === 'up', 20_000, 'replica1 up again')
    rm = await collect()
    expect(total(rm, 'routemate.node.state', { 'routemate.state': 'up' })).toBe(3)
    expect(total(rm, 'routemate.node.state_changes', { ...r1, 'routemate.state': 'down' })).toBe(1)
    expect(total(rm, 'routemate.node.state_changes', { ...r1, 'routemate.state': 'up' })).toBe(1)
    s = parseProm(prom.collect())
    expect(promTotal(s, 'routemate_node_state_changes_total', { node: 'replica1', state: 'up' })).toBe(1)
    expect(promTotal(s, 'routemate_node_state', { state: 'up' })).toBe(3)
  })

  it('the logger writes one warn for node:down and one info for node:up, never a password', async () => {
    const lines: Array<{ level: LogLevel; obj: Record<string, unknown>; msg: string | undefined }> = []
    const make =
      (level: LogLevel) =>
      (obj: object | string, msg?: string): void => {
        lines.push({ level, obj: typeof obj === 'string' ? {} : (obj as Record<string, unknown>), msg })
      }
    const logger: Logger = {
      debug: make('debug'),
      info: make('info'),
      warn: make('warn'),
      error: make('error'),
    }
    const detach = attachLogger(router, logger, { level: 'debug' })
    try {
      await cluster.kill('replica2')
      await waitFor(() => stateOf(router, 'replica2') === 'down', 10_000, 'replica2 down')
      // Reads keep working meanwhile, and no line is written per query.
      const stateLines = () => lines.filter((l) => l.obj.event !== 'error').length
      const logged = stateLines()
      for (let i = 0; i < 10; i++) await router.readOnly(() => router.query(WHO))
      expect(stateLines()).toBe(logged)
      await cluster.restart('replica2')
      await waitFor(() => stateOf(router, 'replica2') === 'up', 20_000, 'replica2 up again')
      await sleep(1000) // several more probe rounds: still no repeated lines
    } finally {
      detach()
    }
    const downs = lines.filter((l) => l.obj.event === 'node:down')
    const ups = lines.filter((l) => l.obj.event === 'node:up')
    expect(downs.map((l) => [l.level, l.obj.node])).toEqual([['warn', 'replica2']])
    expect(ups.map((l) => [l.level, l.obj.node])).toEqual([['info', 'replica2']])
    expect(downs[0]?.msg).toMatch(/^node "replica2" \(replica, cluster "default"\) is down/)
    for (const l of lines) {
      expect(l.obj.event).toBeTypeOf('string')
      expect(`${JSON.stringify(l.obj)} ${l.msg}`).not.toContain(password)
    }
  })
})
