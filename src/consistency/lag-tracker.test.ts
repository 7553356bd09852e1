import { describe, expect, it } from 'vitest'
import { LagTracker } from './lag-tracker.js'

const num = (replay: string, target: string) => Number(replay) >= Number(target)

describe('LagTracker', () => {
  it('is undefined before the primary is sampled', () => {
    expect(new LagTracker(num).lagOf('5', 1000)).toBeUndefined()
  })

  it('an idle primary is no lag', () => {
    const t = new LagTracker(num)
    for (let now = 0; now <= 10_000; now += 1000) t.recordPrimary(now, '10')
    expect(t.lagOf('10', 10_500)).toBe(0)
  })

  it('a stuck replica shows growing lag while the primary writes', () => {
    const t = new LagTracker(num)
    t.recordPrimary(0, '10')
    t.recordPrimary(1000, '20')
    t.recordPrimary(2000, '30')
    expect(t.lagOf('10', 2500)).toBe(1500)
    expect(t.lagOf('10', 5000)).toBe(4000)
    expect(t.lagOf('25', 2500)).toBe(500)
    expect(t.lagOf('30', 2500)).toBe(0)
    expect(t.lagOf('99', 2500)).toBe(0)
  })

  it('keeps the oldest time for a repeated position', () => {
    const t = new LagTracker(num)
    t.recordPrimary(0, '10')
    t.recordPrimary(1000, '20')
    t.recordPrimary(2000, '20')
    expect(t.lagOf('10', 3000)).toBe(2000)
  })

  it('wraps its ring buffer, reporting at least the oldest kept age', () => {
    const t = new LagTracker(num, 4)
    for (let i = 1; i <= 10; i++) t.recordPrimary(i * 1000, String(i))
    expect(t.latest()).toBe('10')
    expect(t.lagOf('0', 11_000)).toBe(4000) // oldest kept sample is t=7000
    expect(t.lagOf('8', 11_000)).toBe(2000)
    t.clear()
    expect(t.lagOf('8', 11_000)).toBeUndefined()
  })
})
