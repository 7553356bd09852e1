import { context, trace } from '@opentelemetry/api'
import { type Histogram, MeterProvider, type ResourceMetrics } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterEach, describe, expect, it } from 'vitest'
import { TokenAudit } from '../consistency/token-audit.js'
import { RouterEmitter, type RouterEvents } from '../router/events.js'
import type { QueryListener, QueryObservation } from '../router/router-node.js'
import type { NodeStats, RouterStats } from '../router/stats.js'
import { instrumentRouter } from './opentelemetry.js'
import { AlsContextManager, ManualReader } from './otel-test-kit.js'

function fakeRouter(nodes: NodeStats[]) {
  const events = new RouterEmitter()
  const listeners: QueryListener[] = []
  let statsCalls = 0
  return {
    on: events.on.bind(events),
    emit<E extends keyof RouterEvents>(name: E, e: RouterEvents[E]) {
      events.emit(name, e)
    },
    onQuery(l: QueryListener) {
      listeners.push(l)
      return () => {
        listeners.splice(listeners.indexOf(l), 1)
      }
    },
    stats(): RouterStats {
      statsCalls++
      return {
        clusters: [
          {
            name: 'default',
            fallingBack: false,
            primary: 'primary',
            candidates: [],
            balancer: 'rr',
            readYourWritesRedirects: 0,
          },
        ],
        nodes,
        tokens: new TokenAudit(() => {}).stats(),
      }
    },
    query(o: Partial<QueryObservation> & { node: string }) {
      const full: QueryObservation = { cluster: 'default', role: 'replica', durationMs: 1, ok: true, ...o }
      for (const l of [...listeners]) l(full)
    },
    listenerCount: () => listeners.length,
    statsCalls: () => statsCalls,
  }
}

function node(name: string, role: 'primary' | 'replica', extra: Partial<NodeStats> = {}): NodeStats {
  return {
    name,
    cluster: 'default',
    role,
    state: 'up',
    trusted: true,
    usable: true,
    unusableReason: undefined,
    lagMs: role === 'replica' ? 12 : undefined,
    inFlight: 0,
    queries: 0,
    errors: 0,
    latencyMs: 0,
    lastProbeMs: undefined,
    probes: 0,
    lastError: undefined,
    weight: 1,
    url: 'postgres://app:***@h/app',
    pool: { total: 2, idle: 1, waiting: 0 },
    ...extra,
  }
}

interface Point {
  attributes: Record<string, unknown>
  value: unknown
}

function points(rm: ResourceMetrics, name: string): Point[] {
  const out: Point[] = []
  for (const sm of rm.scopeMetrics)
    for (const m of sm.metrics)
      if (m.descriptor.name === name)
        for (const p of m.dataPoints as Array<{ attributes: Record<string, unknown>; value: unknown }>)
          out.push({ attributes: p.attributes, value: p.value })
  return out
}

function find(rm: ResourceMetrics, name: string, attrs: Record<string, unknown>): unknown {
  return points(rm, name).find((p) => Object.entries(attrs).every(([k, v]) => p.attributes[k] === v))?.value
}

function setup(
  nodes = [node('primary', 'primary'), node('replica1', 'replica'), node('replica2', 'replica')],
) {
  const reader = new ManualReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  const router = fakeRouter(nodes)
  const collect = async () => (await reader.collect()).resourceMetrics
  return { reader, meterProvider, router, collect }
}

