/** A node's health state: `up` (in use), `suspect` (recent failure, still in use), `down` (not used until a probe succeeds). */
export type NodeState = 'up' | 'suspect' | 'down'

/**
 * The health state machine of one node: `up` → `suspect` → `down` → (probes succeed) → `up`.
 * Failures (failed probes and connection errors of real queries) and successes (probes) are
 * counted consecutively; `failureThreshold` failures in a row mark the node down, and a down node
 * needs `successThreshold` successful probes in a row to come back. Pure logic, no timers.
 *
 * @example
 * ```ts
 * const h = new NodeHealth(2, 1)
 * h.failure() // 'suspect'
 * h.failure() // 'down'
 * h.success() // 'up'
 * ```
 */
export class NodeHealth {
  #state: NodeState = 'up'
  #failures = 0
  #successes = 0
  readonly #failureThreshold: number
  readonly #successThreshold: number

  constructor(failureThreshold: number, successThreshold: number) {
    this.#failureThreshold = failureThreshold
    this.#successThreshold = successThreshold
  }

  /** The current state. */
  get state(): NodeState {
    return this.#state
  }

  /** Consecutive failures counted so far (reset by a success). */
  get failures(): number {
    return this.#failures
  }

  /** Records a success; returns the new state if it changed, else `undefined`. */
  success(): NodeState | undefined {
    this.#failures = 0
    if (this.#state === 'down') {
      this.#successes++
      if (this.#successes < this.#successThreshold) return undefined
    }
    this.#successes = 0
    return this.#set('up')
  }

  /** Records a failure; returns the new state if it changed, else `undefined`. */
  failure(): NodeState | undefined {
    this.#successes = 0
    this.#failures++
    return this.#set(this.#failures >= this.#failureThreshold ? 'down' : 'suspect')
  }

  /** Forces the state (e.g. marking a node down at once); returns it if it changed. */
  force(state: NodeState): NodeState | undefined {
    this.#failures = state === 'down' ? this.#failureThreshold : 0
    this.#successes = 0
    return this.#set(state)
  }

  #set(state: NodeState): NodeState | undefined {
    if (state === this.#state) return undefined
    if (this.#state === 'down' && state === 'suspect') return undefined
    this.#state = state
    return state
  }
}
