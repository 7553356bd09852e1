import type pg from 'pg'
import type { FacadeHost, ScopedConnection } from '../router/facade-host.js'
import { markPoolEnding } from './pg-internals.js'

type Callback = (err: Error | null, res?: unknown) => void

function isSubmittable(x: unknown): x is { submit: unknown; text?: string } {
  return typeof x === 'object' && x !== null && typeof (x as { submit?: unknown }).submit === 'function'
}

function textOfConfig(config: unknown): string {
  if (typeof config === 'string') return config
  if (typeof config === 'object' && config !== null) {
    const t = (config as { text?: unknown }).text
    if (typeof t === 'string') return t
  }
  return ''
}

/** Whether a query has parameters (pg then uses the extended protocol: one statement only). */
function hasValues(config: unknown, values: unknown): boolean {
  const v =
    values ??
    (typeof config === 'object' && config !== null ? (config as { values?: unknown }).values : undefined)
  return Array.isArray(v) && v.length > 0
}

/** Replaces the text of a query (string or config object) without mutating the caller's object. */
function withText(config: unknown, text: string): unknown {
  if (typeof config === 'string') return text
  return { ...(config as object), text }
}

/** The facade's face of one physical `pg.Client`, kept for the client's lifetime. */
interface Wrapped {
  /** The `pg.PoolClient` handed out at every checkout of this client. */
  readonly client: pg.PoolClient
  /** The current (or last) checkout: `query` and `release` act on it. */
  sc: ScopedConnection<pg.Client>
  /** Whether it is checked out (between `connect()` and `release()`). */
  out: boolean
  /** `release` of the current checkout (a new function per checkout, as pg sets one). */
  release: (err?: unknown) => void
}

/**
 * Wraps a physical `pg.Client` as a `pg.PoolClient` for the facade, once: every later checkout of
 * the same client hands out the same object (libraries that recognise a connection by identity,
 * such as Kysely's `onCreateConnection`, see one connection). `query` keeps pg's overloads
 * (promise or callback, text or config, submittables such as cursors) with routemate's read-only
 * guard, passive health and `queryTimeoutMs` (not for submittables), all of the current checkout;
 * `release(err?)` gives it back (destroying it on an error, as pg does). Everything else is the
 * real client.
 */
function wrapClient(sc: ScopedConnection<pg.Client>, released: (w: Wrapped, err: unknown) => void): Wrapped {
  const client = sc.conn
  const query = (config: unknown, values?: unknown, cb?: unknown): unknown => {
    const sc = w.sc
    if (typeof values === 'function') {
      cb = values
      values = undefined
    }
    const callback = typeof cb === 'function' ? (cb as Callback) : undefined
    const text = textOfConfig(config)
    let sent: unknown
    try {
      sc.check(text, hasValues(config, values))
      const translated = sc.translate(text)
      sent = translated === text ? config : withText(config, translated)
    } catch (err) {
      if (callback) {
        process.nextTick(() => callback(err as Error))
        return undefined
      }
      return Promise.reject(err)
    }
    if (isSubmittable(sent)) return (client.query as (q: unknown) => unknown)(sent)
    // Bounded by the node's queryTimeoutMs (cancelled on the server when it passes).
    const p = new Promise<unknown>((resolve, reject) => {
      const done = sc.timed<unknown>((err, res) => (err == null ? resolve(res) : reject(err)))
      ;(client.query as (q: unknown, v: unknown, cb: Callback) => void)(sent, values, done as Callback)
    }).catch((err: unknown) => {
      throw sc.fail(err)
    })
    if (callback) {
      p.then(
        (res) => callback(null, res),
        (err: Error) => callback(err),
      )
      return undefined
    }
    return p
  }
  const proxy = new Proxy(client as pg.PoolClient, {
    get(target, prop) {
      if (prop === 'query') return query
      if (prop === 'release') return w.release
      const v = Reflect.get(target, prop, target) as unknown
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
    },
  })
  const w: Wrapped = { client: proxy, sc, out: true, release: () => {} }
  checkOut(w, sc, released)
  return w
}

/** Makes `w` the face of a new checkout `sc`: its `release` gives back that checkout, once. */
function checkOut(
  w: Wrapped,
  sc: ScopedConnection<pg.Client>,
  released: (w: Wrapped, err: unknown) => void,
): void {
  w.sc = sc
  w.out = true
  let done = false
  w.release = (err?: unknown) => {
    if (done) return
    done = true
    if (w.sc === sc) w.out = false
    sc.release(err !== undefined && err !== false && err !== null)
    released(w, err)
  }
}

const classes = new WeakMap<object, new (host: FacadeHost<pg.Client>) => pg.Pool>()

