import { describe, expect, it } from 'vitest'
import { FunctionResolver } from './function-resolver.js'

describe('FunctionResolver', () => {
  it('takes an explicit name', () => {
    expect(new FunctionResolver(() => 's0', 'first').name).toBe('first')
  })

  it('passes the key and the shard names to the function', () => {
    const calls: unknown[][] = []
    const names = Object.freeze(['s0', 's1'])
    const r = new FunctionResolver((key, shardNames) => {
      calls.push([key, shardNames])
      return 's1'
    })
    expect(r.resolve(7n, names)).toBe('s1')
    expect(calls).toEqual([[7n, names]])
    expect(calls[0]![1]).toBe(names)
  })

  it('checks the key before calling the function', () => {
    let called = false
    const r = new FunctionResolver(() => {
      called = true
      return 's0'
    })
    expect(() => r.resolve(undefined as unknown as string, ['s0'])).toThrow(TypeError)
    expect(called).toBe(false)
  })

  it('passes the function’s own errors through untouched', async () => {
    const boom = new Error('boom')
    expect(() =>
      new FunctionResolver(() => {
        throw boom
      }).resolve('x', ['s0']),
    ).toThrow(boom)
    await expect(new FunctionResolver(() => Promise.reject(boom)).resolve('x', ['s0'])).rejects.toBe(boom)
  })

  it('rejects a non-function with a TypeError', () => {
    expect(() => new FunctionResolver('hash' as unknown as () => string)).toThrow(
      "invalid sharding function ('hash'): expected a function",
    )
  })
})
