import { describe, expect, it } from 'vitest'
import type { Balancer, BalancerName } from './balancer.js'
import { BALANCER_NAMES, createBalancer, isBalancer } from './create-balancer.js'
import * as balancers from './index.js'
import { LeastOutstandingBalancer } from './least-outstanding-balancer.js'
import { RandomBalancer } from './random-balancer.js'
import { RoundRobinBalancer } from './round-robin-balancer.js'
import { WeightedRoundRobinBalancer } from './weighted-round-robin-balancer.js'

describe('BALANCER_NAMES', () => {
  it('lists the four built-ins', () => {
    expect(BALANCER_NAMES).toEqual(['round-robin', 'weighted-round-robin', 'random', 'least-outstanding'])
  })

  it('is frozen', () => {
    expect(Object.isFrozen(BALANCER_NAMES)).toBe(true)
  })
})

describe('isBalancer', () => {
  it('accepts an object with a pick function', () => {
    expect(isBalancer({ name: 'x', pick: () => undefined })).toBe(true)
    expect(isBalancer(new RoundRobinBalancer())).toBe(true)
  })

  it('rejects anything else', () => {
    for (const x of [undefined, null, 'round-robin', 42, {}, { pick: 'no' }, () => undefined]) {
      expect(isBalancer(x)).toBe(false)
    }
  })
})

describe('createBalancer', () => {
  const classes: Record<BalancerName, new () => Balancer> = {
    'round-robin': RoundRobinBalancer,
    'weighted-round-robin': WeightedRoundRobinBalancer,
    random: RandomBalancer,
    'least-outstanding': LeastOutstandingBalancer,
  }

  it.each(BALANCER_NAMES)('makes a new %s instance on each call', (name) => {
    const make = createBalancer(name)
    const one = make()
    const two = make()
    expect(one).toBeInstanceOf(classes[name])
    expect(one.name).toBe(name)
    expect(two).not.toBe(one)
  })

  it('returns a factory function as is', () => {
    const factory = () => new RandomBalancer()
    expect(createBalancer(factory)).toBe(factory)
  })

  it('wraps a balancer object in a factory returning that same object', () => {
    const custom: Balancer = { name: 'first', pick: (c) => c[0]! }
    const make = createBalancer(custom)
    expect(make()).toBe(custom)
    expect(make()).toBe(custom)
  })

  it('throws a TypeError naming the valid names for an unknown name', () => {
    const bad = 'round-robbin' as BalancerName
    expect(() => createBalancer(bad)).toThrow(TypeError)
    expect(() => createBalancer(bad)).toThrow(
      "unknown balancer 'round-robbin': expected one of 'round-robin', 'weighted-round-robin', 'random', 'least-outstanding'",
    )
  })

  it('does not take inherited property names for balancer names', () => {
    expect(() => createBalancer('toString' as BalancerName)).toThrow(TypeError)
    expect(() => createBalancer('__proto__' as BalancerName)).toThrow(TypeError)
  })

  it('throws a TypeError for any other value', () => {
    for (const bad of [null, undefined, 42, {}, { pick: 1 }]) {
      expect(() => createBalancer(bad as unknown as Balancer)).toThrow(TypeError)
    }
    expect(() => createBalancer(null as unknown as Balancer)).toThrow(/invalid balancer \(null\)/)
  })
})

describe('index', () => {
  it('re-exports the balancers and helpers', () => {
    expect(Object.keys(balancers).sort()).toEqual([
      'BALANCER_NAMES',
      'LeastOutstandingBalancer',
      'RandomBalancer',
      'RoundRobinBalancer',
      'WeightedRoundRobinBalancer',
      'createBalancer',
      'isBalancer',
    ])
  })
})
