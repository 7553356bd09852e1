import type postgres from 'postgres'
import { sendCancelRequest } from '../pg/pg-cancel.js'
import type { IsolationLevel } from '../router/driver.js'
import type { CapturedScope, FacadeHost, ScopedConnection } from '../router/facade-host.js'
import type { Statement } from '../router/statement.js'
import type { PgJsQuery, PostgresConn } from './postgres-connection.js'
import { classifyPostgresError, connectionLost } from './postgres-errors.js'

/**
 * `router.sql()` with the postgres.js driver: a postgres.js `sql` whose statements are routed by
 * the caller's scope (see {@link createRoutedSql}).
 */
export type RoutedSql = postgres.Sql

/** A postgres.js query object, as far as routing it needs (its fields are postgres.js's own). */
interface Q extends PgJsQuery {
  tagged: boolean
  strings: readonly string[] & { raw?: readonly string[] }
  args: unknown[]
  options: { simple?: boolean; prepare?: boolean }
  handler: Handler
  executed: boolean
  active: boolean
  cancelled: unknown
  cursorRows?: number
  cursorFn?: unknown
  forEachFn?: unknown
  streaming?: boolean
  resolve: (x: unknown) => void
  reject: (e: unknown) => void
  /** The routing scope the query was built in (it runs by it, whenever it is awaited). */
  rmScope?: CapturedScope
  /** The connection it was last sent on (for `query.cancel()`). */
  rmConn?: PostgresConn
  /** While the router runs it: where its outcome goes (see {@link runRoutedStatement}). */
  rmDone?: ((err: unknown, result?: unknown) => void) | undefined
}

/** Where a routed statement ({@link RoutedStatement}) carries its postgres.js query. */
const QUERY = Symbol('routemate.postgres.js query')

/** A statement with the extended protocol (one statement at most), for the read-only guard: see `runsOneStatement`. */
const EXTENDED: readonly unknown[] = Object.freeze([true])
const SIMPLE: readonly unknown[] = Object.freeze([])

/**
 * A `router.sql()` query handed to the router's own read path (`FacadeHost.read`): `text` is what
 * the read-only guard checks, `values` says whether postgres.js sends it with the extended
 * protocol (one statement at most); the driver's `execute` runs the query itself on the checked-out
 * connection (see {@link runRoutedStatement}).
 */
export interface RoutedStatement {
  readonly text: string
  readonly values: readonly unknown[]
  readonly [QUERY]: Q
}

/**
 * A {@link RoutedStatement}, made with `new` rather than an object literal: V8 may decide to
 * allocate every object of a literal site in the old generation (allocation-site pretenuring),
 * where it would keep its query (and the query's result) alive through young-generation
 * collections; see `toQueryResult` of the mysql2 driver.
 */
class RoutedStatementOf implements RoutedStatement {
  readonly [QUERY]: Q
  constructor(
    readonly text: string,
    readonly values: readonly unknown[],
    q: Q,
  ) {
    this[QUERY] = q
  }
}

/** Whether `stmt` is a {@link RoutedStatement}. */
export function isRoutedStatement(stmt: unknown): stmt is RoutedStatement {
  return typeof stmt === 'object' && stmt !== null && QUERY in stmt
}

/**
 * Runs a routed `router.sql()` query on `conn`, checked out for it by the router: hands it to
 * postgres.js's own handler of the connection, and gives its outcome to `cb` instead of the
 * query's promise (which the facade settles once the router is done with it, after a retry
 * elsewhere if any). No promise of its own.
 */
export function runRoutedStatement(
  conn: PostgresConn,
  stmt: RoutedStatement,
  cb: (err: unknown, result?: unknown) => void,
): void {
  const q = stmt[QUERY]
  if (conn.broken) {
    cb(connectionLost())
    return
  }
  if (q.cancelled) {
    cb(cancelledError())
    return
  }
  q.rmDone = cb
  q.resolve = routedResolve
  q.reject = routedReject
  q.rmConn = conn
  conn.current = q
  connHandler(conn)(q)
}

