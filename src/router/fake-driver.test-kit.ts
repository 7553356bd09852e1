/**
 * A scriptable in-memory driver for unit tests of routing and health logic (never for behaviour
 * against databases: those tests run on real clusters). Each node, by name, is `up` (probes
 * succeed, checkouts succeed), `refusing` (probes and checkouts fail at once with a
 * connection-class error) or `hung` (probes and checkouts never settle until aborted).
 *
 * Like the real drivers it has the callback forms `acquireCallback` / `executeCallback` that the
 * router's hot path (`RouterNode.run`) uses; `fakeDriver(modes, { callbacks: false })` leaves them
 * out, to test the promise fallback. Statements succeed with `{ rows: [{ node }], rowCount: 1 }`
 * unless `kit.onExecute` says otherwise (an error, a result, a promise, or {@link HANG}: pending
 * until the connection is destroyed, as a real socket's query fails when it is closed).
 * Positions are `0/N` strings compared by `N`; a node's probe reports `kit.positions[node]`.
 */

import type { Driver, DriverPool, ErrorClass, ProbeResult, QueryResult } from './driver.js'
import type { FacadeHost } from './facade-host.js'
import type { Statement } from './statement.js'

/** How a fake node behaves. */
export type FakeNodeMode = 'up' | 'refusing' | 'hung'

/** A connection-class error, as a driver raises on a refused connect or a reset socket. */
export class FakeConnectError extends Error {
  readonly code = 'ECONNREFUSED'
  constructor(node: string, what = 'connect ECONNREFUSED') {
    super(`${what} (fake ${node})`)
  }
}

/** An error the fake driver classifies as `statement` (syntax, constraint...). */
export class FakeStatementError extends Error {}

/** An error the fake driver classifies as `read-only` (a write refused by a standby). */
export class FakeReadOnlyError extends Error {}

/** An error the fake driver classifies as `timeout` (the client library's own timeout). */
export class FakeTimeoutError extends Error {}

/** Returned by `kit.onExecute`: the statement never ends until its connection is destroyed. */
export const HANG: unique symbol = Symbol('hang')

/** A fake connection. */
export interface FakeConn {
  readonly node: string
  readonly id: number
  /** Checked out of the node's read-only pool. */
  readonly readOnly: boolean
  destroyed: boolean
  /** Fails the statement pending on it, if any (set while one runs). */
  fail: ((err: unknown) => void) | undefined
}

/** What `kit.onExecute` may return: nothing (the default result), a result, an error, a promise of either, or {@link HANG}. */
export type ExecuteOutcome =
  | QueryResult
  | Error
  | typeof HANG
  | undefined
  | Promise<QueryResult | Error | undefined>

/** One statement the fake driver ran. */
export interface ExecutedStatement {
  readonly node: string
  readonly sql: string
  readonly readOnly: boolean
  readonly conn: number
}

/** Per-node pool bookkeeping. */
export interface FakePoolStats {
  acquired: number
  released: number
  destroyed: number
  ended: number
  busy: number
}

/** Options of {@link fakeDriver}. */
export interface FakeDriverOptions {
  /** Whether the driver has `acquireCallback` / `executeCallback` (as `pg` and `mysql2` do). Default: true. */
  readonly callbacks?: boolean
  /** The dialect the driver reports. Default: `postgres`. */
  readonly dialect?: 'postgres' | 'mysql'
}

/** What a fake driver records and lets a test change. */
export interface FakeDriverKit {
  readonly driver: Driver<FakeConn, FacadeHost<FakeConn>>
  /** Mode of each node by name (default `up`); change it any time. */
  readonly modes: Record<string, FakeNodeMode>
  /** Start times of the probes of each node. */
  readonly probes: Record<string, number[]>
  /** Statements executed per node. */
  readonly executed: Record<string, number>
  /** Every statement executed, in order. */
  readonly statements: ExecutedStatement[]
  /** Replication position each node's probe reports (default `0/1`); the primary's is also what `positionAfterWrite` reads. */
  readonly positions: Record<string, string>
  /** Role each node's probe reports (default: `primary` for names containing `primary`, else `replica`). */
  readonly roles: Record<string, 'primary' | 'replica'>
  /** Extra fields of a node's probe result (`replicating`, `reportedLagMs`). */
  readonly probeExtras: Record<string, Partial<ProbeResult>>
  /** Pool bookkeeping per node (both pools of a node together). */
  readonly pools: Record<string, FakePoolStats>
  /** Decides each statement's outcome (see {@link ExecuteOutcome}); default: success. */
  onExecute: ((node: string, sql: string, conn: FakeConn) => ExecuteOutcome) | undefined
  /** Decides `waitForPosition` (default: the node's position in `positions`). */
  onWait: ((node: string, target: string, timeoutMs: number) => Promise<string | undefined>) | undefined
  /** Makes `positionAfterWrite` fail. */
  failPositionAfterWrite: boolean
  /** Node names whose checkouts the fake saw, in order (`ro:` prefix for the read-only pool). */
  readonly checkouts: string[]
  /** How often each driver entry point was called: shows which path (callback or promise) the router took. */
  readonly calls: { acquire: number; acquireCallback: number; execute: number; executeCallback: number }
}

/** `0/N` → N. */
function seq(position: string): number {
  return Number(position.slice(position.indexOf('/') + 1))
}