function facadeClass(lib: typeof pg): new (host: FacadeHost<pg.Client>) => pg.Pool {
  const cached = classes.get(lib)
  if (cached !== undefined) return cached

  /**
   * A `pg.Pool` (it is `instanceof pg.Pool`, so libraries that check for one accept it) whose
   * `query` and `connect` are routed by the caller's routemate scope.
   */
  class RoutedPgPool extends lib.Pool {
    readonly #host: FacadeHost<pg.Client>
    /** One wrapper per physical client, for its lifetime. */
    readonly #wrappers = new WeakMap<pg.Client, Wrapped>()
    /** Errors raised by a client this facade has handed out, with its wrapper (for `'error'`). */
    readonly #errorClients = new WeakMap<object, pg.PoolClient>()
    readonly #released = (w: Wrapped, err: unknown): void => {
      this.emit('release', err, w.client)
    }

    constructor(host: FacadeHost<pg.Client>) {
      super({ max: 1 })
      this.#host = host
      host.onError((err) => {
        // After the client's own 'error' listeners (the wrapper's, below, among them) have run.
        queueMicrotask(() => {
          if (this.listenerCount('error') === 0) return
          const client = typeof err === 'object' && err !== null ? this.#errorClients.get(err) : undefined
          this.emit('error', err, client)
        })
      })
    }

    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads
    override query(config: any, values?: any, cb?: any): any {
      if (typeof values === 'function') {
        cb = values
        values = undefined
      }
      const p = this.#host.query(config, values)
      if (typeof cb === 'function') {
        p.then(
          (res) => cb(null, res),
          (err: unknown) => cb(err),
        )
        return undefined
      }
      return p
    }

    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads
    override connect(cb?: any): any {
      const p = this.#host.connect().then((sc) => this.#wrap(sc))
      if (typeof cb === 'function') {
        p.then(
          (client) => cb(null, client, (err?: unknown) => client.release(err as Error)),
          (err: unknown) => cb(err),
        )
        return undefined
      }
      return p
    }

    /** The wrapper of a checkout: the client's own (made, with `'connect'`, at its first checkout). */
    #wrap(sc: ScopedConnection<pg.Client>): pg.PoolClient {
      const physical = sc.conn
      let w = this.#wrappers.get(physical)
      if (w === undefined) {
        w = wrapClient(sc, this.#released)
        this.#wrappers.set(physical, w)
        const client = w.client
        physical.on('error', (err: unknown) => {
          if (typeof err === 'object' && err !== null) this.#errorClients.set(err, client)
        })
        physical.once('end', () => this.emit('remove', client))
        this.emit('connect', client)
      } else if (w.out) {
        // A transaction's client checked out again while in use (concurrent work in one
        // `router.transaction`): a wrapper of its own, so each checkout keeps its own release.
        const own = wrapClient(sc, this.#released)
        this.emit('acquire', own.client)
        return own.client
      } else {
        checkOut(w, sc, this.#released)
      }
      this.emit('acquire', w.client)
      return w.client
    }

    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads
    override end(cb?: any): any {
      markPoolEnding(this)
      const p = this.#host.close()
      if (typeof cb === 'function') {
        p.then(() => cb(), cb)
        return undefined
      }
      return p
    }

    // @ts-expect-error pg declares it a property; here it is the live sum over the router's nodes
    override get totalCount(): number {
      return this.#host.counts().total
    }

    // @ts-expect-error as above
    override get idleCount(): number {
      return this.#host.counts().idle
    }

    // @ts-expect-error as above
    override get waitingCount(): number {
      return this.#host.counts().waiting
    }
  }
  classes.set(lib, RoutedPgPool)
  return RoutedPgPool
}

/**
 * Builds `router.pool()` for the pg driver: a real `pg.Pool` subclass whose `query` and `connect`
 * are routed by the caller's scope. `connect()` inside `router.transaction` returns the
 * transaction's connection (its `release` is a no-op and its BEGIN/COMMIT/ROLLBACK become
 * savepoints, so the outermost transaction wins). `end()` closes the router.
 *
 * Connections keep their identity: every checkout of one physical `pg.Client` hands out the same
 * `pg.PoolClient` object for the client's lifetime. Events, as `pg.Pool` emits them: `connect`
 * (client; a physical client's first checkout), `acquire` (client; every checkout), `release`
 * (err, client; every release), `remove` (client; a client handed out before has closed), `error`
 * (err, client?; a background error such as an idle client dying on the server, with its client
 * when the facade handed it out; emitted only while someone listens, so never an unhandled
 * `'error'`). `pool.query()` goes through the router without a checkout and emits none of them.
 *
 * @example
 * ```ts
 * const pool = createPgPoolFacade(pg, host)
 * pool.on('error', (err) => log.warn({ err }, 'idle connection lost'))
 * ```
 */
export function createPgPoolFacade(lib: typeof pg, host: FacadeHost<pg.Client>): pg.Pool {
  const Ctor = facadeClass(lib)
  return new Ctor(host)
}
