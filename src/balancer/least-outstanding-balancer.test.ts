import { describe, expect, it } from 'vitest'
import { LeastOutstandingBalancer } from './least-outstanding-balancer.js'

const node = (name: string, weight = 1, inFlight = 0) => ({ name, weight, inFlight, latencyMs: 0 })
type TestNode = ReturnType<typeof node>

/** Picks and starts a query on the picked node (which never completes). */
function pickAndHold(b: LeastOutstandingBalancer, nodes: readonly TestNode[]): void {
  const picked = b.pick(nodes)
  nodes.find((n) => n === picked)!.inFlight++
}

describe('LeastOutstandingBalancer', () => {
  it('is named least-outstanding', () => {
    expect(new LeastOutstandingBalancer().name).toBe('least-outstanding')
  })

  it('picks the candidate with the fewest queries in flight', () => {
    const b = new LeastOutstandingBalancer()
    const list = Object.freeze([node('a', 1, 4), node('b', 1, 1), node('c', 1, 3)])
    for (let i = 0; i < 5; i++) expect(b.pick(list).name).toBe('b')
  })

  it('follows inFlight as it changes', () => {
    const b = new LeastOutstandingBalancer()
    const a = node('a')
    const c = node('c')
    const list = Object.freeze([a, c])
    a.inFlight = 2
    expect(b.pick(list)).toBe(c)
    c.inFlight = 5
    expect(b.pick(list)).toBe(a)
  })

  it('rotates ties so equal nodes share evenly', () => {
    const b = new LeastOutstandingBalancer()
    const list = Object.freeze([node('a'), node('b'), node('c')])
    expect(Array.from({ length: 6 }, () => b.pick(list).name).join('')).toBe('abcabc')
  })

  it('rotates ties evenly among a subset when another node is busy', () => {
    const b = new LeastOutstandingBalancer()
    const list = Object.freeze([node('a', 1, 10), node('b'), node('c'), node('d')])
    const counts: Record<string, number> = {}
    for (let i = 0; i < 3000; i++) {
      const { name } = b.pick(list)
      counts[name] = (counts[name] ?? 0) + 1
    }
    expect(counts).toEqual({ b: 1000, c: 1000, d: 1000 })
  })

  it('compares inFlight / weight: a heavier node takes proportionally more', () => {
    const b = new LeastOutstandingBalancer()
    const heavy = node('heavy', 3)
    const light = node('light', 1)
    const list = Object.freeze([heavy, light])
    heavy.inFlight = 5 // 5/3 < 2/1
    light.inFlight = 2
    expect(b.pick(list)).toBe(heavy)
    heavy.inFlight = 7 // 7/3 > 2/1
    expect(b.pick(list)).toBe(light)
  })

  it('shares concurrent load in proportion to the weights', () => {
    const b = new LeastOutstandingBalancer()
    const heavy = node('heavy', 3)
    const light = node('light', 1)
    const list = Object.freeze([heavy, light])
    for (let i = 0; i < 400; i++) pickAndHold(b, list) // nothing completes
    expect(heavy.inFlight).toBe(300)
    expect(light.inFlight).toBe(100)
  })

  it('works with non-integer weights', () => {
    const b = new LeastOutstandingBalancer()
    const x = node('x', 0.5)
    const y = node('y', 1.5)
    const list = Object.freeze([x, y])
    for (let i = 0; i < 400; i++) pickAndHold(b, list)
    expect(x.inFlight).toBe(100)
    expect(y.inFlight).toBe(300)
  })

  it('keeps working after the list shrinks below its scan position', () => {
    const b = new LeastOutstandingBalancer()
    const nodes = ['a', 'b', 'c', 'd'].map((n) => node(n))
    const four = Object.freeze(nodes)
    for (let i = 0; i < 3; i++) b.pick(four) // next scan starts at index 3, i.e. 1 in a list of 2
    const two = Object.freeze(nodes.slice(0, 2))
    expect(Array.from({ length: 4 }, () => b.pick(two).name).join('')).toBe('baba')
  })
})
