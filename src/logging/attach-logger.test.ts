import { describe, expect, it } from 'vitest'
import { RouterEmitter, type RouterEvents } from '../router/events.js'
import { attachLogger } from './attach-logger.js'
import type { Logger, LogLevel } from './logger.js'

interface Entry {
  level: LogLevel
  obj: Record<string, unknown>
  msg: string | undefined
}

/** A logger that records each call (and checks it is called as a method, like pino needs). */
function capture(): Logger & { entries: Entry[] } {
  const entries: Entry[] = []
  const logger = {
    entries,
    debug(obj: object | string, msg?: string) {
      logger.push('debug', this, obj, msg)
    },
    info(obj: object | string, msg?: string) {
      logger.push('info', this, obj, msg)
    },
    warn(obj: object | string, msg?: string) {
      logger.push('warn', this, obj, msg)
    },
    error(obj: object | string, msg?: string) {
      logger.push('error', this, obj, msg)
    },
    push(level: LogLevel, self: unknown, obj: object | string, msg?: string) {
      if (self !== logger) throw new Error('logger method called without its receiver')
      entries.push({ level, obj: typeof obj === 'string' ? {} : (obj as Record<string, unknown>), msg })
    },
  }
  return logger
}

function fakeRouter() {
  const events = new RouterEmitter()
  return {
    on: events.on.bind(events),
    emit<E extends keyof RouterEvents>(name: E, e: RouterEvents[E]) {
      events.emit(name, e)
    },
    has: (name: keyof RouterEvents) => events.has(name),
  }
}

const r1 = { cluster: 'default', node: 'replica1', role: 'replica' as const }

function emitAll(r: ReturnType<typeof fakeRouter>) {
  r.emit('node:suspect', { ...r1, reason: 'timeout' })
  r.emit('node:down', { ...r1, reason: 'connect ECONNREFUSED 127.0.0.1:5433', source: 'probe' })
  r.emit('fallback', {
    cluster: 'default',
    toPrimary: true,
    replicas: { replica1: 'down', replica2: 'lagging' },
  })
  r.emit('retry', { cluster: 'default', from: 'replica1', to: 'replica2', error: 'ECONNRESET' })
  r.emit('node:up', { ...r1, previous: 'down' })
  r.emit('fallback:end', { cluster: 'default' })
  r.emit('node:lagging', { ...r1, lagMs: 9000, maxLagMs: 5000 })
  r.emit('node:caught-up', { ...r1, lagMs: 10 })
  r.emit('node:role-mismatch', { ...r1, actual: 'primary' })
  r.emit('node:role-ok', r1)
  r.emit('primary:changed', { cluster: 'default', from: undefined, to: 'primary' })
  r.emit('primary:changed', { cluster: 'default', from: 'primary', to: 'replica1' })
  r.emit('node:added', { ...r1, node: 'replica3' })
  r.emit('node:drained', { ...r1, node: 'replica3', aborted: 0 })
  r.emit('node:removed', { ...r1, node: 'replica3' })
  r.emit('error', {
    error: new Error('terminating connection'),
    context: 'pooled connection error',
    node: 'replica1',
  })
}

