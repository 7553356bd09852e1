import { describe, expect, it } from 'vitest'
import { TokenAudit } from '../consistency/token-audit.js'
import { RouterEmitter, type RouterEvents } from '../router/events.js'
import type { QueryListener, QueryObservation } from '../router/router-node.js'
import type { ClusterStats, NodeStats, RouterStats } from '../router/stats.js'
import { prometheusMetrics } from './prometheus.js'
import { escapeHelp, escapeLabelValue, formatValue } from './prometheus-text.js'

/** A router stand-in: real emitter, a list of query listeners, a settable stats snapshot. */
function fakeRouter() {
  const events = new RouterEmitter()
  const listeners: QueryListener[] = []
  let nodes: NodeStats[] = [
    node('primary', 'primary'),
    node('replica1', 'replica'),
    node('replica2', 'replica'),
  ]
  let clusters: ClusterStats[] = [cluster('default')]
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
    stats: (): RouterStats => ({ clusters, nodes, tokens: new TokenAudit(() => {}).stats() }),
    setNodes(n: NodeStats[]) {
      nodes = n
    },
    setClusters(c: ClusterStats[]) {
      clusters = c
    },
    query(o: Partial<QueryObservation> & { node: string }) {
      const full: QueryObservation = { cluster: 'default', role: 'replica', durationMs: 1, ok: true, ...o }
      for (const l of [...listeners]) l(full)
    },
    listenerCount: () => listeners.length,
    has: (name: keyof RouterEvents) => events.has(name),
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
    lagMs: role === 'replica' ? 0 : undefined,
    inFlight: 0,
    queries: 0,
    errors: 0,
    latencyMs: 0,
    lastProbeMs: undefined,
    probes: 0,
    lastError: undefined,
    weight: 1,
    url: `postgres://app:***@${name}:5432/app`,
    pool: { total: 0, idle: 0, waiting: 0 },
    ...extra,
  }
}

function cluster(name: string, extra: Partial<ClusterStats> = {}): ClusterStats {
  return {
    name,
    fallingBack: false,
    primary: 'primary',
    candidates: [],
    balancer: 'round-robin',
    readYourWritesRedirects: 0,
    ...extra,
  }
}

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** Parses the sample lines of a text exposition (0.0.4), undoing label value escapes. */
function parse(text: string): Sample[] {
  const out: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (m === null) throw new Error(`bad sample line: ${line}`)
    const labels: Record<string, string> = {}
    const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy
    const body = m[2] ?? ''
    let l: RegExpExecArray | null
    let consumed = 0
    // biome-ignore lint/suspicious/noAssignInExpressions: a regex scan
    while ((l = re.exec(body)) !== null) {
      labels[l[1] as string] = (l[2] as string).replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c))
      consumed = re.lastIndex
    }
    if (consumed !== body.length) throw new Error(`bad labels: ${body}`)
    const v = m[3] as string
    out.push({ name: m[1] as string, labels, value: v === '+Inf' ? Number.POSITIVE_INFINITY : Number(v) })
  }
  return out
}

function value(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    ?.value
}