describe('instrumentRouter', () => {
  afterEach(() => {
    context.disable()
  })

  it('counts statements by node, role, cluster and outcome, and records their latency', async () => {
    const { meterProvider, router, collect } = setup()
    instrumentRouter(router, { meterProvider })
    for (let i = 0; i < 4; i++) router.query({ node: 'primary', role: 'primary', durationMs: 3 })
    router.query({ node: 'replica1', durationMs: 0.7 })
    router.query({ node: 'replica1', durationMs: 40, ok: false })
    const rm = await collect()
    const base = { 'routemate.cluster': 'default' }
    expect(
      find(rm, 'routemate.queries', {
        ...base,
        'routemate.node': 'primary',
        'routemate.role': 'primary',
        'routemate.outcome': 'ok',
      }),
    ).toBe(4)
    expect(find(rm, 'routemate.queries', { 'routemate.node': 'replica1', 'routemate.outcome': 'ok' })).toBe(1)
    expect(
      find(rm, 'routemate.queries', { 'routemate.node': 'replica1', 'routemate.outcome': 'error' }),
    ).toBe(1)
    const h = find(rm, 'routemate.query.duration', {
      'routemate.node': 'primary',
      'routemate.outcome': 'ok',
    }) as Histogram
    expect(h.count).toBe(4)
    expect(h.sum).toBe(12)
    expect(h.buckets.boundaries).toEqual([0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000])
    expect(h.buckets.counts[3]).toBe(4) // (2.5, 5]
    const desc = rm.scopeMetrics[0]?.metrics.find((m) => m.descriptor.name === 'routemate.query.duration')
    expect(desc?.descriptor.unit).toBe('ms')
    expect(rm.scopeMetrics[0]?.scope.name).toBe('routemate')
  })

  it('counts events and observes gauges from stats()', async () => {
    const { meterProvider, router, collect } = setup([
      node('primary', 'primary', { inFlight: 3 }),
      node('replica1', 'replica', { state: 'down', usable: false }),
    ])
    instrumentRouter(router, { meterProvider })
    const n = { cluster: 'default', node: 'replica1', role: 'replica' as const }
    router.emit('node:down', { ...n, reason: 'x', source: 'probe' })
    router.emit('fallback', { cluster: 'default', toPrimary: true, replicas: { replica1: 'down' } })
    router.emit('retry', { cluster: 'default', from: 'replica1', to: 'primary', error: 'x' })
    const rm = await collect()
    expect(
      find(rm, 'routemate.node.state_changes', { 'routemate.node': 'replica1', 'routemate.state': 'down' }),
    ).toBe(1)
    expect(
      find(rm, 'routemate.fallbacks', { 'routemate.cluster': 'default', 'routemate.to_primary': 'true' }),
    ).toBe(1)
    expect(
      find(rm, 'routemate.retries', { 'routemate.node': 'replica1', 'routemate.target_node': 'primary' }),
    ).toBe(1)
    expect(
      find(rm, 'routemate.node.state', { 'routemate.node': 'replica1', 'routemate.state': 'down' }),
    ).toBe(1)
    expect(find(rm, 'routemate.node.state', { 'routemate.node': 'replica1', 'routemate.state': 'up' })).toBe(
      0,
    )
    expect(find(rm, 'routemate.node.state', { 'routemate.node': 'primary', 'routemate.state': 'up' })).toBe(1)
    expect(find(rm, 'routemate.node.in_flight', { 'routemate.node': 'primary' })).toBe(3)
    expect(find(rm, 'routemate.node.lag', { 'routemate.node': 'replica1' })).toBe(12)
    expect(find(rm, 'routemate.node.usable', { 'routemate.node': 'replica1' })).toBe(0)
    expect(find(rm, 'routemate.cluster.falling_back', { 'routemate.cluster': 'default' })).toBe(0)
  })

  it('uses the prefix, validates it, and uninstalls (listeners and gauge callback gone)', async () => {
    const { meterProvider, router, collect } = setup()
    const uninstall = instrumentRouter(router, { meterProvider, prefix: 'db.router' })
    router.query({ node: 'replica1' })
    let rm = await collect()
    expect(find(rm, 'db.router.queries', { 'routemate.node': 'replica1' })).toBe(1)
    expect(points(rm, 'db.router.node.state').length).toBe(9)
    expect(router.statsCalls()).toBe(1) // one stats() per collection, for every gauge
    uninstall()
    uninstall()
    expect(router.listenerCount()).toBe(0)
    router.query({ node: 'replica1' })
    rm = await collect()
    expect(find(rm, 'db.router.queries', { 'routemate.node': 'replica1' })).toBe(1)
    expect(router.statsCalls()).toBe(1) // the gauge callback is gone
    expect(() => instrumentRouter(router, { meterProvider, prefix: '9x' })).toThrow(/prefix/)
    expect(() => instrumentRouter(router, { meterProvider, prefix: 'a b' })).toThrow(/prefix/)
  })

  it("names the serving node on the active span, in the caller's async context", async () => {
    context.setGlobalContextManager(new AlsContextManager())
    const exporter = new InMemorySpanExporter()
    const tp = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    const tracer = tp.getTracer('test')
    const { meterProvider, router } = setup()
    instrumentRouter(router, { meterProvider })
    await tracer.startActiveSpan('request', async (span) => {
      await new Promise((r) => setTimeout(r, 1))
      router.query({ node: 'replica2' })
      span.end()
    })
    router.query({ node: 'replica1' }) // no active span: nothing to annotate, nothing thrown
    const [span] = exporter.getFinishedSpans()
    expect(span?.attributes['routemate.node']).toBe('replica2')
    expect(span?.attributes['routemate.role']).toBe('replica')
    expect(span?.attributes['routemate.cluster']).toBe('default')
    expect(trace.getActiveSpan()).toBeUndefined()
  })

  it('leaves spans alone with annotateSpans: false, and works with no SDK at all (no-op API)', async () => {
    context.setGlobalContextManager(new AlsContextManager())
    const exporter = new InMemorySpanExporter()
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(
      't',
    )
    const { meterProvider, router } = setup()
    instrumentRouter(router, { meterProvider, annotateSpans: false })
    tracer.startActiveSpan('request', (span) => {
      router.query({ node: 'replica2' })
      span.end()
    })
    expect(exporter.getFinishedSpans()[0]?.attributes['routemate.node']).toBeUndefined()
    const bare = fakeRouter([node('primary', 'primary')])
    const uninstall = instrumentRouter(bare) // global no-op MeterProvider
    expect(() => bare.query({ node: 'primary', role: 'primary' })).not.toThrow()
    uninstall()
  })
})
