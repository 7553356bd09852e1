import { describe, expect, it } from 'vitest'
import { NodeAbortError } from '../errors/node-abort-error.js'
import { PoolExhaustedError } from '../errors/pool-exhausted-error.js'
import { RoutemateError } from '../errors/routemate-error.js'
import type { Driver } from './driver.js'
import { classifyError, isNodeFailure } from './statement.js'

/** A driver that calls every error a connection error (as a message-matching classifier might). */
const pessimist = { classify: () => 'connection' } as unknown as Driver

const exhausted = (reason: 'timeout' | 'queue-full') =>
  new PoolExhaustedError({ node: 'replica1', reason, waitedMs: 500, max: 1, waiting: 3, limit: 500 })

describe('classifyError', () => {
  it('an exhausted pool is a statement error whatever the driver says: not a node failure, not retried', () => {
    for (const reason of ['timeout', 'queue-full'] as const) {
      const cls = classifyError(pessimist, exhausted(reason))
      expect(cls).toBe('statement')
      expect(isNodeFailure(cls)).toBe(false)
    }
  })

  it('work aborted because its node went down is a connection error', () => {
    expect(
      classifyError({ classify: () => 'statement' } as unknown as Driver, new NodeAbortError('r1')),
    ).toBe('connection')
  })

  it('anything else is the driver’s call', () => {
    expect(classifyError(pessimist, new Error('ECONNRESET'))).toBe('connection')
  })
})

describe('PoolExhaustedError', () => {
  it('is a RoutemateError with a stable code and the figures in its fields and message', () => {
    const e = exhausted('timeout')
    expect(e).toBeInstanceOf(RoutemateError)
    expect(e.name).toBe('PoolExhaustedError')
    expect(e.code).toBe('ROUTEMATE_POOL_EXHAUSTED')
    expect(e.message).toBe(
      'timeout exceeded when trying to connect: waited 500 ms for a pooled connection (the only connection of node "replica1" busy, 3 more waiting; limit 500 ms)',
    )
    const q = new PoolExhaustedError({
      node: 'p',
      reason: 'queue-full',
      waitedMs: 0,
      max: 4,
      waiting: 1,
      limit: 1,
      cause: new Error('Queue limit reached.'),
    })
    expect(q.message).toBe(
      'pool exhausted: all 4 connections of node "p" busy and 1 checkout already waiting (limit 1)',
    )
    expect((q.cause as Error).message).toBe('Queue limit reached.')
  })
})
