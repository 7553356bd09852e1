import { describe, expect, it } from 'vitest'
import { ansi, stripAnsi, useColor } from './ansi.js'
import type { StatusReport } from './status-report.js'
import { renderStatus } from './status-table.js'

const node = {
  cluster: 'default',
  url: 'postgres://app:***@h/app',
  trusted: true,
  usable: true,
  unusableReason: null,
  error: null,
} as const

const report: StatusReport = {
  version: 1,
  config: 'routemate.config.yaml',
  dialect: 'postgres',
  ok: true,
  checkedAt: '2025-01-01T00:00:00.000Z',
  errors: [],
  warnings: ['replica "replica2" is down: connect ECONNREFUSED 127.0.0.1:5434'],
  clusters: [
    { name: 'default', primary: 'primary', primaryOk: true, fallingBack: false, candidates: ['replica1'] },
  ],
  nodes: [
    {
      ...node,
      name: 'primary',
      expectedRole: 'primary',
      actualRole: 'primary',
      state: 'up',
      latencyMs: 3,
      lagMs: null,
    },
    {
      ...node,
      name: 'replica1',
      expectedRole: 'replica',
      actualRole: 'replica',
      state: 'up',
      latencyMs: 12,
      lagMs: 0,
    },
    {
      ...node,
      name: 'replica2',
      expectedRole: 'replica',
      actualRole: 'unknown',
      state: 'down',
      usable: false,
      unusableReason: 'down',
      latencyMs: 1,
      lagMs: null,
      error: 'connect ECONNREFUSED 127.0.0.1:5434',
    },
  ],
}

describe('renderStatus', () => {
  it('renders an aligned plain table with a summary', () => {
    expect(renderStatus(report, ansi(false))).toBe(
      [
        'routemate.config.yaml: 1 cluster, 3 nodes (postgres)',
        '',
        'SHARD    NODE      EXPECTED  ACTUAL   STATE  LATENCY MS  LAG MS  NOTE',
        'default  primary   primary   primary  up              3       -',
        'default  replica1  replica   replica  up             12       0',
        'default  replica2  replica   unknown  down            1       -  connect ECONNREFUSED 127.0.0.1:5434',
        '',
        '! replica "replica2" is down: connect ECONNREFUSED 127.0.0.1:5434',
        '✓ every primary is up (2 of 3 nodes up, 1 warning)',
        '',
      ].join('\n'),
    )
  })

  it('colours the same text when enabled', () => {
    const coloured = renderStatus(report, ansi(true))
    expect(coloured).toContain('\u001b[31mdown\u001b[39m')
    expect(stripAnsi(coloured)).toBe(renderStatus(report, ansi(false)))
  })
})

describe('useColor', () => {
  it.each([
    [true, {}, true],
    [false, {}, false],
    [true, { NO_COLOR: '1' }, false],
    [true, { NO_COLOR: '' }, true],
    [false, { FORCE_COLOR: '1' }, true],
    [false, { FORCE_COLOR: '0' }, false],
    [true, { NO_COLOR: '1', FORCE_COLOR: '1' }, true],
  ])('isTTY %s, env %j -> %s', (isTTY, env, expected) => {
    expect(useColor({ isTTY, env })).toBe(expected)
  })
})
