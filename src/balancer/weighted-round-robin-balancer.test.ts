import { describe, expect, it } from 'vitest'
import type { NodeView } from './balancer.js'
import { WeightedRoundRobinBalancer } from './weighted-round-robin-balancer.js'

const node = (name: string, weight = 1) => ({ name, weight, inFlight: 0, latencyMs: 0 })

function countPicks(b: WeightedRoundRobinBalancer, candidates: readonly NodeView[], times: number) {
  const counts: Record<string, number> = {}
  for (let i = 0; i < times; i++) {
    const { name } = b.pick(candidates)
    counts[name] = (counts[name] ?? 0) + 1
  }
  return counts
}

const sequence = (b: WeightedRoundRobinBalancer, c: readonly NodeView[], times: number) =>
  Array.from({ length: times }, () => b.pick(c).name).join('')

describe('WeightedRoundRobinBalancer', () => {
  const a = node('a', 5)
  const b = node('b', 1)
  const c = node('c', 1)

  it('is named weighted-round-robin', () => {
    expect(new WeightedRoundRobinBalancer().name).toBe('weighted-round-robin')
  })

  it('yields the smooth sequence a a b a c a a for weights {5, 1, 1}, cycle after cycle', () => {
    const wrr = new WeightedRoundRobinBalancer()
    const list = Object.freeze([a, b, c])
    wrr.reset(list)
    expect(sequence(wrr, list, 21)).toBe('aabacaa'.repeat(3))
  })

  it('gives exact shares over 7,000 picks: 5,000 / 1,000 / 1,000', () => {
    const wrr = new WeightedRoundRobinBalancer()
    const list = Object.freeze([a, b, c])
    wrr.reset(list)
    expect(countPicks(wrr, list, 7000)).toEqual({ a: 5000, b: 1000, c: 1000 })
  })

  it('does not skew after a node leaves and returns', () => {
    const wrr = new WeightedRoundRobinBalancer()
    const all = Object.freeze([a, b, c])
    wrr.reset(all)
    countPicks(wrr, all, 3) // stop mid-cycle: a, a, b
    const withoutA = Object.freeze([b, c]) // a goes down
    wrr.reset(withoutA)
    expect(countPicks(wrr, withoutA, 1001)).toEqual({ b: 501, c: 500 })
    const back = Object.freeze([a, b, c]) // a comes back: a new array
    wrr.reset(back)
    expect(sequence(wrr, back, 7)).toBe('aabacaa')
    expect(countPicks(wrr, back, 7000)).toEqual({ a: 5000, b: 1000, c: 1000 })
  })

  it('treats a new array passed to pick without reset as a reset', () => {
    const wrr = new WeightedRoundRobinBalancer()
    const first = Object.freeze([a, b, c])
    countPicks(wrr, first, 4) // mid-cycle
    const second = Object.freeze([a, b, c])
    expect(sequence(wrr, second, 7)).toBe('aabacaa')
  })

  it('keeps the running values while the same array is passed', () => {
    const wrr = new WeightedRoundRobinBalancer()
    const list = Object.freeze([a, b, c])
    wrr.reset(list)
    expect(sequence(wrr, list, 3)).toBe('aab')
    expect(sequence(wrr, list, 4)).toBe('acaa') // not restarted
  })

  it('works with non-integer weights', () => {
    const wrr = new WeightedRoundRobinBalancer()
    const list = Object.freeze([node('x', 0.5), node('y', 1.5)])
    wrr.reset(list)
    expect(sequence(wrr, list, 4)).toBe('yxyy')
    expect(countPicks(wrr, list, 4000)).toEqual({ x: 1000, y: 3000 })
  })

  it('keeps shares close to the weights with fractional weights that are not exact in binary', () => {
    const wrr = new WeightedRoundRobinBalancer()
    const list = Object.freeze([node('x', 0.1), node('y', 0.2), node('z', 0.3)])
    wrr.reset(list)
    const counts = countPicks(wrr, list, 60_000)
    expect(counts.x).toBeGreaterThanOrEqual(9999)
    expect(counts.x).toBeLessThanOrEqual(10_001)
    expect(counts.y).toBeGreaterThanOrEqual(19_999)
    expect(counts.y).toBeLessThanOrEqual(20_001)
    expect(counts.z).toBeGreaterThanOrEqual(29_999)
    expect(counts.z).toBeLessThanOrEqual(30_001)
  })

  it('reuses its storage when the list shrinks and grows', () => {
    const wrr = new WeightedRoundRobinBalancer()
    const five = Object.freeze(['p', 'q', 'r', 's', 't'].map((n, i) => node(n, i + 1)))
    wrr.reset(five)
    expect(countPicks(wrr, five, 150)).toEqual({ p: 10, q: 20, r: 30, s: 40, t: 50 })
    const two = Object.freeze(five.slice(0, 2))
    wrr.reset(two)
    expect(countPicks(wrr, two, 300)).toEqual({ p: 100, q: 200 })
    wrr.reset(five)
    expect(countPicks(wrr, five, 150)).toEqual({ p: 10, q: 20, r: 30, s: 40, t: 50 })
  })
})
