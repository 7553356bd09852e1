import type { EventEmitter } from 'node:events'

/** The core connection events a wrapper re-emits while it is checked out (and only when listened to). */
const RELAYED: ReadonlySet<string | symbol> = new Set<string | symbol>(['error', 'end', 'drain', 'enqueue'])

/** Turns a {@link relayEvents} relay on (at each checkout) and off (at each release). */
export interface EventRelay {
  /** Relays every event the wrapper has listeners for, and each one it gets a listener for later. */
  arm(): void
  /** Stops relaying (the core connection goes back to the pool, its events are not the wrapper's user's). */
  disarm(): void
}

/**
 * Re-emits a mysql2 core connection's `error`, `end`, `drain` and `enqueue` events on a wrapper
 * while it is armed (checked out), attaching to the core connection only for events the wrapper
 * has listeners for (so an `error` never goes unhandled because of routemate). The wrapper lives as
 * long as the core connection (one per physical connection): its listeners stay across checkouts
 * and are served again at the next `arm()`.
 *
 * @example
 * ```ts
 * const relay = relayEvents(core, wrapper)
 * relay.arm()    // on checkout
 * relay.disarm() // on release
 * ```
 */
export function relayEvents(source: EventEmitter, target: EventEmitter): EventRelay {
  const attached = new Map<string | symbol, (...args: unknown[]) => void>()
  let armed = false
  const attach = (name: string | symbol): void => {
    if (!armed || !RELAYED.has(name) || attached.has(name)) return
    const relay = (...args: unknown[]) => target.emit(name, ...args)
    attached.set(name, relay)
    source.on(name, relay)
  }
  target.on('newListener', attach)
  return {
    arm() {
      armed = true
      for (const name of RELAYED) if (target.listenerCount(name) > 0) attach(name)
    },
    disarm() {
      armed = false
      for (const [name, relay] of attached) source.off(name, relay)
      attached.clear()
    },
  }
}
