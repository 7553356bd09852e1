/**
 * `routemate/opentelemetry`: OpenTelemetry metrics for a router, and the serving node on the active
 * span. Uses `@opentelemetry/api` only (an optional peer dependency that nothing else of routemate
 * imports); with no SDK registered the API is a no-op and so is this.
 *
 * @module
 */
import {
  type Attributes,
  type BatchObservableCallback,
  type Counter,
  type MeterProvider,
  metrics,
  type Observable,
  type ObservableGauge,
  trace,
  ValueType,
} from '@opentelemetry/api'
import { SeriesMap } from './series-map.js'
import {
  DURATION_BUCKETS_MS,
  EVENT_COUNTERS,
  gaugeSamples,
  type Labels,
  METRICS,
  type MetricDef,
  rywRedirectSamples,
  subscribeEventCounters,
} from './signals.js'
import type { TelemetryRouter } from './telemetry-router.js'

/** Options of {@link instrumentRouter}. */
export interface InstrumentRouterOptions {
  /** Where the instruments are created. Default: the global provider (`metrics.getMeterProvider()`). */
  meterProvider?: MeterProvider
  /** First segment of every metric name (`<prefix>.queries`). Default: `'routemate'`. */
  prefix?: string
  /**
   * Set `routemate.node`, `routemate.role` and `routemate.cluster` on the active span (if one is
   * recording) after each statement, naming the node that served it. Default: `true`. Needs a
   * context manager (the Node SDK registers one); a span covering several statements keeps the
   * last one's node.
   */
  annotateSpans?: boolean
}

const PREFIX = /^[A-Za-z][A-Za-z0-9_./-]{0,200}$/

/** The attributes of one (cluster, node, role): for each outcome, and for the span. */
interface Series {
  readonly ok: Attributes
  readonly error: Attributes
  readonly span: Attributes
}

/** OpenTelemetry attribute of a short label name: `node` -> `routemate.node`. */
function attributes(labels: Labels): Attributes {
  const out: Attributes = {}
  for (const [k, v] of Object.entries(labels)) out[`routemate.${k}`] = v
  return Object.freeze(out)
}

/**
 * Publishes a router's metrics through OpenTelemetry: counters of statements (by node, role,
 * cluster, outcome), fallbacks, retries, node state changes, lag exclusions, role mismatches,
 * primary changes and background errors; a latency histogram (`<prefix>.query.duration`, ms);
 * gauges of node state, usability, in-flight work, lag and pool occupancy read from
 * `router.stats()` at collection time. Returns the uninstall function (idempotent).
 *
 * Install it once per router; instruments are not removed by uninstalling (the SDK cannot), they
 * just stop receiving data.
 *
 * @example
 * ```ts
 * import { instrumentRouter } from 'routemate/opentelemetry'
 * const uninstall = instrumentRouter(router) // uses the global MeterProvider
 * ```
 */
export function instrumentRouter(router: TelemetryRouter, options: InstrumentRouterOptions = {}): () => void {
  const prefix = options.prefix ?? 'routemate'
  if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
    throw new TypeError(
      `prefix: expected a letter then letters, digits, '_', '.', '-' or '/', got ${JSON.stringify(prefix)}`,
    )
  }
  const provider = options.meterProvider ?? metrics.getMeterProvider()
  const meter = provider.getMeter('routemate')
  const annotate = options.annotateSpans ?? true
  const name = (m: MetricDef) => `${prefix}.${m.name}`
  const info = (m: MetricDef) => ({ description: m.description, unit: m.unit })

  const queries = meter.createCounter(name(METRICS.queries), {
    ...info(METRICS.queries),
    valueType: ValueType.INT,
  })
  const duration = meter.createHistogram(name(METRICS.duration), {
    ...info(METRICS.duration),
    advice: { explicitBucketBoundaries: [...DURATION_BUCKETS_MS] },
  })
  const counters = new Map<MetricDef, Counter>()
  for (const m of EVENT_COUNTERS) {
    counters.set(m, meter.createCounter(name(m), { ...info(m), valueType: ValueType.INT }))
  }
  const gauges = new Map<MetricDef, ObservableGauge>()
  for (const m of [
    METRICS.nodeState,
    METRICS.nodeUsable,
    METRICS.inFlight,
    METRICS.lag,
    METRICS.connections,
    METRICS.pending,
    METRICS.fallingBack,
  ]) {
    const valueType = m === METRICS.lag ? ValueType.DOUBLE : ValueType.INT
    gauges.set(m, meter.createObservableGauge(name(m), { ...info(m), valueType }))
  }
  const redirects = meter.createObservableCounter(name(METRICS.rywRedirects), {
    ...info(METRICS.rywRedirects),
    valueType: ValueType.INT,
  })
  const observables: Observable[] = [...gauges.values(), redirects]
  const collect: BatchObservableCallback = (observer) => {
    const stats = router.stats()
    gaugeSamples(stats, (m, labels, value) => {
      const g = gauges.get(m)
      if (g !== undefined) observer.observe(g, value, attributes(labels))
    })
    rywRedirectSamples(stats, (labels, value) => observer.observe(redirects, value, attributes(labels)))
  }
  meter.addBatchObservableCallback(collect, observables)

  const series = new SeriesMap<Series>((cluster, node, role) => {
    const base = { cluster, node, role }
    return {
      ok: attributes({ ...base, outcome: 'ok' }),
      error: attributes({ ...base, outcome: 'error' }),
      span: attributes(base),
    }
  })
  const offQuery = router.onQuery((o) => {
    const s = series.get(o.cluster, o.node, o.role)
    const attrs = o.ok ? s.ok : s.error
    queries.add(1, attrs)
    duration.record(o.durationMs, attrs)
    if (annotate) {
      const span = trace.getActiveSpan()
      if (span?.isRecording()) span.setAttributes(s.span)
    }
  })
  const offEvents = subscribeEventCounters(router, (m, labels) => counters.get(m)?.add(1, attributes(labels)))

  let installed = true
  return () => {
    if (!installed) return
    installed = false
    offQuery()
    offEvents()
    meter.removeBatchObservableCallback(collect, observables)
  }
}
