import type { Router } from '../router/router.js'
import { NoRouterError } from './no-router-error.js'

/** Where a decorator gets its router: the router itself, or a function returning it (called on every call). */
export type RouterSource = Router | (() => Router)

interface Registration {
  readonly router: Router
}

/** Shared through `globalThis` so the ESM and the CommonJS copy of routemate see one registry. */
const REGISTRY = Symbol.for('routemate.decorators.routers')

function registrations(): Registration[] {
  const g = globalThis as { [REGISTRY]?: Registration[] }
  g[REGISTRY] ??= []
  return g[REGISTRY]
}

/**
 * Registers the router the routemate decorators use when they are given no `router` option.
 * Returns the function that unregisters it (idempotent).
 *
 * Registrations stack: the last one registered and not yet unregistered wins, and unregistering
 * it brings back the one before (handy for tests and for several Nest applications in one
 * process). `RoutemateModule` calls this itself when it initialises and undoes it on shutdown.
 * The registry is process-wide (shared by the ESM and CommonJS builds). A scope belongs to one
 * router: with several routers in a process, a decorator that opens its scope on the registered
 * router does not route queries sent through another one, so pass the `router` option there.
 *
 * @example
 * ```ts
 * const router = createRouter({ driver: pgDriver(), primary, replicas })
 * const unregister = useRouter(router)
 * class Users { @ReadOnly() find(id: number) { return router.query('SELECT ...', [id]) } }
 * // ... later
 * unregister()
 * ```
 */
export function useRouter(router: Router): () => void {
  if (router === null || typeof router !== 'object' || typeof router.transaction !== 'function') {
    throw new TypeError(`useRouter: expected a Router (from createRouter), got ${String(router)}`)
  }
  const entry: Registration = { router }
  const list = registrations()
  list.push(entry)
  let registered = true
  return () => {
    if (!registered) return
    registered = false
    const i = list.lastIndexOf(entry)
    if (i !== -1) list.splice(i, 1)
  }
}

/**
 * The router a decorated method uses: its explicit source, else the registered one.
 * Throws `NoRouterError` when there is none. Internal to the decorators.
 */
export function resolveRouter(source: RouterSource | undefined, decorator: string, method: string): Router {
  const router = typeof source === 'function' ? source() : (source ?? registrations().at(-1)?.router)
  if (router === undefined || router === null) throw new NoRouterError(decorator, method)
  return router
}
