/**
 * `routemate/prometheus`: a router's metrics in the Prometheus text format, for teams without
 * OpenTelemetry. No dependency.
 *
 * @module
 */

import { familyHeader, isMetricName, type LabelPairs, sampleLine } from './prometheus-text.js'
import { SeriesMap } from './series-map.js'
import {
  DURATION_BUCKETS_MS,
  EVENT_COUNTERS,
  gaugeSamples,
  type Labels,
  METRICS,
  type MetricDef,
  outcomeOf,
  rywRedirectSamples,
  subscribeEventCounters,
} from './signals.js'
import type { TelemetryRouter } from './telemetry-router.js'

/** Options of {@link prometheusMetrics}. */
export interface PrometheusMetricsOptions {
  /** First part of every metric name (`<prefix>_queries_total`). Default: `'routemate'`. */
  prefix?: string
}

/** What {@link prometheusMetrics} returns. */
export interface PrometheusMetrics {
  /** The metrics now, in the Prometheus text exposition format 0.0.4 (serve it as `text/plain; version=0.0.4`). */
  collect(): string
  /** Stops counting (idempotent). `collect()` keeps working: counters stay as they were, gauges stay live. */
  uninstall(): void
}

/** Latency of one (cluster, node, role, outcome): non-cumulative bucket counts (last: +Inf), sum in s. */
interface Histogram {
  readonly buckets: number[]
  sum: number
  count: number
}

interface QuerySeries {
  readonly labels: LabelPairs
  readonly ok: Histogram
  readonly error: Histogram
}

const newHistogram = (): Histogram => ({
  buckets: new Array(DURATION_BUCKETS_MS.length + 1).fill(0),
  sum: 0,
  count: 0,
})
const BUCKET_LE = [...DURATION_BUCKETS_MS.map((ms) => String(ms / 1000)), '+Inf']

const pairs = (labels: Labels): LabelPairs => Object.entries(labels) as Array<[string, string]>

/**
 * Keeps a router's metrics for Prometheus: counters (statements by node, role, cluster and
 * outcome, fallbacks, retries, node state changes...) maintained from `router.onQuery` and the
 * router's events, a latency histogram in seconds, and gauges computed from `router.stats()` at
 * `collect()` time. Metric names follow Prometheus conventions: `<prefix>_queries_total`,
 * `<prefix>_query_duration_seconds`, `<prefix>_node_state`...
 *
 * @example
 * ```ts
 * import { prometheusMetrics } from 'routemate/prometheus'
 * const metrics = prometheusMetrics(router)
 * app.get('/metrics', (_req, res) => res.type('text/plain; version=0.0.4').send(metrics.collect()))
 * ```
 */
export function prometheusMetrics(
  router: TelemetryRouter,
  options: PrometheusMetricsOptions = {},
): PrometheusMetrics {
  const prefix = options.prefix ?? 'routemate'
  if (typeof prefix !== 'string' || !isMetricName(prefix)) {
    throw new TypeError(
      `prefix: expected a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*), got ${JSON.stringify(prefix)}`,
    )
  }
  const base = (m: MetricDef) => `${prefix}_${m.name.replace(/\./g, '_')}`
  const bounds = DURATION_BUCKETS_MS
  const queries = new SeriesMap<QuerySeries>((cluster, node, role) => ({
    labels: [
      ['cluster', cluster],
      ['node', node],
      ['role', role],
    ],
    ok: newHistogram(),
    error: newHistogram(),
  }))
  const offQuery = router.onQuery((o) => {
    const s = queries.get(o.cluster, o.node, o.role)
    const h = o.ok ? s.ok : s.error
    const ms = o.durationMs
    let i = 0
    while (i < bounds.length && ms > (bounds[i] as number)) i++
    h.buckets[i] = (h.buckets[i] as number) + 1
    h.sum += ms / 1000
    h.count++
  })

  /** Event counters: metric -> label key -> sample. */
  const events = new Map<MetricDef, Map<string, { labels: LabelPairs; value: number }>>()
  const offEvents = subscribeEventCounters(router, (m, labels) => {
    let family = events.get(m)
    if (family === undefined) {
      family = new Map()
      events.set(m, family)
    }
    const key = JSON.stringify(labels)
    const sample = family.get(key)
    if (sample === undefined) family.set(key, { labels: pairs(labels), value: 1 })
    else sample.value++
  })

  const eventFamilies = EVENT_COUNTERS

  const collect = (): string => {
    const out: string[] = []
    const stats = router.stats()

    const total = `${base(METRICS.queries)}_total`
    out.push(...familyHeader(total, 'counter', METRICS.queries.description))
    for (const s of queries.values()) {
      for (const outcome of ['ok', 'error'] as const) {
        const h = s[outcome]
        if (h.count > 0) out.push(sampleLine(total, [...s.labels, ['outcome', outcome]], h.count))
      }
    }

    const hist = `${base(METRICS.duration)}_seconds`
    out.push(...familyHeader(hist, 'histogram', `${METRICS.duration.description} In seconds.`))
    for (const s of queries.values()) {
      for (const ok of [true, false]) {
        const h = ok ? s.ok : s.error
        if (h.count === 0) continue
        const labels: LabelPairs = [...s.labels, ['outcome', outcomeOf(ok)]]
        let cumulative = 0
        h.buckets.forEach((n, i) => {
          cumulative += n
          out.push(sampleLine(`${hist}_bucket`, [...labels, ['le', BUCKET_LE[i] as string]], cumulative))
        })
        out.push(sampleLine(`${hist}_sum`, labels, h.sum), sampleLine(`${hist}_count`, labels, h.count))
      }
    }

    for (const m of eventFamilies) {
      const name = `${base(m)}_total`
      out.push(...familyHeader(name, 'counter', m.description))
      for (const s of events.get(m)?.values() ?? []) out.push(sampleLine(name, s.labels, s.value))
    }

    const redirects: string[] = []
    const redirectsName = `${base(METRICS.rywRedirects)}_total`
    rywRedirectSamples(stats, (labels, value) =>
      redirects.push(sampleLine(redirectsName, pairs(labels), value)),
    )
    if (redirects.length > 0)
      out.push(...familyHeader(redirectsName, 'counter', METRICS.rywRedirects.description), ...redirects)

    const gauges = new Map<MetricDef, string[]>()
    gaugeSamples(stats, (m, labels, value) => {
      const seconds = m.unit === 'ms'
      const name = seconds ? `${base(m)}_seconds` : base(m)
      let lines = gauges.get(m)
      if (lines === undefined) {
        lines = familyHeader(name, 'gauge', seconds ? `${m.description} In seconds.` : m.description)
        gauges.set(m, lines)
      }
      lines.push(sampleLine(name, pairs(labels), seconds ? value / 1000 : value))
    })
    for (const lines of gauges.values()) out.push(...lines)
    return `${out.join('\n')}\n`
  }

  let installed = true
  return {
    collect,
    uninstall() {
      if (!installed) return
      installed = false
      offQuery()
      offEvents()
    },
  }
}
