import { AsyncLocalStorage } from 'node:async_hooks'
import { describe, expect, it } from 'vitest'
import type { Scope } from '../router/scope.js'
import { ScopeBatcher, scopeKey } from './scope-batcher.js'

describe('scopeKey', () => {
  it('is equal for scopes that route alike and differs otherwise', () => {
    const session = {}
    const a = { mode: 'read', tx: undefined, cluster: undefined, session } as unknown as Scope
    const b = { mode: 'read', tx: undefined, cluster: undefined, session } as unknown as Scope
    const other = { mode: 'read', tx: undefined, cluster: undefined, session: {} } as unknown as Scope
    const primary = { mode: 'primary', tx: undefined, cluster: undefined, session } as unknown as Scope
    expect(scopeKey(a)).toBe(scopeKey(b))
    expect(scopeKey(a)).not.toBe(scopeKey(other))
    expect(scopeKey(a)).not.toBe(scopeKey(primary))
    expect(scopeKey(undefined)).toBe('-')
    expect(scopeKey({ ...a, fallback: false })).not.toBe(scopeKey(a))
  })
})

describe('ScopeBatcher', () => {
  it('starts one group per event-loop turn, each call in its own async context, same-key calls together', async () => {
    const als = new AsyncLocalStorage<string>()
    const batcher = new ScopeBatcher()
    const started: Array<{ call: string; ctx: string | undefined; turn: number }> = []
    let turn = 0
    const countTurns = () => {
      turn++
      if (turn < 50) setImmediate(countTurns)
    }
    setImmediate(countTurns)
    const done = new Promise<void>((resolve) => {
      const defer = (key: string, call: string) =>
        als.run(call, () =>
          batcher.defer(key, () => {
            started.push({ call, ctx: als.getStore(), turn })
            if (started.length === 5) resolve()
          }),
        )
      defer('A', 'a1')
      defer('B', 'b1')
      defer('A', 'a2')
      defer('C', 'c1')
      defer('B', 'b2')
    })
    await done
    expect(started.map((s) => s.call)).toEqual(['a1', 'a2', 'b1', 'b2', 'c1'])
    for (const s of started) expect(s.ctx).toBe(s.call)
    const turnOf = (call: string) => started.find((s) => s.call === call)?.turn
    expect(turnOf('a1')).toBe(turnOf('a2'))
    expect(turnOf('b1')).toBe(turnOf('b2'))
    expect(turnOf('b1')).toBeGreaterThan(turnOf('a1') as number)
    expect(turnOf('c1')).toBeGreaterThan(turnOf('b1') as number)
  })

  it('nothing is started synchronously: calls of one synchronous run gather first', () => {
    const batcher = new ScopeBatcher()
    let started = 0
    batcher.defer('A', () => started++)
    expect(started).toBe(0)
  })
})
