import type { RouterEventName, RouterEvents } from '../router/events.js'
import type { Router } from '../router/router.js'
import { redactUrl } from '../util/redact.js'
import { LOG_LEVELS, type Logger, type LogLevel } from './logger.js'

/** Options of {@link attachLogger}. */
export interface AttachLoggerOptions {
  /** Events below this level are not logged (not even listened to). Default: `'info'`. */
  level?: LogLevel
}

/** One log line: level, message, and the structured fields. */
interface Line {
  readonly level: LogLevel
  readonly msg: string
  readonly fields: Record<string, unknown>
}

type Formatter<E extends RouterEventName> = (e: RouterEvents[E]) => Line

const where = (e: { node: string; role: string; cluster: string }) =>
  `node "${e.node}" (${e.role}, cluster "${e.cluster}")`

const line = (level: LogLevel, msg: string, fields: object): Line => ({
  level,
  msg: redactUrl(msg),
  fields: { ...fields },
})

/** What an error becomes in a log line: name, redacted message, code. Never the raw object. */
function errorFields(error: unknown): { name: string; message: string; code?: string } {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code
    return {
      name: error.name,
      message: redactUrl(error.message),
      ...(typeof code === 'string' || typeof code === 'number' ? { code: String(code) } : {}),
    }
  }
  return { name: 'Error', message: redactUrl(String(error)) }
}

/** How each event is logged. */
const FORMATS: { readonly [E in RouterEventName]: Formatter<E> } = {
  'node:up': (e) => line('info', `${where(e)} is up (was ${e.previous})`, e),
  'node:suspect': (e) =>
    line('info', `${where(e)} is suspect: ${e.reason}`, { ...e, reason: redactUrl(e.reason) }),
  'node:down': (e) =>
    line('warn', `${where(e)} is down (${e.source}): ${e.reason}; its in-flight work was aborted`, {
      ...e,
      reason: redactUrl(e.reason),
    }),
  'node:role-mismatch': (e) =>
    line('warn', `${where(e)} reports being a ${e.actual}: not trusted until it matches again`, e),
  'node:role-ok': (e) => line('info', `${where(e)} reports its configured role again`, e),
  'node:lagging': (e) =>
    line(
      'warn',
      e.lagMs === undefined
        ? `${where(e)} is not replicating: not used for reads`
        : `${where(e)} lags ${e.lagMs} ms (max ${e.maxLagMs} ms): not used for reads`,
      e,
    ),
  'node:caught-up': (e) =>
    line(
      'info',
      `${where(e)} caught up${e.lagMs === undefined ? '' : ` (lag ${e.lagMs} ms)`}: used for reads again`,
      e,
    ),
  fallback: (e) => {
    const why = Object.entries(e.replicas)
      .map(([n, r]) => `${n}: ${r}`)
      .join(', ')
    const then = e.toPrimary ? 'reads go to the primary' : 'reads fail (fallbackToPrimary is false)'
    return line('warn', `no usable replica in cluster "${e.cluster}" (${why}): ${then}`, e)
  },
  'node:added': (e) => line('info', `${where(e)} was added`, e),
  'node:drained': (e) =>
    line('info', `${where(e)} was drained (${e.aborted} in-flight aborted): it takes no new queries`, e),
  'node:removed': (e) => line('info', `${where(e)} was removed`, e),
  'fallback:end': (e) =>
    line('info', `a replica of cluster "${e.cluster}" is usable again: reads go to replicas`, e),
  'primary:changed': (e) =>
    e.from === undefined
      ? line('info', `primary of cluster "${e.cluster}" is "${e.to}"`, e)
      : line('warn', `primary of cluster "${e.cluster}" changed from "${e.from}" to "${e.to}"`, e),
  'token:rejected': (e) => {
    const why = Object.entries(e.reasons)
      .map(([r, n]) => `${r}: ${n}`)
      .join(', ')
    return line('warn', `${e.count} consistency token(s) or parts ignored (${why})`, e)
  },
  retry: (e) =>
    line('debug', `read retried on "${e.to}" after a connection error on "${e.from}": ${e.error}`, {
      ...e,
      error: redactUrl(e.error),
    }),
  error: (e) => {
    const err = errorFields(e.error)
    const on = e.node === undefined ? '' : ` on node "${e.node}"`
    return line('error', `${e.context}${on}: ${err.message}`, {
      context: e.context,
      ...(e.node === undefined ? {} : { node: e.node }),
      err,
    })
  },
}

/** The level each event is logged at (`primary:changed` is `info` when it names the first primary found). */
export const EVENT_LOG_LEVELS: Readonly<Record<RouterEventName, LogLevel>> = Object.freeze({
  'node:up': 'info',
  'node:suspect': 'info',
  'node:down': 'warn',
  'node:role-mismatch': 'warn',
  'node:role-ok': 'info',
  'node:lagging': 'warn',
  'node:caught-up': 'info',
  'node:added': 'info',
  'node:drained': 'info',
  'node:removed': 'info',
  fallback: 'warn',
  'fallback:end': 'info',
  'primary:changed': 'warn',
  'token:rejected': 'warn',
  retry: 'debug',
  error: 'error',
})

/**
 * Logs a router's events to `logger` (pino-compatible): one line per state change, never one per
 * query. Levels: `node:down`, `node:lagging`, `node:role-mismatch`, `fallback`, `primary:changed`
 * warn; `node:up`, `node:suspect`, `node:caught-up`, `node:role-ok`, `fallback:end`,
 * `node:added`, `node:drained`, `node:removed` info; `token:rejected` warn; `retry` debug; `error` error. Each line is `logger[level]({ event, ...payload }, message)`;
 * errors are logged as `{ name, message, code }` with URL passwords redacted, never as the raw
 * object. routemate logs nothing unless a logger is attached. Returns the detach function.
 *
 * @example
 * ```ts
 * import { attachLogger, consoleLogger } from 'routemate'
 * const detach = attachLogger(router, consoleLogger, { level: 'warn' })
 * ```
 */
export function attachLogger(
  router: Pick<Router, 'on'>,
  logger: Logger,
  options: AttachLoggerOptions = {},
): () => void {
  const level = options.level ?? 'info'
  const threshold = LOG_LEVELS[level]
  if (threshold === undefined) {
    throw new TypeError(`level: expected 'debug', 'info', 'warn' or 'error', got ${JSON.stringify(level)}`)
  }
  const offs: Array<() => void> = []
  for (const name of Object.keys(FORMATS) as RouterEventName[]) {
    // EVENT_LOG_LEVELS holds each event's highest level; lines below the threshold are dropped below.
    if (LOG_LEVELS[EVENT_LOG_LEVELS[name]] < threshold) continue
    const format = FORMATS[name] as Formatter<typeof name>
    offs.push(
      router.on(name, (e) => {
        const l = format(e)
        if (LOG_LEVELS[l.level] < threshold) return
        logger[l.level]({ event: name, ...l.fields }, l.msg)
      }),
    )
  }
  return () => {
    for (const off of offs) off()
  }
}
