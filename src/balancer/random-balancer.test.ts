import { describe, expect, it } from 'vitest'
import type { NodeView } from './balancer.js'
import { RandomBalancer } from './random-balancer.js'

const node = (name: string, weight = 1) => ({ name, weight, inFlight: 0, latencyMs: 0 })

/** mulberry32: a small seeded PRNG returning numbers in [0, 1). */
function mulberry32(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function countPicks(b: RandomBalancer, candidates: readonly NodeView[], times: number) {
  const counts: Record<string, number> = {}
  for (let i = 0; i < times; i++) {
    const { name } = b.pick(candidates)
    counts[name] = (counts[name] ?? 0) + 1
  }
  return counts
}

/** Asserts each share is within ±3% (absolute) of its expected fraction. */
function expectShares(counts: Record<string, number>, expected: Record<string, number>, total: number) {
  for (const [name, fraction] of Object.entries(expected)) {
    const share = (counts[name] ?? 0) / total
    expect(share, name).toBeGreaterThanOrEqual(fraction - 0.03)
    expect(share, name).toBeLessThanOrEqual(fraction + 0.03)
  }
}

describe('RandomBalancer', () => {
  it('is named random', () => {
    expect(new RandomBalancer().name).toBe('random')
  })

  it('respects weights: shares within ±3% over 100,000 picks', () => {
    const b = new RandomBalancer({ random: mulberry32(42) })
    const list = Object.freeze([node('a', 5), node('b', 3), node('c', 2)])
    b.reset(list)
    expectShares(countPicks(b, list, 100_000), { a: 0.5, b: 0.3, c: 0.2 }, 100_000)
  })

  it('respects non-integer weights', () => {
    const b = new RandomBalancer({ random: mulberry32(7) })
    const list = Object.freeze([node('x', 0.5), node('y', 1.5)])
    b.reset(list)
    expectShares(countPicks(b, list, 100_000), { x: 0.25, y: 0.75 }, 100_000)
  })

  it('is uniform when all weights are equal', () => {
    const b = new RandomBalancer({ random: mulberry32(1) })
    const list = Object.freeze([node('a', 2), node('b', 2), node('c', 2), node('d', 2)])
    b.reset(list)
    expectShares(countPicks(b, list, 100_000), { a: 0.25, b: 0.25, c: 0.25, d: 0.25 }, 100_000)
  })

  it('maps the random number onto cumulative weights', () => {
    let next = 0
    const b = new RandomBalancer({ random: () => next })
    const list = Object.freeze([node('a', 1), node('b', 2), node('c', 1)]) // [0, .25) [.25, .75) [.75, 1)
    b.reset(list)
    const at = (r: number) => {
      next = r
      return b.pick(list).name
    }
    expect([at(0), at(0.24), at(0.25), at(0.74), at(0.75), at(0.9999999)]).toEqual([
      'a',
      'a',
      'b',
      'b',
      'c',
      'c',
    ])
  })

  it('stays in range if the source returns 1 or more', () => {
    const weighted = new RandomBalancer({ random: () => 1 })
    const uniform = new RandomBalancer({ random: () => 1 })
    const w = Object.freeze([node('a', 1), node('b', 3)])
    const u = Object.freeze([node('a'), node('b')])
    expect(weighted.pick(w).name).toBe('b')
    expect(uniform.pick(u).name).toBe('b')
  })

  it('recomputes the weights for a new list (with or without reset)', () => {
    const b = new RandomBalancer({ random: () => 0.6 })
    const first = Object.freeze([node('a', 1), node('b', 1)])
    expect(b.pick(first).name).toBe('b')
    const second = Object.freeze([node('a', 9), node('b', 1)])
    expect(b.pick(second).name).toBe('a') // not told through reset: a new array is enough
    const third = Object.freeze([node('c', 1), node('d', 4)])
    b.reset(third)
    expect(b.pick(third).name).toBe('d')
  })

  it('defaults to Math.random', () => {
    const b = new RandomBalancer()
    const list = Object.freeze([node('a'), node('b')])
    const counts = countPicks(b, list, 1000)
    expect(counts.a).toBeGreaterThan(100)
    expect(counts.b).toBeGreaterThan(100)
  })
})
