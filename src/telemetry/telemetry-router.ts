import type { Router } from '../router/router.js'

/**
 * What the telemetry helpers need of a router: its events, its per-statement observations and its
 * stats snapshot. A `Router` satisfies it; so does a small fake in a test.
 */
export type TelemetryRouter = Pick<Router, 'on' | 'onQuery' | 'stats'>
