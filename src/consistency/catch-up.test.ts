import { describe, expect, it } from 'vitest'
import {
  caughtUpReplica,
  chooseCatchUp,
  hasReplayed,
  type PositionDriver,
  waitForCatchUp,
} from './catch-up.js'

/** Positions are numbers as strings; the server on a connection replays up to `conn.replay`. */
interface Conn {
  replay: string | undefined
  fail?: Error
}
const driver: PositionDriver<Conn> = {
  positionReached: (replay, target) => Number(replay) >= Number(target),
  waitForPosition: async (conn) => {
    if (conn.fail !== undefined) throw conn.fail
    return conn.replay
  },
}
const node = (name: string, position?: string, lagMs?: number) => ({ name, position, lagMs })

describe('read-your-writes catch-up decisions', () => {
  it('hasReplayed: only a known position at or past the token', () => {
    expect(hasReplayed(driver, node('a'), '5')).toBe(false)
    expect(hasReplayed(driver, node('a', '4'), '5')).toBe(false)
    expect(hasReplayed(driver, node('a', '5'), '5')).toBe(true)
  })

  it('caughtUpReplica: the first caught-up candidate, never the excluded one', () => {
    const a = node('a', '9')
    const b = node('b', '7')
    const c = node('c', '1')
    expect(caughtUpReplica(driver, [c, a, b], '5')).toBe(a)
    expect(caughtUpReplica(driver, [c, a, b], '5', a)).toBe(b)
    expect(caughtUpReplica(driver, [c], '5')).toBeUndefined()
  })

  it('chooseCatchUp: the pick if caught up, else another caught-up one, else the one least behind to check', () => {
    const a = node('a', '1', 50)
    const b = node('b', '9', 900)
    const c = node('c', undefined, 10)
    const d = node('d', '2')
    expect(chooseCatchUp(driver, [a, b], b, '5')).toEqual({ node: b, known: true })
    expect(chooseCatchUp(driver, [a, b, c], a, '5')).toEqual({ node: b, known: true })
    expect(chooseCatchUp(driver, [a, c, d], a, '5')).toEqual({ node: c, known: false })
    expect(chooseCatchUp(driver, [d, a], d, '5')).toEqual({ node: a, known: false }) // lag unknown counts as worst
    expect(chooseCatchUp(driver, [d], d, '5')).toEqual({ node: d, known: false }) // a tie keeps the pick
  })

  it('waitForCatchUp: the replay position when reached; undefined when not, or for a token the server rejects; node failures thrown', async () => {
    const nodeFailure = (err: unknown) => err instanceof Error && err.message === 'reset'
    expect(await waitForCatchUp(driver, { replay: '6' }, '5', 10, nodeFailure)).toBe('6')
    expect(await waitForCatchUp(driver, { replay: '4' }, '5', 10, nodeFailure)).toBeUndefined()
    expect(await waitForCatchUp(driver, { replay: undefined }, '5', 10, nodeFailure)).toBeUndefined()
    expect(
      await waitForCatchUp(driver, { replay: '6', fail: new Error('bad position') }, '5', 10, nodeFailure),
    ).toBeUndefined()
    await expect(
      waitForCatchUp(driver, { replay: '6', fail: new Error('reset') }, '5', 10, nodeFailure),
    ).rejects.toThrow('reset')
  })
})
