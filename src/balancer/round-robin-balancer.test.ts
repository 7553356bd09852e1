import { describe, expect, it } from 'vitest'
import type { NodeView } from './balancer.js'
import { RoundRobinBalancer } from './round-robin-balancer.js'

const node = (name: string, weight = 1) => ({ name, weight, inFlight: 0, latencyMs: 0 })

function countPicks(b: RoundRobinBalancer, candidates: readonly NodeView[], times: number) {
  const counts: Record<string, number> = {}
  for (let i = 0; i < times; i++) {
    const { name } = b.pick(candidates)
    counts[name] = (counts[name] ?? 0) + 1
  }
  return counts
}

describe('RoundRobinBalancer', () => {
  it('is named round-robin', () => {
    expect(new RoundRobinBalancer().name).toBe('round-robin')
  })

  it('rotates strictly in list order', () => {
    const b = new RoundRobinBalancer()
    const c = Object.freeze([node('a'), node('b'), node('c')])
    expect(Array.from({ length: 7 }, () => b.pick(c).name)).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a'])
  })

  it('gives exact shares: 10,000 picks among 2 nodes are 5,000 each', () => {
    const b = new RoundRobinBalancer()
    expect(countPicks(b, Object.freeze([node('a'), node('b')]), 10_000)).toEqual({ a: 5000, b: 5000 })
  })

  it('ignores weights', () => {
    const b = new RoundRobinBalancer()
    expect(countPicks(b, Object.freeze([node('a', 5), node('b', 1), node('c', 0.5)]), 3000)).toEqual({
      a: 1000,
      b: 1000,
      c: 1000,
    })
  })

  it('keeps rotating after the list shrinks below its position and grows again', () => {
    const b = new RoundRobinBalancer()
    const five = Object.freeze(['a', 'b', 'c', 'd', 'e'].map((n) => node(n)))
    for (let i = 0; i < 4; i++) b.pick(five) // position 4
    const two = Object.freeze(five.slice(0, 2))
    expect([b.pick(two).name, b.pick(two).name, b.pick(two).name]).toEqual(['a', 'b', 'a'])
    expect(countPicks(b, five, 5000)).toEqual({ a: 1000, b: 1000, c: 1000, d: 1000, e: 1000 })
  })

  it('stays exact over many picks (the position never grows past the list length)', () => {
    const b = new RoundRobinBalancer()
    const c = Object.freeze([node('a'), node('b'), node('c')])
    expect(countPicks(b, c, 3_000_000)).toEqual({ a: 1_000_000, b: 1_000_000, c: 1_000_000 })
  })

  it('keeps separate positions per instance', () => {
    const one = new RoundRobinBalancer()
    const two = new RoundRobinBalancer()
    const c = Object.freeze([node('a'), node('b')])
    expect(one.pick(c).name).toBe('a')
    expect(one.pick(c).name).toBe('b')
    expect(two.pick(c).name).toBe('a')
  })
})
