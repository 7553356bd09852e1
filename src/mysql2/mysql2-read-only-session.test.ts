import { describe, expect, it } from 'vitest'
import type { CoreConnection } from './mysql2-internals.js'
import { isTainted, runsRoutine, watchReadOnlyConnection } from './mysql2-read-only-session.js'

describe('runsRoutine', () => {
  it.each([
    ['CALL p()', true],
    ['  call p()', true],
    ['/* x */ do sleep(1)', true],
    [{ sql: 'CALL p(?)', values: [1] }, true],
    ['SELECT 1', false],
    ['DOES x', false],
    ['CALLER', false],
    [{ sql: 'SELECT 1' }, false],
    [{}, false],
    [null, false],
  ])('%j -> %j', (stmt, expected) => {
    expect(runsRoutine(stmt)).toBe(expected)
  })
})

describe('watchReadOnlyConnection', () => {
  it('passes every argument through and marks a connection that ran a routine', () => {
    const calls: unknown[][] = []
    const core = {
      query(sql: unknown, values?: unknown, cb?: unknown) {
        calls.push([this, sql, values, cb])
        return 'q'
      },
      execute(sql: unknown, values?: unknown, cb?: unknown) {
        calls.push([this, sql, values, cb])
        return 'e'
      },
    } as unknown as CoreConnection
    watchReadOnlyConnection(core)
    const cb = () => {}
    expect(core.query('SELECT ?', [1], cb)).toBe('q')
    expect(calls[0]).toEqual([core, 'SELECT ?', [1], cb])
    expect(isTainted(core)).toBe(false)
    expect(core.execute({ sql: 'CALL p()' }, cb as never)).toBe('e')
    expect(calls[1]).toEqual([core, { sql: 'CALL p()' }, cb, undefined])
    expect(isTainted(core)).toBe(true)
  })
})