/**
 * A routed query's `resolve` and `reject` while the router runs it (postgres.js calls them as its
 * methods): the outcome goes to the router's callback, once — postgres.js may report a query
 * failed twice (a connection lost while connecting, then closed). Shared, so that sending a query
 * allocates no closure.
 */
function routedResolve(this: Q, x: unknown): void {
  this.active = false
  const done = this.rmDone
  this.rmDone = undefined
  done?.(null, x)
}

function routedReject(this: Q, e: unknown): void {
  this.active = false
  const done = this.rmDone
  this.rmDone = undefined
  done?.(e ?? new Error('query failed'))
}

function cancelledError(): Error {
  return Object.assign(new Error('57014: canceling statement due to user request'), { code: '57014' })
}

type Handler = ((q: Q) => void) & { debug?: unknown }
type QueryCtor = new (
  strings: readonly string[],
  args: unknown[],
  handler: Handler,
  canceller: (q: Q) => Promise<void>,
  options?: Record<string, unknown>,
) => Q

/**
 * `new C(...)` for the postgres.js `Query` class (or its {@link routedQueryClass}), kept out of
 * line on purpose. With an `AsyncLocalStorage` enabled (Node 20: promise hooks), V8 throws away
 * its optimized code of postgres.js's `Query` constructor every few hundred queries (a stable-map
 * dependency breaks). Inlined into `router.sql()`'s tagged function and, through it, into the
 * caller's scope callback, each such event threw away those large compilations too: ~120 µs of
 * compiler time per query, half of `router.sql()`'s throughput on a 2-core machine. The class comes
 * as an argument, through a call site that has seen several classes (megamorphic: see the seeding
 * below), so the constructor is never inlined: the invalidations then cost what they cost raw
 * postgres.js with an `AsyncLocalStorage` (~25 µs).
 */
function newQuery(
  C: QueryCtor,
  strings: readonly string[],
  args: unknown[],
  handler: Handler,
  canceller: (q: Q) => Promise<void>,
  options?: Record<string, unknown>,
): Q {
  return new C(strings, args, handler, canceller, options)
}
const noopHandler: Handler = () => {}
const noopCanceller = (): Promise<void> => Promise.resolve()
for (const C of [class {}, class {}, class {}, class {}, class {}]) {
  for (let i = 0; i < 2; i++) newQuery(C as unknown as QueryCtor, [], [], noopHandler, noopCanceller)
}

const promiseThen = Promise.prototype.then

/** The {@link routedQueryClass} of each postgres.js `Query` class. */
const routedClasses = new WeakMap<QueryCtor, QueryCtor>()

/**
 * A subclass of postgres.js's `Query` for `router.sql()`'s queries, whose `then` (what `await`
 * calls) hands the query to its handler at once. postgres.js's own `then` calls an `async handle()`
 * that first does `await 1`: three promises per query, each paying Node 20's promise hooks once an
 * `AsyncLocalStorage` is enabled (and routemate's scopes enable one), with nothing to wait for —
 * `await` on a `Query` already runs `then` from a microtask, after the caller built the query.
 * `catch`, `finally`, `execute()`, `forEach()` and cursors keep postgres.js's deferred `handle`.
 */
function routedQueryClass(Base: QueryCtor): QueryCtor {
  let C = routedClasses.get(Base)
  if (C === undefined) {
    const B = Base as unknown as new (...args: never[]) => object
    class RoutedQuery extends B {
      // biome-ignore lint/suspicious/noThenProperty: a postgres.js query is a promise
      then(onFulfilled?: unknown, onRejected?: unknown): Promise<unknown> {
        const q = this as unknown as Q
        if (!q.executed) {
          q.executed = true
          q.handler(q)
        }
        return promiseThen.call(this, onFulfilled as undefined, onRejected as undefined) as Promise<unknown>
      }
    }
    C = RoutedQuery as unknown as QueryCtor
    routedClasses.set(Base, C)
  }
  return C
}

/** Where a query of a pinned `sql` (reserved, or a transaction's) runs. */
interface Pinned {
  readonly sc: ScopedConnection<PostgresConn>
}

