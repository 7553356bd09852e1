import { describe, expect, it } from 'vitest'
import { createShardResolver } from './create-shard-resolver.js'
import { HashResolver } from './hash-resolver.js'
import { JavaHashCodeResolver, javaStringHashCode } from './java-hashcode-resolver.js'
import { JumpResolver } from './jump-resolver.js'
import { LookupResolver } from './lookup-resolver.js'
import { RangeResolver } from './range-resolver.js'
import type { ShardKey, ShardResolver } from './shard-resolver.js'

/** Which key types a resolver (as configured here) takes. */
interface KeyTypes {
  string: boolean
  number: boolean
  bigint: boolean
}

const ALL: KeyTypes = { string: true, number: true, bigint: true }

const STRING_KEYS = [
  '',
  'a',
  '0',
  '42',
  'user-12345',
  'alice@example.com',
  '한글',
  'emoji 😀',
  '\ud800', // a lone surrogate
  'x'.repeat(1000),
]
const NUMBER_KEYS = [
  0,
  1,
  -1,
  42,
  -42,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 32,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
]
const BIGINT_KEYS = [0n, 1n, -1n, 42n, 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n)]

function keysFor(types: KeyTypes): ShardKey[] {
  return [
    ...(types.string ? STRING_KEYS : []),
    ...(types.number ? NUMBER_KEYS : []),
    ...(types.bigint ? BIGINT_KEYS : []),
  ]
}

const names = (n: number): readonly string[] => Object.freeze(Array.from({ length: n }, (_, i) => `s${i}`))

/** Resolves and awaits (a resolver may answer with a promise). */
async function shardOf(r: ShardResolver, key: ShardKey, shardNames: readonly string[]): Promise<string> {
  return await r.resolve(key, shardNames)
}

/**
 * The contract every shard resolver, built-in or custom, must keep. `make` builds one for the given
 * shard names (range and lookup resolvers are configured with them).
 */
function shardResolverConformance(
  label: string,
  make: (shardNames: readonly string[]) => ShardResolver,
  types: KeyTypes = ALL,
): void {
  describe(`${label} (ShardResolver contract)`, () => {
    const keys = keysFor(types)

    it('has a non-empty name', () => {
      const r = make(names(3))
      expect(typeof r.name).toBe('string')
      expect(r.name.length).toBeGreaterThan(0)
    })

    it('accepts the shard names it was configured for (validate, if it has one)', () => {
      for (const n of [1, 2, 5]) {
        const shardNames = names(n)
        const r = make(shardNames)
        expect(() => r.validate?.(shardNames)).not.toThrow()
      }
    })

    it.each([1, 2, 3, 5, 16, 100])('always returns one of %i shard names', async (n) => {
      const shardNames = names(n)
      const r = make(shardNames)
      r.validate?.(shardNames)
      for (const key of keys) expect(shardNames).toContain(await shardOf(r, key, shardNames))
    })

    it('is deterministic: the same key gives the same shard across calls and across instances', async () => {
      const shardNames = names(7)
      const one = make(shardNames)
      const two = make(shardNames)
      for (const key of keys) {
        const first = await shardOf(one, key, shardNames)
        expect(await shardOf(one, key, shardNames)).toBe(first)
        expect(await shardOf(one, key, [...shardNames])).toBe(first) // an equal, different array
        expect(await shardOf(two, key, shardNames)).toBe(first)
      }
    })

    it('handles one shard: every key goes there', async () => {
      const only = Object.freeze(['only'])
      const r = make(only)
      r.validate?.(only)
      for (const key of keys) expect(await shardOf(r, key, only)).toBe('only')
    })

    if (types.string)
      it('takes string keys, including empty, non-ASCII and lone surrogates', async () => {
        const shardNames = names(4)
        const r = make(shardNames)
        for (const key of STRING_KEYS) expect(shardNames).toContain(await shardOf(r, key, shardNames))
      })

    if (types.number)
      it('takes integer number keys, negative and up to the safe range', async () => {
        const shardNames = names(4)
        const r = make(shardNames)
        for (const key of NUMBER_KEYS) expect(shardNames).toContain(await shardOf(r, key, shardNames))
      })

    if (types.bigint)
      it('takes bigint keys across the 64-bit range', async () => {
        const shardNames = names(4)
        const r = make(shardNames)
        for (const key of BIGINT_KEYS) expect(shardNames).toContain(await shardOf(r, key, shardNames))
      })

    it('rejects a missing or non-key value (never a silent default)', async () => {
      const shardNames = names(3)
      const r = make(shardNames)
      for (const bad of [undefined, null, {}, [], true]) {
        await expect(async () => shardOf(r, bad as unknown as ShardKey, shardNames)).rejects.toThrow()
      }
    })

    it('never mutates shardNames', async () => {
      const original = ['s0', 's1', 's2', 's3', 's4']
      const shardNames = [...original] // not frozen: a mutation would go through
      const r = make(shardNames)
      r.validate?.(shardNames)
      for (const key of keys) await shardOf(r, key, shardNames)
      expect(shardNames).toEqual(original)
    })
  })
}

