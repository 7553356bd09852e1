import { describe, expect, it } from 'vitest'
import { NodeHealth } from './node-health.js'

describe('NodeHealth', () => {
  it('goes up -> suspect -> down with failureThreshold 2', () => {
    const h = new NodeHealth(2, 1)
    expect(h.state).toBe('up')
    expect(h.failure()).toBe('suspect')
    expect(h.failure()).toBe('down')
    expect(h.failure()).toBeUndefined()
    expect(h.state).toBe('down')
  })

  it('a success clears suspicion', () => {
    const h = new NodeHealth(3, 1)
    h.failure()
    h.failure()
    expect(h.state).toBe('suspect')
    expect(h.success()).toBe('up')
    expect(h.failure()).toBe('suspect')
    expect(h.state).toBe('suspect')
  })

  it('failureThreshold 1 goes straight down', () => {
    const h = new NodeHealth(1, 1)
    expect(h.failure()).toBe('down')
  })

  it('needs successThreshold consecutive successes to come back', () => {
    const h = new NodeHealth(1, 3)
    h.failure()
    expect(h.success()).toBeUndefined()
    expect(h.success()).toBeUndefined()
    expect(h.failure()).toBeUndefined() // a failure in between restarts the count
    expect(h.success()).toBeUndefined()
    expect(h.success()).toBeUndefined()
    expect(h.success()).toBe('up')
  })

  it('successes while up report no change', () => {
    const h = new NodeHealth(2, 1)
    expect(h.success()).toBeUndefined()
  })

  it('force marks down at once and back up', () => {
    const h = new NodeHealth(5, 2)
    expect(h.force('down')).toBe('down')
    expect(h.success()).toBeUndefined()
    expect(h.success()).toBe('up')
    expect(h.force('up')).toBeUndefined()
  })
})
