import net from 'node:net'
import { describe, expect, it } from 'vitest'
import { freePorts, isPortClosed, portProblem } from './ports.js'

function listenOn(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen({ host: '127.0.0.1', port }, () => resolve(server))
  })
}

describe('ports', () => {
  it('freePorts gives distinct bindable ports, never 5432/3306, never the same one twice', async () => {
    const first = await freePorts(4)
    const second = await freePorts(4)
    const all = [...first, ...second]
    expect(new Set(all).size).toBe(8)
    expect(all).not.toContain(5432)
    expect(all).not.toContain(3306)
    for (const port of all) expect(await portProblem(port)).toBeUndefined()
  })

  it('portProblem says "in use" for a port a server listens on; isPortClosed tells refused from open', async () => {
    const [port = 0] = await freePorts(1)
    expect(await isPortClosed(port)).toBe(true)
    const server = await listenOn(port)
    try {
      expect(await portProblem(port)).toBe('in use')
      expect(await isPortClosed(port)).toBe(false)
    } finally {
      await new Promise((r) => server.close(r))
    }
    expect(await portProblem(port)).toBeUndefined()
  })
})