/** Numeric ranges splitting the 64-bit line evenly, one per shard; the ends are open. */
function numericRanges(shardNames: readonly string[]): RangeResolver {
  const n = shardNames.length
  const step = 2n ** 64n / BigInt(n)
  return new RangeResolver(
    shardNames.map((shard, i) => ({
      shard,
      ...(i > 0 ? { from: -(2n ** 63n) + step * BigInt(i) } : {}),
      ...(i < n - 1 ? { to: -(2n ** 63n) + step * BigInt(i + 1) } : {}),
    })),
  )
}

/** String ranges split by first character (`'!'`, `'"'`, ...); the ends are open. */
function stringRanges(shardNames: readonly string[]): RangeResolver {
  const n = shardNames.length
  const bound = (i: number) => String.fromCharCode(0x20 + i)
  return new RangeResolver(
    shardNames.map((shard, i) => ({
      shard,
      ...(i > 0 ? { from: bound(i) } : {}),
      ...(i < n - 1 ? { to: bound(i + 1) } : {}),
    })),
  )
}

shardResolverConformance('HashResolver', () => new HashResolver())
shardResolverConformance('JumpResolver', () => new JumpResolver())
shardResolverConformance('JavaHashCodeResolver (long)', () => new JavaHashCodeResolver())
shardResolverConformance('JavaHashCodeResolver (auto)', () => new JavaHashCodeResolver({ numberAs: 'auto' }))
shardResolverConformance(
  'JavaHashCodeResolver (int)',
  () => new JavaHashCodeResolver({ numberAs: 'int' }),
  { string: true, number: false, bigint: false }, // keys beyond the int range are refused
)
shardResolverConformance('RangeResolver (one range covering everything)', (shardNames) => {
  return new RangeResolver([{ shard: shardNames[shardNames.length - 1]! }])
})
shardResolverConformance('RangeResolver (numeric ranges covering everything)', numericRanges, {
  string: false,
  number: true,
  bigint: true,
})
shardResolverConformance('RangeResolver (string ranges covering everything)', stringRanges, {
  string: true,
  number: false,
  bigint: false,
})
shardResolverConformance('LookupResolver (sync function covering everything)', (shardNames) => {
  return new LookupResolver(
    (key) => shardNames[Math.abs(javaStringHashCode(String(key)) % shardNames.length)]!,
  )
})
shardResolverConformance('LookupResolver (async function covering everything)', (shardNames) => {
  return new LookupResolver(async (key) => shardNames[String(key).length % shardNames.length]!)
})
shardResolverConformance('a custom function (createShardResolver)', () =>
  createShardResolver((key, shardNames) => shardNames[String(key).length % shardNames.length]!),
)
shardResolverConformance('a custom resolver object', () => ({
  name: 'first-char',
  resolve(key: ShardKey, shardNames: readonly string[]): string {
    if (typeof key !== 'string' && typeof key !== 'number' && typeof key !== 'bigint') {
      throw new TypeError('bad key')
    }
    return shardNames[String(key).charCodeAt(0) % shardNames.length || 0]!
  },
}))
