import { describe, expect, it } from 'vitest'
import { Session } from './session.js'

describe('Session checks', () => {
  it('has nothing to settle by default', () => {
    expect(new Session().settle('default')).toBeUndefined()
  })

  it('starts a check on the first settle only, shares it, and forgets it once settled', async () => {
    const s = new Session()
    s.positions.set('default', '0/10')
    let runs = 0
    let release!: () => void
    s.addCheck('default', async () => {
      runs++
      await new Promise<void>((r) => {
        release = r
      })
      s.positions.delete('default')
    })
    expect(runs).toBe(0) // lazy: nothing runs until a read asks
    expect([s.hasCheck('default'), s.checkRunning('default')]).toEqual([true, false])
    const a = s.settle('default')
    expect(s.checkRunning('default')).toBe(true)
    const b = s.settle('default')
    expect(a).toBeInstanceOf(Promise)
    expect(b).toBe(a)
    expect(runs).toBe(1)
    expect(s.settle('other')).toBeUndefined()
    release()
    await a
    expect(s.positions.has('default')).toBe(false)
    expect([s.hasCheck('default'), s.checkRunning('default')]).toEqual([false, false])
    expect(s.settle('default')).toBeUndefined()
    expect(runs).toBe(1)
  })
})
