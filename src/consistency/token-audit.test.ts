import { describe, expect, it } from 'vitest'
import { TOKEN_REPORT_INTERVAL_MS, TokenAudit, type TokenRejectionReport } from './token-audit.js'

describe('TokenAudit', () => {
  it('counts whole rejections and dropped parts apart, by reason', () => {
    const audit = new TokenAudit(() => {})
    audit.received()
    audit.received()
    audit.reject('bad-signature')
    audit.reject('unsigned')
    audit.reject('ahead-of-primary')
    audit.reject('ahead-of-primary')
    audit.reject('future-write')
    const s = audit.stats()
    expect(s).toMatchObject({ received: 2, rejected: 2, ignored: 3 })
    expect(s.reasons).toEqual({
      malformed: 0,
      oversized: 0,
      unsigned: 1,
      'bad-signature': 1,
      'future-write': 1,
      'unknown-cluster': 0,
      'bad-position': 0,
      'ahead-of-primary': 2,
    })
  })

  it('reports the first rejection at once, then at most once per interval with everything since', () => {
    let now = 1_000_000
    const reports: TokenRejectionReport[] = []
    const audit = new TokenAudit(
      (r) => reports.push(r),
      () => now,
    )
    audit.reject('malformed')
    expect(reports).toEqual([{ count: 1, reasons: { malformed: 1 } }])
    // A flood within the interval: no report, only counts.
    for (let i = 0; i < 10_000; i++) {
      now += 0.5
      audit.reject(i % 2 === 0 ? 'bad-signature' : 'ahead-of-primary')
    }
    expect(reports).toHaveLength(1)
    now = 1_000_000 + TOKEN_REPORT_INTERVAL_MS
    audit.reject('oversized')
    expect(reports).toHaveLength(2)
    expect(reports[1]).toEqual({
      count: 10_001,
      reasons: { 'bad-signature': 5000, 'ahead-of-primary': 5000, oversized: 1 },
    })
    expect(audit.stats().rejected + audit.stats().ignored).toBe(10_002)
  })
})
