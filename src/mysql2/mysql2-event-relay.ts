import type { EventEmitter } from 'node:events'

/** The core connection events a wrapper re-emits while it is checked out (and only when listened to). */
const RELAYED = new Set<string | symbol>(['error', 'end', 'drain', 'enqueue'])

/**
 * Re-emits a mysql2 core connection's `error`, `end`, `drain` and `enqueue` events on a wrapper,
 * attaching to the core connection only once the wrapper gets a listener for one of them (so an
 * `error` never goes unhandled because of routemate). Pushes one detach function per attached
 * relay to `detachers`: call them when the wrapper is released, since the core connection is
 * reused by later checkouts.
 *
 * @example
 * ```ts
 * const detachers: (() => void)[] = []
 * relayEvents(core, wrapper, detachers)
 * // on release:
 * for (const d of detachers.splice(0)) d()
 * ```
 */
export function relayEvents(source: EventEmitter, target: EventEmitter, detachers: (() => void)[]): void {
  const attached = new Set<string | symbol>()
  target.on('newListener', (name: string | symbol) => {
    if (!RELAYED.has(name) || attached.has(name)) return
    attached.add(name)
    const relay = (...args: unknown[]) => target.emit(name, ...args)
    source.on(name, relay)
    detachers.push(() => {
      source.off(name, relay)
      attached.delete(name)
    })
  })
}
