import { describe, expect, it } from 'vitest'
import type { Balancer, NodeView } from './balancer.js'
import { LeastOutstandingBalancer } from './least-outstanding-balancer.js'
import { RandomBalancer } from './random-balancer.js'
import { RoundRobinBalancer } from './round-robin-balancer.js'
import { WeightedRoundRobinBalancer } from './weighted-round-robin-balancer.js'

interface TestNode {
  name: string
  weight: number
  inFlight: number
  latencyMs: number
}

const node = (name: string, weight = 1): TestNode => ({ name, weight, inFlight: 0, latencyMs: 0 })

/** A frozen list, as the router passes it. */
const list = (...nodes: TestNode[]): readonly NodeView[] => Object.freeze(nodes)

/** What the router does when health changes: a new array, announced through `reset`. */
function rebuild(balancer: Balancer, nodes: readonly NodeView[]): readonly NodeView[] {
  balancer.reset?.(nodes)
  return nodes
}

function pickMany(balancer: Balancer, candidates: readonly NodeView[], times: number): Map<string, number> {
  const counts = new Map<string, number>()
  for (let i = 0; i < times; i++) {
    const picked = balancer.pick(candidates)
    expect(candidates.includes(picked)).toBe(true)
    counts.set(picked.name, (counts.get(picked.name) ?? 0) + 1)
  }
  return counts
}

/** The contract every balancer, built-in or custom, must keep. */
function balancerConformance(name: string, make: () => Balancer): void {
  describe(`${name} (Balancer contract)`, () => {
    it('has a non-empty name', () => {
      expect(typeof make().name).toBe('string')
      expect(make().name.length).toBeGreaterThan(0)
    })

    it('always returns an element of the candidates array (by identity)', () => {
      const b = make()
      const candidates = rebuild(b, list(node('a'), node('b', 2), node('c', 0.5)))
      for (let i = 0; i < 500; i++) expect(candidates).toContain(b.pick(candidates))
    })

    it('works with one candidate', () => {
      const b = make()
      const only = rebuild(b, list(node('only')))
      for (let i = 0; i < 10; i++) expect(b.pick(only)).toBe(only[0])
    })

    it('works when pick gets a list it was never told about through reset', () => {
      const b = make()
      const first = list(node('a'), node('b'))
      for (let i = 0; i < 10; i++) expect(first).toContain(b.pick(first))
      const second = list(node('c'), node('d'), node('e'))
      for (let i = 0; i < 30; i++) expect(second).toContain(b.pick(second))
    })

    it('after a reset with a new list, never returns a node of the old list', () => {
      const b = make()
      const old = rebuild(b, list(node('a'), node('b'), node('c')))
      pickMany(b, old, 50)
      const fresh = rebuild(b, list(node('x'), node('y')))
      for (let i = 0; i < 200; i++) {
        const picked = b.pick(fresh)
        expect(fresh).toContain(picked)
        expect(old).not.toContain(picked)
      }
    })

    it('handles the list shrinking and growing (nodes down and back up)', () => {
      const b = make()
      const nodes = ['a', 'b', 'c', 'd', 'e'].map((n) => node(n))
      // 5 -> 4 -> ... -> 1 -> 2 -> ... -> 5, picking a few times on each list.
      const sizes = [5, 4, 3, 2, 1, 2, 3, 4, 5, 1, 5]
      for (const size of sizes) {
        const candidates = rebuild(b, list(...nodes.slice(0, size)))
        for (let i = 0; i < 7; i++) expect(candidates).toContain(b.pick(candidates))
      }
    })

    it('picks every candidate eventually (equal weights: each at least 10% of 1,000 picks)', () => {
      const b = make()
      const candidates = rebuild(b, list(node('a'), node('b'), node('c'), node('d')))
      const counts = pickMany(b, candidates, 1000)
      for (const c of candidates) expect(counts.get(c.name) ?? 0).toBeGreaterThanOrEqual(100)
    })

    it('keeps every candidate in use while queries are in flight', () => {
      const b = make()
      const nodes = [node('a'), node('b'), node('c')]
      const candidates = rebuild(b, list(...nodes))
      const running: TestNode[] = []
      const counts = new Map<string, number>()
      for (let i = 0; i < 1000; i++) {
        const picked = b.pick(candidates)
        const n = nodes.find((x) => x === picked)!
        n.inFlight++
        running.push(n)
        if (running.length > 5) running.shift()!.inFlight--
        b.observe?.(picked, 1 + (i % 7), i % 11 !== 0)
        counts.set(picked.name, (counts.get(picked.name) ?? 0) + 1)
      }
      for (const c of candidates) expect(counts.get(c.name) ?? 0).toBeGreaterThanOrEqual(100)
    })

    it('does not mutate the candidates array', () => {
      const b = make()
      const nodes = [node('a'), node('b', 3), node('c', 2)]
      const candidates: NodeView[] = [...nodes] // not frozen: a mutation would go through
      b.reset?.(candidates)
      pickMany(b, candidates, 300)
      expect(candidates).toEqual(nodes)
      candidates.forEach((c, i) => {
        expect(c).toBe(nodes[i])
      })
      expect(nodes.map((n) => n.weight)).toEqual([1, 3, 2])
    })

    it('handles large lists and non-integer weights (one pass at most per pick)', () => {
      const b = make()
      const candidates = rebuild(
        b,
        list(...Array.from({ length: 1000 }, (_, i) => node(`n${i}`, 0.5 + (i % 3)))),
      )
      const members = new Set(candidates)
      let outside = 0 // one expect, not 2,000 linear toContain scans of 1,000 nodes
      for (let i = 0; i < 2000; i++) if (!members.has(b.pick(candidates))) outside++
      expect(outside).toBe(0)
    })
  })
}

balancerConformance('RoundRobinBalancer', () => new RoundRobinBalancer())
balancerConformance('WeightedRoundRobinBalancer', () => new WeightedRoundRobinBalancer())
balancerConformance('RandomBalancer', () => new RandomBalancer())
balancerConformance('LeastOutstandingBalancer', () => new LeastOutstandingBalancer())
balancerConformance('a trivial custom balancer', () => {
  let i = 0
  return { name: 'trivial', pick: (candidates) => candidates[i++ % candidates.length]! }
})