describe('attachLogger', () => {
  it('logs each event once at its level, with the event name and payload as fields', () => {
    const r = fakeRouter()
    const log = capture()
    attachLogger(r, log, { level: 'debug' })
    emitAll(r)
    const got = log.entries.map((e) => [e.obj.event, e.level])
    expect(got).toEqual([
      ['node:suspect', 'info'],
      ['node:down', 'warn'],
      ['fallback', 'warn'],
      ['retry', 'debug'],
      ['node:up', 'info'],
      ['fallback:end', 'info'],
      ['node:lagging', 'warn'],
      ['node:caught-up', 'info'],
      ['node:role-mismatch', 'warn'],
      ['node:role-ok', 'info'],
      ['primary:changed', 'info'],
      ['primary:changed', 'warn'],
      ['node:added', 'info'],
      ['node:drained', 'info'],
      ['node:removed', 'info'],
      ['error', 'error'],
    ])
    const down = log.entries[1] as Entry
    expect(down.obj).toMatchObject({
      event: 'node:down',
      cluster: 'default',
      node: 'replica1',
      source: 'probe',
    })
    expect(down.msg).toBe(
      'node "replica1" (replica, cluster "default") is down (probe): connect ECONNREFUSED 127.0.0.1:5433; its in-flight work was aborted',
    )
    expect(log.entries[2]?.msg).toBe(
      'no usable replica in cluster "default" (replica1: down, replica2: lagging): reads go to the primary',
    )
    expect(log.entries[11]?.msg).toBe('primary of cluster "default" changed from "primary" to "replica1"')
    for (const e of log.entries) expect(typeof e.msg).toBe('string')
  })

  it('defaults to info: debug events are not even listened to', () => {
    const r = fakeRouter()
    const log = capture()
    attachLogger(r, log)
    expect(r.has('retry')).toBe(false)
    expect(r.has('node:up')).toBe(true)
    emitAll(r)
    expect(log.entries.some((e) => e.level === 'debug')).toBe(false)
    expect(log.entries.length).toBe(15)
  })

  it('level warn keeps warn and error only (the first primary found is info, so dropped)', () => {
    const r = fakeRouter()
    const log = capture()
    attachLogger(r, log, { level: 'warn' })
    emitAll(r)
    expect(log.entries.map((e) => e.obj.event)).toEqual([
      'node:down',
      'fallback',
      'node:lagging',
      'node:role-mismatch',
      'primary:changed',
      'error',
    ])
    expect(() => attachLogger(r, log, { level: 'trace' as LogLevel })).toThrow(/level/)
  })

  it('never logs a password: error objects become { name, message, code } with URLs redacted', () => {
    const r = fakeRouter()
    const log = capture()
    attachLogger(r, log, { level: 'debug' })
    const err = Object.assign(new Error('cannot connect to postgres://app:hunter2@db:5432/app'), {
      code: 'ECONNREFUSED',
    })
    r.emit('error', { error: err, context: 'pooled connection error', node: 'replica1' })
    r.emit('error', { error: 'password=hunter2 rejected', context: 'x' })
    r.emit('node:down', { ...r1, reason: 'postgres://app:hunter2@db/app refused', source: 'query' })
    r.emit('retry', { cluster: 'default', from: 'a', to: 'b', error: 'postgres://app:hunter2@db/app reset' })
    expect(log.entries.length).toBe(4)
    for (const e of log.entries) {
      expect(`${JSON.stringify(e.obj)} ${e.msg}`).not.toContain('hunter2')
    }
    expect(log.entries[0]?.obj.err).toEqual({
      name: 'Error',
      message: 'cannot connect to postgres://app:***@db:5432/app',
      code: 'ECONNREFUSED',
    })
    expect(log.entries[0]?.obj.err).not.toBeInstanceOf(Error)
  })

  it('logs token:rejected as one warn line with the counts by reason', () => {
    const r = fakeRouter()
    const log = capture()
    attachLogger(r, log)
    r.emit('token:rejected', { count: 3, reasons: { 'bad-signature': 2, 'ahead-of-primary': 1 } })
    expect(log.entries).toEqual([
      {
        level: 'warn',
        obj: { event: 'token:rejected', count: 3, reasons: { 'bad-signature': 2, 'ahead-of-primary': 1 } },
        msg: '3 consistency token(s) or parts ignored (bad-signature: 2, ahead-of-primary: 1)',
      },
    ])
  })

  it('detach removes every listener', () => {
    const r = fakeRouter()
    const log = capture()
    const detach = attachLogger(r, log, { level: 'debug' })
    detach()
    emitAll(r)
    expect(log.entries).toEqual([])
    expect(r.has('node:down')).toBe(false)
  })

  it('a throwing logger never disturbs the router', () => {
    const r = fakeRouter()
    const boom = () => {
      throw new Error('logger broke')
    }
    attachLogger(r, { debug: boom, info: boom, warn: boom, error: boom })
    expect(() => emitAll(r)).not.toThrow()
  })

  it('accepts a pino-shaped logger (types)', () => {
    // pino's LogFn, reduced: generic object first, or a message with interpolation args.
    interface PinoLogFn {
      // biome-ignore lint/suspicious/noExplicitAny: pino's own signature
      <T extends object>(obj: T, msg?: string, ...args: any[]): void
      // biome-ignore lint/suspicious/noExplicitAny: pino's own signature
      (obj: unknown, msg?: string, ...args: any[]): void
      // biome-ignore lint/suspicious/noExplicitAny: pino's own signature
      (msg: string, ...args: any[]): void
    }
    const fn: PinoLogFn = () => {}
    const pinoLike = {
      level: 'info',
      debug: fn,
      info: fn,
      warn: fn,
      error: fn,
      fatal: fn,
      trace: fn,
      child: () => pinoLike,
    }
    const logger: Logger = pinoLike
    expect(() => attachLogger(fakeRouter(), logger)()).not.toThrow()
  })
})
