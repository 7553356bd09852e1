import { describe, expect, it } from 'vitest'
import { noteReply, sessionTrackingSql, takeReplyPosition } from './mysql2-reply-position.js'

/** A ResultSetHeader as mysql2 parses an OK packet with session-state changes. */
const header = (changes?: { systemVariables?: Record<string, string>; gtids?: string[] }) => ({
  fieldCount: 0,
  affectedRows: 1,
  insertId: 1,
  ...(changes === undefined ? {} : { stateChanges: { schema: null, trackStateChange: null, ...changes } }),
})

describe('positions from write replies (mysql2)', () => {
  it('MariaDB last_gtid of each reply, merged per domain until taken; a take starts over', () => {
    const core = {}
    expect(takeReplyPosition(core)).toBeUndefined()
    noteReply(core, header({ systemVariables: { last_gtid: '0-1-5' } }), undefined)
    noteReply(core, header({ systemVariables: { last_gtid: '1-1-2' } }), undefined)
    noteReply(core, header({ systemVariables: { last_gtid: '0-1-7' } }), undefined)
    noteReply(core, header(), undefined) // a write with no GTID (nothing changed)
    expect(takeReplyPosition(core)).toBe('0-1-7,1-1-2')
    expect(takeReplyPosition(core)).toBeUndefined()
  })

  it('MySQL OWN_GTID sets, unioned', () => {
    const core = {}
    const uuid = '3e11fa47-71ca-11e1-9e33-c80aa9429562'
    noteReply(core, header({ gtids: [`${uuid}:5`] }), undefined)
    noteReply(core, header({ gtids: [`${uuid}:6`] }), undefined)
    expect(takeReplyPosition(core)).toBe(`${uuid}:5-6`)
  })

  it('several results (multiple statements, CALL): every header counts; rows are not scanned', () => {
    const core = {}
    const rows = [{ stateChanges: { systemVariables: { last_gtid: '9-9-9' } } }] // a row with such a column
    noteReply(core, rows, [{ name: 'stateChanges' }])
    expect(takeReplyPosition(core)).toBeUndefined()
    const multi = [
      header({ systemVariables: { last_gtid: '0-1-3' } }),
      [{ x: 1 }],
      header({ systemVariables: { last_gtid: '2-1-1' } }),
    ]
    noteReply(core, multi, [undefined, [{ name: 'x' }], undefined])
    expect(takeReplyPosition(core)).toBe('0-1-3,2-1-1')
  })

  it('connections are kept apart', () => {
    const a = {}
    const b = {}
    noteReply(a, header({ systemVariables: { last_gtid: '0-1-1' } }), undefined)
    expect(takeReplyPosition(b)).toBeUndefined()
    expect(takeReplyPosition(a)).toBe('0-1-1')
  })

  it('turns tracking on by server flavour', () => {
    expect(sessionTrackingSql('10.11.6-MariaDB-0+deb12u1')).toMatch(
      /session_track_system_variables.*last_gtid/,
    )
    expect(sessionTrackingSql('8.0.36')).toBe('SET SESSION session_track_gtids = OWN_GTID')
    expect(sessionTrackingSql(undefined)).toBeUndefined()
  })
})

describe('positions from write replies: bounded', () => {
  it('writes nobody takes (outside sessions) are not kept without bound: past 16 reports, the take gives nothing', () => {
    const core = {}
    for (let i = 1; i <= 1000; i++)
      noteReply(core, header({ systemVariables: { last_gtid: `0-1-${i}` } }), undefined)
    expect(takeReplyPosition(core)).toBeUndefined() // the router then reads the position
    noteReply(core, header({ systemVariables: { last_gtid: '0-1-1001' } }), undefined)
    expect(takeReplyPosition(core)).toBe('0-1-1001') // a take starts over
  })
})