/** postgres.js's own handler of a connection's one-connection instance (it queues statements and pipelines them). */
export function connHandler(conn: PostgresConn): Handler {
  let h = conn.handler as Handler | undefined
  if (h === undefined) {
    h = (conn.sql.unsafe('') as unknown as Q).handler
    conn.handler = h
  }
  return h
}

const ISOLATIONS: readonly IsolationLevel[] = [
  'read uncommitted',
  'read committed',
  'repeatable read',
  'serializable',
]

/**
 * Reads the options of postgres.js's `sql.begin(options, fn)` (`'read only'`, `'read write'`,
 * `'isolation level serializable'`...) as routemate transaction options.
 */
export function beginOptionsOf(text: string): { readOnly?: boolean; isolation?: IsolationLevel } {
  const words = text
    .toLowerCase()
    .replace(/[^a-z ]/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .join(' ')
  let rest = words
  const out: { readOnly?: boolean; isolation?: IsolationLevel } = {}
  for (const level of ISOLATIONS) {
    if (rest.includes(`isolation level ${level}`)) {
      out.isolation = level
      rest = rest.replace(`isolation level ${level}`, '')
    }
  }
  if (rest.includes('read only')) {
    out.readOnly = true
    rest = rest.replace('read only', '')
  } else if (rest.includes('read write')) {
    out.readOnly = false
    rest = rest.replace('read write', '')
  }
  if (rest.trim() !== '')
    throw new TypeError(
      `sql.begin(): unsupported transaction option(s) "${rest.trim()}" (routemate takes: read only, read write, isolation level ...)`,
    )
  return out
}

/**
 * Builds `router.sql()` for the postgres.js driver: a postgres.js `sql` (tagged templates and
 * their modifiers — `.values()`, `.raw()`, `.simple()`, `.describe()`, `.cursor()`, `.forEach()`,
 * `.cancel()` —, `sql.unsafe`, the helpers `sql(identifier)`, `sql(object, ...columns)`,
 * `sql.json`, `sql.array`, `sql.typed`) whose statements run on a connection chosen by the
 * caller's scope (the scope the query was built in: a postgres.js query runs when awaited, which
 * may be after its scope callback returned it). A read in a `readOnly` scope outside a
 * transaction runs as `router.query` runs one there (`FacadeHost.read`: a replica's read-only
 * pool, one retry elsewhere after a connection error); other statements, cursors, `forEach` and
 * streams check a connection out for the statement and give it back when it completes; with
 * routemate's read-only guard on read-only connections, passive health and `queryTimeoutMs`
 * (not for cursors). `sql.begin(options?, fn)` is `router.transaction` (its `'read only'`,
 * `'read write'` and isolation level options taken as its options): on the primary, or inside a
 * `readOnly` scope a read-only transaction on a replica; nested in a transaction it is a
 * savepoint, and so is the transaction `sql`'s `savepoint(fn)`. `sql.reserve()` checks out one
 * connection by the caller's scope (inside a transaction: the transaction's own, whose `release()`
 * leaves it alone). `sql.notify` is a routed write; `sql.end()` closes the router. Not available
 * (they throw): `listen`, `subscribe`, `file`, `largeObject`.
 */
export function createRoutedSql(template: postgres.Sql, host: FacadeHost<PostgresConn>): RoutedSql {
  const QueryClass = (template.unsafe('') as unknown as Q).constructor as unknown as QueryCtor
  const Routed = routedQueryClass(QueryClass)

  const isQuery = (x: unknown): x is Q => x instanceof (QueryClass as unknown as new () => object)

  /** Whether a tagged query's argument changes the statement's text (a fragment or an identifier), unlike a value or a builder. */
  const inlined = (arg: unknown): boolean =>
    isQuery(arg) ||
    (arg !== null &&
      typeof arg === 'object' &&
      'value' in arg &&
      (arg as object).constructor?.name === 'Identifier')

  /** The text of each template whose arguments were all values, built once (the same template object comes back on every call). */
  const plainTexts = new WeakMap<readonly string[], string>()

  /** The statement's text as it will be sent (fragments inlined; identifiers quoted; values and builders as parameters), for the read-only guard. */
  const textOf = (q: Q): string => {
    if (!q.tagged) return q.strings[0] ?? ''
    const args = q.args
    let plain = true
    for (let i = 0; i < args.length; i++) {
      if (inlined(args[i])) {
        plain = false
        break
      }
    }
    if (plain) {
      let text = plainTexts.get(q.strings)
      if (text === undefined) {
        text = buildText(q)
        plainTexts.set(q.strings, text)
      }
      return text
    }
    return buildText(q)
  }

  const buildText = (q: Q): string => {
    let out = q.strings[0] ?? ''
    for (let i = 1; i < q.strings.length; i++) {
      const arg = q.args[i - 1]
      let piece = '$1'
      if (isQuery(arg)) piece = textOf(arg)
      else if (inlined(arg)) piece = String((arg as { value: unknown }).value)
      out += ` ${piece} ${q.strings[i]}`
    }
    return out
  }

  const canceller = (q: Q): Promise<void> => {
    const conn = q.rmConn
    const state = q.state
    if (
      conn === undefined ||
      state == null ||
      typeof state.pid !== 'number' ||
      typeof state.secret !== 'number'
    ) {
      if (!q.executed || conn === undefined) {
        q.cancelled = true
        q.reject(cancelledError())
      }
      return Promise.resolve()
    }
    return sendCancelRequest(
      { pid: state.pid, secret: state.secret, host: conn.host, port: conn.port },
      AbortSignal.timeout(30_000),
    ).then(() => undefined)
  }

  /**
   * Runs `q` on `sc`: the read-only guard and transaction-control translation, then postgres.js's
   * own handler of the connection; `settled(err)` once it completed (before the caller sees it).
   */
  const runOn = (sc: ScopedConnection<PostgresConn>, q: Q, settled: (err: unknown) => void): void => {
    let res = q.resolve
    let rej = q.reject
    if (q.cancelled) {
      settled(undefined)
      return
    }
    const conn = sc.conn
    try {
      if (conn.broken) throw connectionLost()
      const text = textOf(q)
      sc.check(text, q.options.simple !== true)
      const translated = sc.translate(text)
      if (translated !== text) {
        const strings = Object.assign([translated], { raw: [translated] })
        q.strings = strings
        q.args = []
      }
    } catch (err) {
      settled(err)
      rej(sc.fail(err))
      return
    }
    const finish = (err: unknown, value?: unknown): void => {
      settled(err)
      if (err == null) res(value)
      else rej(sc.fail(err))
    }
    const cursor = q.cursorRows !== undefined || q.cursorFn !== undefined
    if (!cursor) {
      const done = sc.timed<unknown>(finish)
      q.resolve = (x: unknown) => done(null, x)
      q.reject = (e: unknown) => done(e ?? new Error('query failed'))
    } else {
      // postgres.js's cursor() replaces resolve/reject on each step: keep the latest, route through `finish`.
      Object.defineProperty(q, 'resolve', {
        configurable: true,
        get: () => (x: unknown) => finish(null, x),
        set: (f: (x: unknown) => void) => {
          res = f
        },
      })
      Object.defineProperty(q, 'reject', {
        configurable: true,
        get: () => (e: unknown) => finish(e ?? new Error('query failed')),
        set: (f: (e: unknown) => void) => {
          rej = f
        },
      })
    }
    q.rmConn = conn
    conn.current = q
    connHandler(conn)(q)
  }

  /** A `sql` whose queries go to `dispatch`. */
  const makeSql = (dispatch: Handler, pinned: Pinned | undefined): RoutedSql => {
    dispatch.debug = false
    const sql = ((strings: unknown, ...args: unknown[]) => {
      if (Array.isArray(strings) && Array.isArray((strings as { raw?: unknown }).raw)) {
        const q = newQuery(Routed, strings as readonly string[], args, dispatch, canceller)
        if (pinned === undefined) q.rmScope = host.captureScope()
        return q
      }
      return (template as unknown as (...a: unknown[]) => unknown)(strings, ...args)
    }) as unknown as RoutedSql & Record<string, unknown>
    const unsafe = (string: string, args: unknown = [], options: Record<string, unknown> = {}) => {
      let a = args
      let o = options
      if (!Array.isArray(a)) {
        o = (a ?? {}) as Record<string, unknown>
        a = []
      }
      const list = a as unknown[]
      const q = newQuery(Routed, [string], list, dispatch, canceller, {
        prepare: false,
        ...o,
        simple: 'simple' in o ? o.simple : list.length === 0,
      })
      if (pinned === undefined) q.rmScope = host.captureScope()
      return q
    }
    const t = template as unknown as Record<string, unknown>
    const unsupported = (name: string) => () => {
      throw new TypeError(`router.sql(): ${name} is not available through routemate`)
    }
    Object.assign(sql, {
      unsafe,
      types: t.types,
      typed: t.typed,
      array: t.array,
      json: t.json,
      options: t.options,
      parameters: {},
      PostgresError: t.PostgresError,
      CLOSE: t.CLOSE,
      END: t.END,
      notify: (channel: string, payload: string) => sql`select pg_notify(${channel}, ${String(payload)})`,
      begin,
      reserve,
      listen: unsupported('listen'),
      subscribe: unsupported('subscribe'),
      file: unsupported('file'),
      largeObject: unsupported('largeObject'),
      end: () => host.close(),
      close: () => host.close(),
    })
    if (pinned !== undefined) {
      Object.assign(sql, {
        savepoint: (name: unknown, fn?: unknown) => {
          const f = (typeof name === 'function' ? name : fn) as (s: RoutedSql) => unknown
          return host.transaction(() => runBody(f), {})
        },
        prepare: unsupported('prepare (two-phase commit)'),
      })
    }
    return sql
  }

  /** Runs a `begin`/`savepoint` body with the transaction's `sql` (checked out inside the transaction's scope). */
  const runBody = async (fn: (s: RoutedSql) => unknown): Promise<unknown> => {
    const sc = await host.connect()
    const x = fn(pinnedSql(sc))
    return Array.isArray(x) ? Promise.all(x) : x
  }

  const pinnedSql = (sc: ScopedConnection<PostgresConn>): RoutedSql => {
    const handler: Handler = (q) => runOn(sc, q, noop)
    return makeSql(handler, { sc })
  }

  function begin(options: unknown, fn?: unknown): Promise<unknown> {
    let text = options
    let body = fn
    if (body === undefined) {
      body = options
      text = ''
    }
    if (typeof body !== 'function') return Promise.reject(new TypeError('sql.begin(): expected a function'))
    let opts: { readOnly?: boolean; isolation?: IsolationLevel }
    try {
      opts = beginOptionsOf(typeof text === 'string' ? text : '')
    } catch (err) {
      return Promise.reject(err)
    }
    return host.transaction(() => runBody(body as (s: RoutedSql) => unknown), opts)
  }

  async function reserve(): Promise<RoutedSql> {
    const sc = await host.connect()
    const r = pinnedSql(sc) as RoutedSql & { release: () => void }
    r.release = () => sc.release(sc.conn.broken)
    return r
  }

  /**
   * The routed handler, by the scope the query was built in: a read outside a transaction runs as
   * `router.query` runs it (`FacadeHost.read`: one job on the chosen replica, retried elsewhere
   * after a connection error); anything else — writes, cursors, `forEach` and streams (whose
   * rows may have reached the caller before a failure) — checks a connection out for the statement.
   */
  const routed: Handler = (q) => {
    if (
      host.read !== undefined &&
      q.cursorRows === undefined &&
      q.cursorFn === undefined &&
      q.forEachFn === undefined &&
      q.streaming !== true &&
      !q.cancelled
    ) {
      const stmt = new RoutedStatementOf(textOf(q), q.options.simple === true ? SIMPLE : EXTENDED, q)
      if (host.read(q.rmScope, stmt as unknown as Statement, q.resolve, q.reject)) return
    }
    host.connect(q.rmScope).then(
      (sc) =>
        runOn(sc, q, (err) => {
          const destroy = sc.conn.broken || (err != null && classifyPostgresError(err) === 'connection')
          sc.release(destroy)
        }),
      (err: unknown) => q.reject(err),
    )
  }

  return makeSql(routed, undefined)
}

const noop = (): void => {}