describe('prometheusMetrics', () => {
  it('writes HELP and TYPE before every family, counters ending in _total, and a final newline', () => {
    const r = fakeRouter()
    const text = prometheusMetrics(r).collect()
    expect(text.endsWith('\n')).toBe(true)
    const lines = text.trimEnd().split('\n')
    const types = new Map<string, string>()
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string
      const t = /^# TYPE (\S+) (counter|gauge|histogram)$/.exec(line)
      if (t !== null) {
        expect(lines[i - 1]).toMatch(new RegExp(`^# HELP ${t[1]} \\S`))
        types.set(t[1] as string, t[2] as string)
      }
    }
    for (const [name, type] of types) {
      if (type === 'counter') expect(name).toMatch(/_total$/)
      expect(name).toMatch(/^routemate_/)
    }
    expect(types.get('routemate_queries_total')).toBe('counter')
    expect(types.get('routemate_query_duration_seconds')).toBe('histogram')
    expect(types.get('routemate_node_state_changes_total')).toBe('counter')
    expect(types.get('routemate_fallbacks_total')).toBe('counter')
    expect(types.get('routemate_retries_total')).toBe('counter')
    expect(types.get('routemate_node_state')).toBe('gauge')
    expect(types.get('routemate_node_lag_seconds')).toBe('gauge')
    expect(types.get('routemate_node_in_flight')).toBe('gauge')
    // Every sample belongs to the family declared just before it.
    let family = ''
    for (const line of lines) {
      const t = /^# TYPE (\S+)/.exec(line)
      if (t !== null) family = t[1] as string
      else if (!line.startsWith('#')) expect(line.startsWith(family)).toBe(true)
    }
    expect(() => parse(text)).not.toThrow()
  })

  it('counts statements by cluster, node, role and outcome from onQuery', () => {
    const r = fakeRouter()
    const m = prometheusMetrics(r)
    for (let i = 0; i < 3; i++) r.query({ node: 'primary', role: 'primary' })
    for (let i = 0; i < 5; i++) r.query({ node: 'replica1' })
    r.query({ node: 'replica2' })
    r.query({ node: 'replica2', ok: false })
    const s = parse(m.collect())
    const q = 'routemate_queries_total'
    expect(value(s, q, { node: 'primary', role: 'primary', outcome: 'ok', cluster: 'default' })).toBe(3)
    expect(value(s, q, { node: 'replica1', role: 'replica', outcome: 'ok' })).toBe(5)
    expect(value(s, q, { node: 'replica2', outcome: 'ok' })).toBe(1)
    expect(value(s, q, { node: 'replica2', outcome: 'error' })).toBe(1)
    expect(value(s, q, { node: 'replica1', outcome: 'error' })).toBeUndefined()
    expect(s.filter((x) => x.name === q).reduce((a, x) => a + x.value, 0)).toBe(10)
  })

  it('keeps a cumulative latency histogram in seconds (le inclusive, +Inf = count)', () => {
    const r = fakeRouter()
    const m = prometheusMetrics(r)
    for (const ms of [0.2, 1, 1.5, 30, 20_000]) r.query({ node: 'replica1', durationMs: ms })
    const s = parse(m.collect())
    const h = 'routemate_query_duration_seconds'
    const bucket = (le: string) => value(s, `${h}_bucket`, { node: 'replica1', outcome: 'ok', le })
    expect(bucket('0.0005')).toBe(1)
    expect(bucket('0.001')).toBe(2) // 1 ms lands in le=0.001
    expect(bucket('0.0025')).toBe(3)
    expect(bucket('0.025')).toBe(3)
    expect(bucket('0.05')).toBe(4)
    expect(bucket('10')).toBe(4)
    expect(bucket('+Inf')).toBe(5)
    expect(value(s, `${h}_count`, { node: 'replica1' })).toBe(5)
    expect(value(s, `${h}_sum`, { node: 'replica1' })).toBeCloseTo(20.0327, 6)
    const les = s.filter((x) => x.name === `${h}_bucket`).map((x) => x.labels.le)
    expect(les).toEqual(
      [...les].sort((a, b) => Number(a === '+Inf' ? Infinity : a) - Number(b === '+Inf' ? Infinity : b)),
    )
  })

  it('escapes label values (backslash, quote, newline) and HELP text', () => {
    expect(escapeLabelValue('a"b\\c\nd')).toBe('a\\"b\\\\c\\nd')
    expect(escapeHelp('x\\y\nz "q"')).toBe('x\\\\y\\nz "q"')
    const r = fakeRouter()
    const m = prometheusMetrics(r)
    const weird = 'we"ird\\node\nname'
    r.query({ node: weird, cluster: 'c"1' })
    const text = m.collect()
    expect(text).toContain('node="we\\"ird\\\\node\\nname"')
    expect(text.split('\n').every((l) => !l.includes('\r'))).toBe(true)
    const s = parse(text)
    expect(value(s, 'routemate_queries_total', { node: weird, cluster: 'c"1' })).toBe(1)
  })

  it('formats special values the Prometheus way', () => {
    expect(formatValue(Number.POSITIVE_INFINITY)).toBe('+Inf')
    expect(formatValue(Number.NEGATIVE_INFINITY)).toBe('-Inf')
    expect(formatValue(Number.NaN)).toBe('NaN')
    expect(formatValue(0.25)).toBe('0.25')
  })

  it('counts node state changes, fallbacks, retries and the other events', () => {
    const r = fakeRouter()
    const m = prometheusMetrics(r)
    const base = { cluster: 'default', node: 'replica1', role: 'replica' as const }
    r.emit('node:suspect', { ...base, reason: 'timeout' })
    r.emit('node:down', { ...base, reason: 'ECONNREFUSED', source: 'probe' })
    r.emit('node:up', { ...base, previous: 'down' })
    r.emit('node:down', { ...base, reason: 'ECONNREFUSED', source: 'query' })
    r.emit('fallback', { cluster: 'default', toPrimary: true, replicas: { replica1: 'down' } })
    r.emit('retry', { cluster: 'default', from: 'replica1', to: 'replica2', error: 'x' })
    r.emit('node:lagging', { ...base, lagMs: 9000, maxLagMs: 5000 })
    r.emit('primary:changed', { cluster: 'default', from: 'primary', to: 'replica2' })
    r.emit('error', { error: new Error('boom'), context: 'pooled connection error', node: 'replica1' })
    const s = parse(m.collect())
    const sc = 'routemate_node_state_changes_total'
    expect(value(s, sc, { node: 'replica1', state: 'down' })).toBe(2)
    expect(value(s, sc, { node: 'replica1', state: 'up' })).toBe(1)
    expect(value(s, sc, { node: 'replica1', state: 'suspect' })).toBe(1)
    expect(value(s, 'routemate_fallbacks_total', { cluster: 'default', to_primary: 'true' })).toBe(1)
    expect(value(s, 'routemate_retries_total', { node: 'replica1', target_node: 'replica2' })).toBe(1)
    expect(value(s, 'routemate_node_lag_exclusions_total', { node: 'replica1' })).toBe(1)
    expect(value(s, 'routemate_primary_changes_total', { cluster: 'default' })).toBe(1)
    expect(value(s, 'routemate_errors_total', { context: 'pooled connection error' })).toBe(1)
  })

  it('computes gauges from stats() at collect time', () => {
    const r = fakeRouter()
    const m = prometheusMetrics(r)
    let s = parse(m.collect())
    const st = 'routemate_node_state'
    for (const n of ['primary', 'replica1', 'replica2']) {
      expect(value(s, st, { node: n, state: 'up' })).toBe(1)
      expect(value(s, st, { node: n, state: 'down' })).toBe(0)
    }
    r.setNodes([
      node('primary', 'primary', { inFlight: 2, pool: { total: 5, idle: 3, waiting: 1 } }),
      node('replica1', 'replica', { state: 'down', usable: false, lagMs: 1500 }),
      node('replica2', 'replica', { lagMs: undefined }),
    ])
    r.setClusters([cluster('default', { fallingBack: true })])
    s = parse(m.collect())
    expect(value(s, st, { node: 'replica1', state: 'down' })).toBe(1)
    expect(value(s, st, { node: 'replica1', state: 'up' })).toBe(0)
    expect(value(s, 'routemate_node_usable', { node: 'replica1' })).toBe(0)
    expect(value(s, 'routemate_node_in_flight', { node: 'primary' })).toBe(2)
    expect(value(s, 'routemate_node_lag_seconds', { node: 'replica1' })).toBe(1.5)
    expect(value(s, 'routemate_node_lag_seconds', { node: 'replica2' })).toBeUndefined()
    expect(value(s, 'routemate_node_lag_seconds', { node: 'primary' })).toBeUndefined()
    expect(value(s, 'routemate_pool_connections', { node: 'primary', connection_state: 'idle' })).toBe(3)
    expect(value(s, 'routemate_pool_connections', { node: 'primary', connection_state: 'used' })).toBe(2)
    expect(value(s, 'routemate_pool_pending_requests', { node: 'primary' })).toBe(1)
    expect(value(s, 'routemate_cluster_falling_back', { cluster: 'default' })).toBe(1)
  })

  it('publishes read-your-writes redirects from stats()', () => {
    const r = fakeRouter()
    const m = prometheusMetrics(r)
    expect(
      value(parse(m.collect()), 'routemate_read_your_writes_redirects_total', { cluster: 'default' }),
    ).toBe(0)
    r.setClusters([{ ...cluster('default'), readYourWritesRedirects: 7 } as ClusterStats])
    const s = parse(m.collect())
    expect(value(s, 'routemate_read_your_writes_redirects_total', { cluster: 'default' })).toBe(7)
  })

  it('uninstall stops counting but collect keeps working; prefix is configurable and checked', () => {
    const r = fakeRouter()
    const m = prometheusMetrics(r, { prefix: 'db_router' })
    r.query({ node: 'replica1' })
    m.uninstall()
    m.uninstall()
    expect(r.listenerCount()).toBe(0)
    expect(r.has('node:down')).toBe(false)
    r.query({ node: 'replica1' })
    const s = parse(m.collect())
    expect(value(s, 'db_router_queries_total', { node: 'replica1' })).toBe(1)
    expect(s.every((x) => x.name.startsWith('db_router_'))).toBe(true)
    expect(() => prometheusMetrics(r, { prefix: 'bad-prefix' })).toThrow(/prefix/)
    expect(() => prometheusMetrics(r, { prefix: '1x' })).toThrow(/prefix/)
  })

  it('never exposes a URL or a password (stats urls are not labels)', () => {
    const r = fakeRouter()
    const m = prometheusMetrics(r)
    r.query({ node: 'replica1' })
    expect(m.collect()).not.toMatch(/postgres:\/\/|\*\*\*/)
  })
})
