/**
 * A driver wrapper that records every health probe and every pool checkout the router makes, per
 * node, so that tests can count probe rounds and connection attempts instead of measuring wall
 * time ("marked down within 2 probe rounds of the kill", "failed without trying a connection").
 * Wraps the driver as the router sees it: no product code is involved.
 */
import type { Driver, DriverNodeOptions, DriverPool, DriverProber, ProbeResult } from '../../../src/index.js'

/** One probe of one node, as the router ran it. */
export interface ProbeRecord {
  readonly node: string
  /** Order of the start among all events of this log (probes and checkouts). */
  readonly seq: number
  /** `Date.now()` at the start, only to relate a probe to a moment the test took (never asserted on as a duration). */
  readonly startedAt: number
  /** Set once the probe settles: `true` for a result, `false` for a failure or an abort. */
  ok?: boolean
  /** `Date.now()` when it settled. */
  endedAt?: number
}

/** What {@link logProbes} gives back. */
export interface ProbeLog {
  /** The wrapped driver, to pass to `createRouter`. */
  readonly driver: Driver
  /** Every probe so far, in start order. */
  readonly probes: readonly ProbeRecord[]
  /** Probes of `node` that started at or after `since` (`Date.now()` value), optionally before `until`. */
  probesOf(node: string, since?: number, until?: number): ProbeRecord[]
  /** Pool checkouts (`acquire`) asked of `node` so far. */
  acquires(node: string): number
}

/**
 * Wraps `driver` so that every probe (`probe`, or the kept-connection `createProber`) and every
 * pool checkout is recorded per node.
 *
 * @example
 * ```ts
 * const log = logProbes(pgDriver())
 * const router = createRouter({ driver: log.driver, ... })
 * log.probesOf('replica1', killedAt).length // probe rounds since the kill
 * ```
 */
export function logProbes(driver: Driver): ProbeLog {
  const probes: ProbeRecord[] = []
  const acquired = new Map<string, number>()
  let seq = 0
  const track = (node: string, probing: Promise<ProbeResult>): Promise<ProbeResult> => {
    const record: ProbeRecord = { node, seq: seq++, startedAt: Date.now() }
    probes.push(record)
    probing.then(
      () => {
        record.ok = true
        record.endedAt = Date.now()
      },
      () => {
        record.ok = false
        record.endedAt = Date.now()
      },
    )
    return probing
  }
  const wrapPool = (node: DriverNodeOptions, pool: DriverPool): DriverPool => {
    const count = (): void => {
      seq++
      acquired.set(node.name, (acquired.get(node.name) ?? 0) + 1)
    }
    const wrapped: DriverPool = {
      acquire: () => {
        count()
        return pool.acquire()
      },
      release: (conn, destroy) => pool.release(conn, destroy),
      destroy: (conn) => pool.destroy(conn),
      end: () => pool.end(),
      counts: () => pool.counts(),
    }
    if (pool.acquireCallback !== undefined) {
      const acquireCallback = pool.acquireCallback.bind(pool)
      wrapped.acquireCallback = (cb) => {
        count()
        acquireCallback(cb)
      }
    }
    return wrapped
  }
  const overrides: Partial<Driver> = {
    probe: (node, signal) => track(node.name, driver.probe(node, signal)),
    createPool: (node, onError) => wrapPool(node, driver.createPool(node, onError)),
  }
  if (driver.createProber !== undefined) {
    const createProber = driver.createProber.bind(driver)
    overrides.createProber = (node, options): DriverProber => {
      const prober = createProber(node, options)
      return {
        probe: (signal) => track(node.name, prober.probe(signal)),
        close: () => prober.close(),
      }
    }
  }
  const wrapped = new Proxy(driver, {
    get(target, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof Driver]
      const value: unknown = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return {
    driver: wrapped,
    probes,
    probesOf: (node, since = Number.NEGATIVE_INFINITY, until = Number.POSITIVE_INFINITY) =>
      probes.filter((p) => p.node === node && p.startedAt >= since && p.startedAt < until),
    acquires: (node) => acquired.get(node) ?? 0,
  }
}
