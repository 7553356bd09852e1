import { describe, expect, it } from 'vitest'
import { LookupResolver } from './lookup-resolver.js'
import type { ShardKey } from './shard-resolver.js'

const SHARDS = Object.freeze(['eu', 'us', 'ap'])

describe('LookupResolver', () => {
  it("is named 'lookup'", () => {
    expect(new LookupResolver({}).name).toBe('lookup')
  })

  describe('a Map', () => {
    const map = new Map<ShardKey, string>([
      ['acme', 'eu'],
      [42, 'us'],
      [7n, 'ap'],
    ])
    const r = new LookupResolver(map)

    it('looks keys up by value and type', () => {
      expect(r.resolve('acme', SHARDS)).toBe('eu')
      expect(r.resolve(42, SHARDS)).toBe('us')
      expect(r.resolve(7n, SHARDS)).toBe('ap')
    })

    it('throws an Error for a missing key, with a hint when the Map has it under another type', () => {
      expect(() => r.resolve('globex', SHARDS)).toThrow(new Error("no shard for key 'globex' in the lookup"))
      expect(() => r.resolve('42', SHARDS)).toThrow(
        "no shard for key '42' in the lookup (the Map has 42, a number: Map keys are compared by type)",
      )
      expect(() => r.resolve(42n, SHARDS)).toThrow('(the Map has 42, a number')
      expect(() => r.resolve(7, SHARDS)).toThrow('(the Map has 7n, a bigint')
    })

    it('reads the Map live: entries added later are found', () => {
      const live = new Map<ShardKey, string>()
      const lr = new LookupResolver(live)
      expect(() => lr.resolve('new', SHARDS)).toThrow(Error)
      live.set('new', 'ap')
      expect(lr.resolve('new', SHARDS)).toBe('ap')
    })
  })

  describe('an object', () => {
    const r = new LookupResolver({ acme: 'eu', '42': 'us' })

    it('looks keys up by their string form (42, "42" and 42n are the same key)', () => {
      expect(r.resolve('acme', SHARDS)).toBe('eu')
      expect(r.resolve(42, SHARDS)).toBe('us')
      expect(r.resolve('42', SHARDS)).toBe('us')
      expect(r.resolve(42n, SHARDS)).toBe('us')
    })

    it('uses own properties only', () => {
      for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
        expect(() => r.resolve(key, SHARDS)).toThrow(`no shard for key '${key}' in the lookup`)
      }
      const withNull = new LookupResolver(Object.assign(Object.create(null), { x: 'eu' }))
      expect(withNull.resolve('x', SHARDS)).toBe('eu')
    })

    it('throws an Error for a missing key', () => {
      expect(() => r.resolve('globex', SHARDS)).toThrow(new Error("no shard for key 'globex' in the lookup"))
    })
  })

  describe('a sync function', () => {
    it('returns its answer synchronously', () => {
      const r = new LookupResolver((key) => (String(key).startsWith('eu-') ? 'eu' : 'us'))
      expect(r.resolve('eu-1', SHARDS)).toBe('eu')
      expect(r.resolve(5, SHARDS)).toBe('us')
    })

    it('throws an Error when it answers undefined or null', () => {
      const r = new LookupResolver(() => undefined as unknown as string)
      expect(() => r.resolve('x', SHARDS)).toThrow(new Error("no shard for key 'x' in the lookup"))
      const n = new LookupResolver(() => null as unknown as string)
      expect(() => n.resolve(3n, SHARDS)).toThrow('no shard for key 3n in the lookup')
    })

    it('passes its own errors through untouched', () => {
      const boom = new Error('directory down')
      const r = new LookupResolver(() => {
        throw boom
      })
      expect(() => r.resolve('x', SHARDS)).toThrow(boom)
    })
  })

  describe('an async function', () => {
    it('returns a promise of its checked answer', async () => {
      const r = new LookupResolver(async (key) => (key === 'acme' ? 'eu' : 'ap'))
      const answer = r.resolve('acme', SHARDS)
      expect(answer).toBeInstanceOf(Promise)
      await expect(answer).resolves.toBe('eu')
      await expect(r.resolve('other', SHARDS)).resolves.toBe('ap')
    })

    it('rejects when it answers undefined, or an unknown shard', async () => {
      const missing = new LookupResolver(async () => undefined as unknown as string)
      await expect(missing.resolve('x', SHARDS)).rejects.toThrow("no shard for key 'x' in the lookup")
      const unknown = new LookupResolver(async () => 'mars')
      await expect(unknown.resolve('x', SHARDS)).rejects.toThrow(
        "the lookup gave 'mars' for key 'x', which is not a configured shard ('eu', 'us', 'ap')",
      )
    })

    it('passes its own rejection through untouched', async () => {
      const boom = new Error('directory down')
      const r = new LookupResolver(async () => {
        throw boom
      })
      await expect(r.resolve('x', SHARDS)).rejects.toBe(boom)
    })
  })

  describe('unknown shards', () => {
    it('throws an Error when a Map, an object or a function names one', () => {
      const message = "the lookup gave 'mars' for key 'x', which is not a configured shard ('eu', 'us', 'ap')"
      expect(() => new LookupResolver(new Map([['x', 'mars']])).resolve('x', SHARDS)).toThrow(message)
      expect(() => new LookupResolver({ x: 'mars' }).resolve('x', SHARDS)).toThrow(message)
      expect(() => new LookupResolver(() => 'mars').resolve('x', SHARDS)).toThrow(message)
      expect(() => new LookupResolver(() => 42 as unknown as string).resolve('x', SHARDS)).toThrow(
        "the lookup gave 42 for key 'x'",
      )
    })

    it('checks membership with long shard lists too', () => {
      const many = Object.freeze(Array.from({ length: 100 }, (_, i) => `s${i}`))
      const r = new LookupResolver((key) => `s${key}`)
      expect(r.resolve(99, many)).toBe('s99')
      expect(() => r.resolve(100, many)).toThrow("'s0', 's1',")
      expect(() => r.resolve(100, many)).toThrow('… (100 in all)')
    })

    it('validate checks every entry of a Map or object at startup', () => {
      expect(() => new LookupResolver({ acme: 'eu', globex: 'mars' }).validate(SHARDS)).toThrow(
        new Error("lookup['globex'] is 'mars', which is not a configured shard ('eu', 'us', 'ap')"),
      )
      expect(() => new LookupResolver(new Map([[42, 'mars']])).validate(SHARDS)).toThrow('lookup[42] is')
      expect(() => new LookupResolver({ acme: 'eu' }).validate(SHARDS)).not.toThrow()
      expect(() => new LookupResolver(() => 'mars').validate(SHARDS)).not.toThrow() // checked per call
    })
  })

  it('rejects an invalid lookup and invalid keys with a TypeError', () => {
    for (const bad of [undefined, null, 'eu', 42, ['eu']]) {
      expect(() => new LookupResolver(bad as unknown as Record<string, string>)).toThrow(TypeError)
    }
    const r = new LookupResolver(() => 'eu')
    for (const bad of [undefined, null, {}, true]) {
      expect(() => r.resolve(bad as unknown as string, SHARDS)).toThrow(TypeError)
    }
  })
})