/** Makes a fake driver; a node named `primary` (or containing `primary`) reports the primary role. */
export function fakeDriver(
  modes: Record<string, FakeNodeMode> = {},
  options: FakeDriverOptions = {},
): FakeDriverKit {
  const callbacks = options.callbacks ?? true
  const probes: Record<string, number[]> = {}
  const executed: Record<string, number> = {}
  const statements: ExecutedStatement[] = []
  const positions: Record<string, string> = {}
  const roles: Record<string, 'primary' | 'replica'> = {}
  const probeExtras: Record<string, Partial<ProbeResult>> = {}
  const pools: Record<string, FakePoolStats> = {}
  const checkouts: string[] = []
  const calls = { acquire: 0, acquireCallback: 0, execute: 0, executeCallback: 0 }
  let nextId = 0
  const settleOnAbort = <T>(signal: AbortSignal | undefined): Promise<T> =>
    new Promise<T>((_, reject) => {
      signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true })
    })
  const statsOf = (name: string): FakePoolStats => {
    pools[name] ??= { acquired: 0, released: 0, destroyed: 0, ended: 0, busy: 0 }
    return pools[name]
  }
  const run = (conn: FakeConn, stmt: Statement): Promise<QueryResult> => {
    const sql = typeof stmt === 'string' ? stmt : String(stmt.text ?? stmt.sql ?? '')
    executed[conn.node] = (executed[conn.node] ?? 0) + 1
    statements.push({ node: conn.node, sql, readOnly: conn.readOnly, conn: conn.id })
    if (conn.destroyed) return Promise.reject(new FakeConnectError(conn.node, 'connection destroyed'))
    let outcome: ExecuteOutcome
    try {
      outcome = kit.onExecute?.(conn.node, sql, conn)
    } catch (err) {
      return Promise.reject(err)
    }
    const pending = new Promise<QueryResult>((resolve, reject) => {
      conn.fail = reject
      if (outcome === HANG) return
      Promise.resolve(outcome).then((o) => {
        if (o instanceof Error) reject(o)
        else resolve(o ?? { rows: [{ node: conn.node }], rowCount: 1 })
      }, reject)
    })
    return pending.finally(() => {
      conn.fail = undefined
    })
  }
  const driver: Driver<FakeConn, FacadeHost<FakeConn>> = {
    dialect: options.dialect ?? 'postgres',
    name: 'fake',
    createPool: (node): DriverPool<FakeConn> => {
      const stats = statsOf(node.name)
      let live = 0
      const acquire = (): Promise<FakeConn> => {
        const mode = modes[node.name] ?? 'up'
        checkouts.push(node.readOnly ? `ro:${node.name}` : node.name)
        if (mode === 'refusing') return Promise.reject(new FakeConnectError(node.name))
        if (mode === 'hung') return settleOnAbort(undefined)
        stats.acquired++
        stats.busy++
        live++
        return Promise.resolve({
          node: node.name,
          id: ++nextId,
          readOnly: node.readOnly,
          destroyed: false,
          fail: undefined,
        })
      }
      const pool: DriverPool<FakeConn> = {
        acquire: () => {
          calls.acquire++
          return acquire()
        },
        release: (conn, destroy) => {
          stats.released++
          stats.busy--
          if (destroy) {
            conn.destroyed = true
            live--
          }
        },
        destroy: (conn) => {
          stats.destroyed++
          conn.destroyed = true
          conn.fail?.(new FakeConnectError(conn.node, 'connection destroyed'))
        },
        end: async () => {
          stats.ended++
        },
        counts: () => ({ total: live, idle: live - stats.busy, waiting: 0 }),
      }
      if (callbacks) {
        pool.acquireCallback = (cb) => {
          calls.acquireCallback++
          void acquire().then((c) => cb(null, c), cb)
        }
      }
      return pool
    },
    execute: (conn, stmt) => {
      calls.execute++
      return run(conn, stmt)
    },
    probe: (node, signal): Promise<ProbeResult> => {
      const list = probes[node.name] ?? []
      list.push(Date.now())
      probes[node.name] = list
      const mode = modes[node.name] ?? 'up'
      if (mode === 'refusing') return Promise.reject(new FakeConnectError(node.name))
      if (mode === 'hung') return settleOnAbort(signal)
      return Promise.resolve({
        role: roles[node.name] ?? (node.name.includes('primary') ? 'primary' : 'replica'),
        position: positions[node.name] ?? '0/1',
        ...probeExtras[node.name],
      })
    },
    positionReached: (replay, target) => seq(replay) >= seq(target),
    positionAfterWrite: async (conn) => {
      if (kit.failPositionAfterWrite) throw new FakeConnectError(conn.node, 'position read failed')
      return positions[conn.node] ?? '0/1'
    },
    waitForPosition: async (conn, target, timeoutMs) =>
      kit.onWait === undefined ? (positions[conn.node] ?? '0/1') : kit.onWait(conn.node, target, timeoutMs),
    beginSql: (o) =>
      o.isolation === undefined ? (o.readOnly ? 'BEGIN READ ONLY' : 'BEGIN') : ['SET ISOLATION', 'BEGIN'],
    savepointSql: (n, op) =>
      op === 'create'
        ? `SAVEPOINT ${n}`
        : op === 'release'
          ? `RELEASE SAVEPOINT ${n}`
          : `ROLLBACK TO SAVEPOINT ${n}`,
    classify: (err): ErrorClass =>
      err instanceof FakeConnectError
        ? 'connection'
        : err instanceof FakeReadOnlyError
          ? 'read-only'
          : err instanceof FakeTimeoutError
            ? 'timeout'
            : 'statement',
    facade: (host) => host,
  }
  if (callbacks) {
    driver.executeCallback = (conn, stmt, _params, cb) => {
      calls.executeCallback++
      void run(conn, stmt).then((r) => cb(null, r), cb)
    }
  }
  const kit: FakeDriverKit = {
    driver,
    modes,
    probes,
    executed,
    statements,
    positions,
    roles,
    probeExtras,
    pools,
    onExecute: undefined,
    onWait: undefined,
    failPositionAfterWrite: false,
    checkouts,
    calls,
  }
  return kit
}
