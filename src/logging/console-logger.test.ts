import { afterEach, describe, expect, it, vi } from 'vitest'
import { consoleLogger } from './console-logger.js'

describe('consoleLogger', () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('maps each level to console with a [routemate] prefix, one line per call', () => {
    const calls: Array<[string, unknown[]]> = []
    for (const m of ['debug', 'info', 'warn', 'error'] as const) {
      vi.spyOn(console, m).mockImplementation((...args: unknown[]) => {
        calls.push([m, args])
      })
    }
    consoleLogger.debug({ event: 'retry' }, 'read retried')
    consoleLogger.info('plain message')
    consoleLogger.warn({ event: 'node:down', node: 'r1' }, 'node "r1" is down')
    consoleLogger.error({ only: 'fields' })
    expect(calls).toEqual([
      ['debug', ['[routemate] read retried']],
      ['info', ['[routemate] plain message']],
      ['warn', ['[routemate] node "r1" is down']],
      ['error', ['[routemate] {"only":"fields"}']],
    ])
  })

  it('survives objects JSON cannot write', () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    consoleLogger.error(cyclic)
    expect(spy).toHaveBeenCalledWith('[routemate] [object Object]')
  })
})
