/**
 * A scriptable in-memory driver for unit tests of routing and health logic (never for behaviour
 * against databases: those tests run on real clusters). Each node, by name, is `up` (probes
 * succeed, checkouts succeed), `refusing` (probes and checkouts fail at once with a
 * connection-class error) or `hung` (probes and checkouts never settle until aborted).
 */
import type { Driver, DriverPool, ProbeResult } from './driver.js'

/** How a fake node behaves. */
export type FakeNodeMode = 'up' | 'refusing' | 'hung'

/** A connection-class error, as a driver raises on a refused connect. */
export class FakeConnectError extends Error {
  readonly code = 'ECONNREFUSED'
  constructor(node: string) {
    super(`connect ECONNREFUSED (fake ${node})`)
  }
}

/** What a fake driver records and lets a test change. */
export interface FakeDriverKit {
  readonly driver: Driver
  /** Mode of each node by name (default `up`); change it any time. */
  readonly modes: Record<string, FakeNodeMode>
  /** Start times of the probes of each node. */
  readonly probes: Record<string, number[]>
  /** Statements executed per node. */
  readonly executed: Record<string, number>
}

/** Makes a fake driver; a node named `primary` (or starting with `primary`) reports the primary role. */
export function fakeDriver(modes: Record<string, FakeNodeMode> = {}): FakeDriverKit {
  const probes: Record<string, number[]> = {}
  const executed: Record<string, number> = {}
  const settleOnAbort = <T>(signal: AbortSignal | undefined): Promise<T> =>
    new Promise<T>((_, reject) => {
      signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true })
    })
  const driver: Driver = {
    dialect: 'postgres',
    name: 'fake',
    createPool: (node): DriverPool => ({
      acquire: () => {
        const mode = modes[node.name] ?? 'up'
        if (mode === 'refusing') return Promise.reject(new FakeConnectError(node.name))
        if (mode === 'hung') return settleOnAbort(undefined)
        return Promise.resolve({ node: node.name })
      },
      release: () => {},
      destroy: () => {},
      end: async () => {},
      counts: () => ({ total: 0, idle: 0, waiting: 0 }),
    }),
    execute: async (conn) => {
      const name = (conn as { node: string }).node
      executed[name] = (executed[name] ?? 0) + 1
      return { rows: [{ node: name }], rowCount: 1 }
    },
    probe: (node, signal): Promise<ProbeResult> => {
      const list = probes[node.name] ?? []
      list.push(Date.now())
      probes[node.name] = list
      const mode = modes[node.name] ?? 'up'
      if (mode === 'refusing') return Promise.reject(new FakeConnectError(node.name))
      if (mode === 'hung') return settleOnAbort(signal)
      return Promise.resolve({
        role: node.name.startsWith('primary') ? 'primary' : 'replica',
        position: '0/1',
      })
    },
    positionReached: () => true,
    positionAfterWrite: async () => '0/1',
    waitForPosition: async () => '0/1',
    beginSql: () => 'BEGIN',
    savepointSql: (n) => `SAVEPOINT ${n}`,
    classify: (err) => (err instanceof FakeConnectError ? 'connection' : 'statement'),
  }
  return { driver, modes, probes, executed }
}
