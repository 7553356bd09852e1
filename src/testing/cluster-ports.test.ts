import net from 'node:net'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import { checkPortsOption, clusterNodeNames, resolveClusterPorts } from './cluster-ports.js'
import { freePorts } from './process-control/index.js'

const NODES = clusterNodeNames(2)

function configError(fn: () => unknown): { path: string; message: string } {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return { path: (err as ConfigError).path, message: (err as ConfigError).message }
  }
  throw new Error('did not throw')
}

describe('the ports option', () => {
  it('names the nodes primary, replica1, replica2...', () => {
    expect(NODES).toEqual(['primary', 'replica1', 'replica2'])
    expect(clusterNodeNames(0)).toEqual(['primary'])
  })

  it('accepts one distinct unprivileged port per node, or none', () => {
    expect(() => checkPortsOption(undefined, NODES)).not.toThrow()
    expect(() => checkPortsOption([40001, 40002, 65535], NODES)).not.toThrow()
  })

  it('rejects a wrong shape with a ConfigError naming ports or ports[i]', () => {
    expect(configError(() => checkPortsOption(5433, NODES))).toEqual({
      path: 'ports',
      message:
        'ports: expected an array of 3 (one per node: primary, replica1, replica2) port numbers, got number',
    })
    expect(configError(() => checkPortsOption([40001, 40002], NODES))).toEqual({
      path: 'ports',
      message: 'ports: expected 3 (one per node: primary, replica1, replica2) ports, got 2',
    })
    expect(configError(() => checkPortsOption([40001, 40002.5, 40003], NODES)).path).toBe('ports[1]')
    expect(configError(() => checkPortsOption([40001, 40002, '40003'], NODES)).path).toBe('ports[2]')
    expect(configError(() => checkPortsOption([80, 40002, 40003], NODES))).toEqual({
      path: 'ports[0]',
      message: 'ports[0]: expected an integer from 1024 to 65535, got 80',
    })
    expect(configError(() => checkPortsOption([40001, 40002, 40001], NODES))).toEqual({
      path: 'ports[2]',
      message: 'ports[2]: port 40001 is also ports[0]: each node needs its own',
    })
  })

  it('resolveClusterPorts picks free ports by default and refuses a taken one, naming its node', async () => {
    const picked = await resolveClusterPorts(undefined, NODES)
    expect(new Set(picked).size).toBe(3)
    const [a = 0, b = 0, c = 0] = await freePorts(3)
    expect(await resolveClusterPorts([a, b, c], NODES)).toEqual([a, b, c])
    const server = net.createServer()
    await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: b }, resolve))
    try {
      const err = await resolveClusterPorts([a, b, c], NODES).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ConfigError)
      expect(err).toMatchObject({
        path: 'ports[1]',
        message: `ports[1]: port ${b} (for replica1) on 127.0.0.1 is in use: pick another, or leave \`ports\` out to get free ports`,
      })
    } finally {
      await new Promise((r) => server.close(r))
    }
  })
})
