import { ConfigError } from '../errors/config-error.js'
import { freePorts, portProblem } from './process-control/index.js'

/** Lowest port accepted in a `ports` option: the servers run unprivileged. */
const MIN_PORT = 1024

/**
 * Checks the shape of the `ports` option of a cluster starter, before anything is created: an array
 * of one port per node (`nodes`: `primary`, `replica1`...), integers from 1024 to 65535, all
 * different. Throws a `ConfigError` naming `ports` or `ports[i]`.
 *
 * @example
 * ```ts
 * checkPortsOption([5433, 5433], ['primary', 'replica1']) // ConfigError: ports[1]: port 5433 is also ports[0] ...
 * ```
 */
export function checkPortsOption(ports: unknown, nodes: readonly string[]): void {
  if (ports === undefined) return
  const expected = `${nodes.length} (one per node: ${nodes.join(', ')})`
  if (!Array.isArray(ports)) {
    throw new ConfigError('ports', `expected an array of ${expected} port numbers, got ${typeof ports}`)
  }
  if (ports.length !== nodes.length) {
    throw new ConfigError('ports', `expected ${expected} ports, got ${ports.length}`)
  }
  const seen = new Map<number, number>()
  for (const [i, port] of (ports as unknown[]).entries()) {
    if (typeof port !== 'number' || !Number.isInteger(port) || port < MIN_PORT || port > 65_535) {
      throw new ConfigError(
        `ports[${i}]`,
        `expected an integer from ${MIN_PORT} to 65535, got ${String(port)}`,
      )
    }
    const first = seen.get(port)
    if (first !== undefined) {
      throw new ConfigError(`ports[${i}]`, `port ${port} is also ports[${first}]: each node needs its own`)
    }
    seen.set(port, i)
  }
}

/**
 * The port of every node: the `ports` option when given (checked with {@link checkPortsOption}, then
 * each one checked to be free on 127.0.0.1, or a `ConfigError` naming `ports[i]` and the node), else
 * free loopback ports (never 5432 or 3306).
 *
 * @example
 * ```ts
 * const [primary, replica1] = await resolveClusterPorts(options.ports, ['primary', 'replica1'])
 * ```
 */
export async function resolveClusterPorts(
  ports: readonly number[] | undefined,
  nodes: readonly string[],
): Promise<number[]> {
  if (ports === undefined) return freePorts(nodes.length)
  checkPortsOption(ports, nodes)
  for (const [i, port] of ports.entries()) {
    const problem = await portProblem(port)
    if (problem !== undefined) {
      throw new ConfigError(
        `ports[${i}]`,
        `port ${port} (for ${nodes[i]}) on 127.0.0.1 is ${problem}: pick another, or leave \`ports\` out to get free ports`,
      )
    }
  }
  return [...ports]
}

/**
 * Node names of a cluster with `replicas` replicas: `primary`, `replica1`, `replica2`...
 *
 * @example
 * ```ts
 * clusterNodeNames(2) // ['primary', 'replica1', 'replica2']
 * ```
 */
export function clusterNodeNames(replicas: number): string[] {
  return ['primary', ...Array.from({ length: replicas }, (_, i) => `replica${i + 1}`)]
}
