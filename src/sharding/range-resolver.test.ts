import { describe, expect, it } from 'vitest'
import { RangeResolver, type ShardRange } from './range-resolver.js'

const SHARDS = Object.freeze(['s0', 's1', 's2', 's3'])

describe('RangeResolver', () => {
  it("is named 'range'", () => {
    expect(new RangeResolver([{ shard: 's0' }]).name).toBe('range')
  })

  describe('boundaries', () => {
    const r = new RangeResolver([
      { shard: 's0', to: 10 },
      { shard: 's1', from: 10, to: 20 },
      { shard: 's2', from: 20 },
    ])

    it('includes from and excludes to', () => {
      expect(r.resolve(9, SHARDS)).toBe('s0')
      expect(r.resolve(10, SHARDS)).toBe('s1')
      expect(r.resolve(19, SHARDS)).toBe('s1')
      expect(r.resolve(20, SHARDS)).toBe('s2')
    })

    it('treats an omitted from as -∞ and an omitted to as +∞', () => {
      expect(r.resolve(Number.MIN_SAFE_INTEGER, SHARDS)).toBe('s0')
      expect(r.resolve(-(2n ** 100n), SHARDS)).toBe('s0')
      expect(r.resolve(Number.MAX_SAFE_INTEGER, SHARDS)).toBe('s2')
      expect(r.resolve(2n ** 100n, SHARDS)).toBe('s2')
    })

    it('compares non-integer number keys exactly', () => {
      expect(r.resolve(9.999, SHARDS)).toBe('s0')
      expect(r.resolve(19.5, SHARDS)).toBe('s1')
    })
  })

  describe('bigint keys and bounds', () => {
    it('compares bigints with number bounds and numbers with bigint bounds exactly', () => {
      const r = new RangeResolver([
        { shard: 's0', from: 0, to: 10n },
        { shard: 's1', from: 10, to: 2n ** 53n + 2n },
        { shard: 's2', from: 2n ** 53n + 2n, to: 2n ** 64n },
      ])
      expect(r.resolve(9n, SHARDS)).toBe('s0')
      expect(r.resolve(10n, SHARDS)).toBe('s1')
      expect(r.resolve(9, SHARDS)).toBe('s0')
      expect(r.resolve(10, SHARDS)).toBe('s1')
      expect(r.resolve(2n ** 53n + 1n, SHARDS)).toBe('s1') // beyond the doubles' precision
      expect(r.resolve(2n ** 53n + 2n, SHARDS)).toBe('s2')
      expect(r.resolve(2n ** 64n - 1n, SHARDS)).toBe('s2')
      expect(() => r.resolve(2n ** 64n, SHARDS)).toThrow(RangeError)
      expect(() => r.resolve(-1n, SHARDS)).toThrow(RangeError)
    })

    it('treats 10 and 10n as the same bound (so they overlap)', () => {
      expect(
        () =>
          new RangeResolver([
            { shard: 's0', from: 0, to: 11 },
            { shard: 's1', from: 10n },
          ]),
      ).toThrow('ranges[0] [0, 11) → s0 overlaps ranges[1] [10n, +∞) → s1: ranges must not overlap')
      expect(() => new RangeResolver([{ shard: 's0', from: 10, to: 10n }])).toThrow(RangeError)
    })
  })

  describe('string keys and bounds', () => {
    const r = new RangeResolver([
      { shard: 's0', to: 'N' },
      { shard: 's1', from: 'N', to: 'a' },
      { shard: 's2', from: 'a', to: 'n' },
      { shard: 's3', from: 'n' },
    ])

    it('compares by UTF-16 code unit, as < does (uppercase before lowercase, not a collation)', () => {
      expect(r.resolve('Alice', SHARDS)).toBe('s0')
      expect(r.resolve('Zoe', SHARDS)).toBe('s1')
      expect(r.resolve('alice', SHARDS)).toBe('s2')
      expect(r.resolve('zoe', SHARDS)).toBe('s3')
      expect(r.resolve('', SHARDS)).toBe('s0')
      expect(r.resolve('N', SHARDS)).toBe('s1')
      expect(r.resolve('Mzzzz', SHARDS)).toBe('s0')
    })

    it('orders astral characters by their surrogates (code units, not code points)', () => {
      const byUnit = new RangeResolver([
        { shard: 's0', to: '\ue000' },
        { shard: 's1', from: '\ue000' },
      ])
      expect(byUnit.resolve('😀', SHARDS)).toBe('s0') // U+1F600 is \ud83d\ude00, below \ue000
      expect(byUnit.resolve('\uffff', SHARDS)).toBe('s1')
    })

    it('refuses number and bigint keys against string bounds, and string keys against numeric ones', () => {
      expect(() => r.resolve(42, SHARDS)).toThrow('shard key 42 is a number but the range bounds are strings')
      expect(() => r.resolve(42n, SHARDS)).toThrow(TypeError)
      const numeric = new RangeResolver([{ shard: 's0', from: 0 }])
      expect(() => numeric.resolve('42', SHARDS)).toThrow(
        "shard key '42' is a string but the range bounds are numeric",
      )
    })
  })

  it('takes any key with a single unbounded range', () => {
    const r = new RangeResolver([{ shard: 's2' }])
    for (const key of ['a', 42, -1.5, 42n]) expect(r.resolve(key, SHARDS)).toBe('s2')
  })

  describe('keys outside every range', () => {
    const r = new RangeResolver([
      { shard: 's0', from: 0, to: 10 },
      { shard: 's1', from: 10, to: 20 },
    ])

    it('throws a RangeError listing the ranges', () => {
      expect(() => r.resolve(42, SHARDS)).toThrow(
        new RangeError('key 42 is outside every configured range ([0, 10) → s0, [10, 20) → s1)'),
      )
      expect(() => r.resolve(-1, SHARDS)).toThrow(RangeError)
      expect(() => r.resolve(20, SHARDS)).toThrow(RangeError)
      expect(() => r.resolve(42n, SHARDS)).toThrow('key 42n is outside every configured range')
    })

    it('throws for a key in a gap', () => {
      const gappy = new RangeResolver([
        { shard: 's0', to: 10 },
        { shard: 's1', from: 20 },
      ])
      expect(() => gappy.resolve(15, SHARDS)).toThrow(
        'key 15 is outside every configured range ((-∞, 10) → s0, [20, +∞) → s1)',
      )
      expect(gappy.resolve(9, SHARDS)).toBe('s0')
      expect(gappy.resolve(20, SHARDS)).toBe('s1')
    })

    it('shows only the nearest ranges when there are many', () => {
      const many = new RangeResolver(
        Array.from({ length: 50 }, (_, i) => ({ shard: `s${i % 4}`, from: i * 100, to: i * 100 + 50 })),
      )
      expect(() => many.resolve(1275, SHARDS)).toThrow(
        new RangeError(
          'key 1275 is outside every configured range (nearest: [1200, 1250) → s0, [1300, 1350) → s1; 50 ranges in all)',
        ),
      )
      expect(() => many.resolve(-5, SHARDS)).toThrow('(nearest: [0, 50) → s0; 50 ranges in all)')
      expect(() => many.resolve(99_999, SHARDS)).toThrow('(nearest: [4900, 4950) → s1; 50 ranges in all)')
    })

    it('quotes string keys and cuts long ones', () => {
      const r2 = new RangeResolver([{ shard: 's0', from: 'm' }])
      expect(() => r2.resolve('a', SHARDS)).toThrow(
        "key 'a' is outside every configured range (['m', +∞) → s0)",
      )
      expect(() => r2.resolve('b'.repeat(500), SHARDS)).toThrow(`'${'b'.repeat(100)}…' (500 characters)`)
    })
  })

  describe('construction', () => {
    it('copies, sorts by from (open end first) and freezes the ranges; the input is untouched', () => {
      const input: ShardRange[] = [
        { shard: 's2', from: 20 },
        { shard: 's0', to: 10 },
        { shard: 's1', from: 10, to: 20 },
      ]
      const snapshot = structuredClone(input)
      const r = new RangeResolver(input)
      expect(r.ranges).toEqual([
        { shard: 's0', to: 10 },
        { shard: 's1', from: 10, to: 20 },
        { shard: 's2', from: 20 },
      ])
      expect(Object.isFrozen(r.ranges)).toBe(true)
      expect(r.ranges.every((x) => Object.isFrozen(x))).toBe(true)
      expect(input).toEqual(snapshot)
      input[0]!.from = 0 // later changes to the input do not matter
      expect(r.resolve(15, SHARDS)).toBe('s1')
    })

    it('rejects overlapping ranges with a RangeError naming both (by their given index)', () => {
      expect(
        () =>
          new RangeResolver([
            { shard: 's1', from: 10, to: 30 },
            { shard: 's0', from: 0, to: 20 },
          ]),
      ).toThrow(
        new RangeError('ranges[1] [0, 20) → s0 overlaps ranges[0] [10, 30) → s1: ranges must not overlap'),
      )
      expect(() => new RangeResolver([{ shard: 's0' }, { shard: 's1', from: 5 }])).toThrow(
        'ranges[0] (-∞, +∞) → s0 overlaps ranges[1] [5, +∞) → s1',
      )
      expect(
        () =>
          new RangeResolver([
            { shard: 's0', to: 5 },
            { shard: 's1', to: 9 },
          ]),
      ).toThrow('ranges[0] (-∞, 5) → s0 overlaps ranges[1] (-∞, 9) → s1')
      expect(
        () =>
          new RangeResolver([
            { shard: 's0', from: 'a', to: 'c' },
            { shard: 's1', from: 'b' },
          ]),
      ).toThrow("ranges[0] ['a', 'c') → s0 overlaps ranges[1] ['b', +∞) → s1")
    })

    it('accepts touching ranges ([a, b) then [b, c))', () => {
      expect(
        () =>
          new RangeResolver([
            { shard: 's0', to: 5 },
            { shard: 's1', from: 5 },
          ]),
      ).not.toThrow()
    })

    it('rejects an empty range (from >= to) with a RangeError', () => {
      expect(() => new RangeResolver([{ shard: 's0', from: 5, to: 5 }])).toThrow(
        'ranges[0]: [5, 5) → s0 is empty: from must be below to',
      )
      expect(() => new RangeResolver([{ shard: 's0', from: 'b', to: 'a' }])).toThrow(RangeError)
    })

    it('rejects mixing string bounds with numeric ones with a TypeError naming both', () => {
      expect(
        () =>
          new RangeResolver([
            { shard: 's0', from: 0, to: 100 },
            { shard: 's1', from: '100' },
          ]),
      ).toThrow(
        new TypeError(
          "ranges[1].from: '100' is a string but ranges[0].from is numeric: the bounds must be all strings or all numbers/bigints",
        ),
      )
      expect(() => new RangeResolver([{ shard: 's0', from: 'a', to: 10n }])).toThrow(TypeError)
    })

    it('rejects bad bounds, shards and arrays with a TypeError naming the path', () => {
      const bad = (ranges: unknown) => () => new RangeResolver(ranges as ShardRange[])
      expect(bad([{ shard: 's0', from: Number.NaN }])).toThrow('ranges[0].from: expected a finite number')
      expect(bad([{ shard: 's0', to: Infinity }])).toThrow('ranges[0].to: expected a finite number')
      expect(bad([{ shard: 's0', to: null }])).toThrow(TypeError)
      expect(bad([{ shard: 's0', to: {} }])).toThrow(TypeError)
      expect(bad([{ shard: '' }])).toThrow('ranges[0].shard: expected a non-empty string')
      expect(bad([{ shard: 's0', to: 1 }, { from: 1 }])).toThrow(
        'ranges[1].shard: expected a non-empty string',
      )
      expect(bad([null])).toThrow('ranges[0]: expected an object')
      expect(bad([])).toThrow('ranges: expected a non-empty array')
      expect(bad(undefined)).toThrow(TypeError)
      expect(bad({ shard: 's0' })).toThrow(TypeError)
    })

    it('lets several ranges name the same shard', () => {
      const r = new RangeResolver([
        { shard: 's0', to: 10 },
        { shard: 's1', from: 10, to: 20 },
        { shard: 's0', from: 20 },
      ])
      expect(r.resolve(25, SHARDS)).toBe('s0')
    })
  })

  describe('shard names', () => {
    it('validate throws a RangeError for a range naming an unknown shard', () => {
      const r = new RangeResolver([
        { shard: 's0', to: 10 },
        { shard: 's9', from: 10 },
      ])
      expect(() => r.validate(SHARDS)).toThrow(
        new RangeError(
          "ranges[1].shard: unknown shard 's9'; the configured shards are 's0', 's1', 's2', 's3'",
        ),
      )
      expect(() => r.validate(['s0', 's9'])).not.toThrow()
    })

    it('resolve validates on its own when validate was not called (once per shardNames array)', () => {
      const r = new RangeResolver([
        { shard: 's0', to: 10 },
        { shard: 's9', from: 10 },
      ])
      expect(() => r.resolve(1, SHARDS)).toThrow("unknown shard 's9'")
      const ok = Object.freeze(['s0', 's9'])
      expect(r.resolve(1, ok)).toBe('s0')
      expect(r.resolve(11, ok)).toBe('s9')
      expect(() => r.resolve(1, SHARDS)).toThrow("unknown shard 's9'")
    })
  })

  it('rejects non-finite number keys and non-keys with a TypeError', () => {
    const r = new RangeResolver([{ shard: 's0' }])
    for (const bad of [Number.NaN, Infinity, -Infinity]) {
      expect(() => r.resolve(bad, SHARDS)).toThrow('is not a finite number')
    }
    for (const bad of [undefined, null, {}, true]) {
      expect(() => r.resolve(bad as unknown as string, SHARDS)).toThrow(TypeError)
    }
  })

  it('finds the same range as a linear scan (binary search, random ranges and keys)', () => {
    let seed = 12345
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
      return seed / 2 ** 32
    }
    for (let round = 0; round < 50; round++) {
      const bounds = [
        ...new Set(Array.from({ length: 1 + Math.floor(random() * 40) }, () => Math.floor(random() * 1000))),
      ].sort((a, b) => a - b)
      const ranges: ShardRange[] = []
      for (let i = 0; i + 1 < bounds.length; i++) {
        if (random() < 0.8) ranges.push({ shard: `s${i % 4}`, from: bounds[i]!, to: bounds[i + 1]! }) // leave gaps
      }
      if (ranges.length === 0) continue
      ranges.sort(() => random() - 0.5)
      const r = new RangeResolver(ranges)
      for (let k = -5; k < 1005; k += 1 + Math.floor(random() * 7)) {
        const hit = ranges.find((x) => (x.from as number) <= k && k < (x.to as number))
        if (hit) expect(r.resolve(k, SHARDS)).toBe(hit.shard)
        else expect(() => r.resolve(k, SHARDS)).toThrow(RangeError)
      }
    }
  })
})
