import { describe, expect, it } from 'vitest'
import { createShardResolver, isShardResolver, SHARDING_STRATEGIES } from './create-shard-resolver.js'
import { FunctionResolver } from './function-resolver.js'
import { HashResolver } from './hash-resolver.js'
import * as sharding from './index.js'
import { JavaHashCodeResolver } from './java-hashcode-resolver.js'
import { JumpResolver } from './jump-resolver.js'
import { LookupResolver } from './lookup-resolver.js'
import { RangeResolver } from './range-resolver.js'
import type { ShardingStrategyName, ShardResolver } from './shard-resolver.js'

const SHARDS = Object.freeze(['s0', 's1'])

describe('SHARDING_STRATEGIES', () => {
  it('lists the four built-ins, frozen', () => {
    expect(SHARDING_STRATEGIES).toEqual(['hash', 'jump', 'range', 'java-hashcode'])
    expect(Object.isFrozen(SHARDING_STRATEGIES)).toBe(true)
  })
})

describe('isShardResolver', () => {
  it('accepts an object with a resolve function', () => {
    expect(isShardResolver({ name: 'x', resolve: () => 's0' })).toBe(true)
    expect(isShardResolver(new HashResolver())).toBe(true)
    expect(isShardResolver(new LookupResolver({}))).toBe(true)
  })

  it('rejects anything else', () => {
    for (const x of [undefined, null, 'hash', 42, {}, { resolve: 'no' }, () => 's0']) {
      expect(isShardResolver(x)).toBe(false)
    }
  })
})

describe('createShardResolver', () => {
  it.each([
    ['hash', HashResolver],
    ['jump', JumpResolver],
    ['java-hashcode', JavaHashCodeResolver],
  ] as const)('makes a new %s resolver on each call', (name, cls) => {
    const one = createShardResolver(name)
    expect(one).toBeInstanceOf(cls)
    expect(one.name).toBe(name)
    expect(createShardResolver(name)).not.toBe(one)
  })

  it("makes a range resolver from options.ranges, and requires them for 'range'", () => {
    const r = createShardResolver('range', {
      ranges: [
        { shard: 's0', to: 10 },
        { shard: 's1', from: 10 },
      ],
    })
    expect(r).toBeInstanceOf(RangeResolver)
    expect(r.resolve(10, SHARDS)).toBe('s1')
    expect(() => createShardResolver('range')).toThrow(
      new TypeError("sharding strategy 'range' needs the ranges option: [{ shard, from?, to? }, ...]"),
    )
  })

  it("passes numberAs to 'java-hashcode' (default 'long')", () => {
    expect((createShardResolver('java-hashcode') as JavaHashCodeResolver).numberAs).toBe('long')
    const asInt = createShardResolver('java-hashcode', { numberAs: 'int' }) as JavaHashCodeResolver
    expect(asInt.numberAs).toBe('int')
    expect(asInt.resolve(-1, ['a', 'b', 'c'])).toBe('c')
  })

  it('refuses an option given to a strategy it does not apply to', () => {
    expect(() => createShardResolver('hash', { ranges: [{ shard: 's0' }] })).toThrow(
      new TypeError("sharding option 'ranges' applies only to strategy 'range', not to 'hash'"),
    )
    expect(() => createShardResolver('range', { ranges: [{ shard: 's0' }], numberAs: 'int' })).toThrow(
      "sharding option 'numberAs' applies only to strategy 'java-hashcode', not to 'range'",
    )
    expect(() => createShardResolver(() => 's0', { numberAs: 'int' })).toThrow('not to a custom resolver')
  })

  it('returns a resolver object as is', () => {
    const custom: ShardResolver = { name: 'first', resolve: (_key, names) => names[0]! }
    expect(createShardResolver(custom)).toBe(custom)
    const lookup = new LookupResolver({ a: 's0' })
    expect(createShardResolver(lookup)).toBe(lookup)
  })

  it("wraps a function, named after it (else 'custom'), checking its answers", async () => {
    function byLength(key: unknown, names: readonly string[]) {
      return names[String(key).length % names.length]!
    }
    const r = createShardResolver(byLength)
    expect(r).toBeInstanceOf(FunctionResolver)
    expect(r.name).toBe('byLength')
    expect(r.resolve('ab', SHARDS)).toBe('s0')
    expect(
      createShardResolver(
        (
          () => () =>
            's0'
        )(),
      ).name,
    ).toBe('custom')

    const bad = createShardResolver(function mars() {
      return 'mars'
    })
    expect(() => bad.resolve('x', SHARDS)).toThrow(
      new Error(
        "custom resolver 'mars' gave 'mars' for key 'x', which is not a configured shard ('s0', 's1')",
      ),
    )
    const none = createShardResolver(() => undefined as unknown as string)
    expect(() => none.resolve(5, SHARDS)).toThrow("no shard for key 5 in custom resolver 'custom'")
    const later = createShardResolver(async (_key, names) => names[1]!)
    await expect(later.resolve('x', SHARDS)).resolves.toBe('s1')
    const laterBad = createShardResolver(async () => 'mars')
    await expect(laterBad.resolve('x', SHARDS)).rejects.toThrow('which is not a configured shard')
  })

  it('rejects an unknown name or value with a TypeError listing the valid names', () => {
    expect(() => createShardResolver('modulo' as ShardingStrategyName)).toThrow(
      new TypeError(
        "unknown sharding strategy 'modulo': expected one of 'hash', 'jump', 'range', 'java-hashcode'",
      ),
    )
    expect(() => createShardResolver('toString' as ShardingStrategyName)).toThrow('unknown sharding strategy')
    for (const bad of [undefined, null, 42, {}, { resolve: 1 }]) {
      expect(() => createShardResolver(bad as unknown as ShardResolver)).toThrow(
        "expected one of 'hash', 'jump', 'range', 'java-hashcode', an object with a resolve function, or a function",
      )
    }
    expect(() => createShardResolver('hash', null as unknown as object)).toThrow(
      'invalid sharding options (null)',
    )
  })
})

describe('index', () => {
  it('exports every resolver, the factory and the helpers', () => {
    expect(Object.keys(sharding).sort()).toEqual(
      [
        'FunctionResolver',
        'HashResolver',
        'JavaHashCodeResolver',
        'JumpResolver',
        'LookupResolver',
        'RangeResolver',
        'SHARDING_STRATEGIES',
        'createShardResolver',
        'isShardResolver',
        'javaLongHashCode',
        'javaStringHashCode',
        'jumpConsistentHash',
        'keyBytes',
        'murmur3_32',
      ].sort(),
    )
  })
})
