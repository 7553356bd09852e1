import { afterEach, describe, expect, it, vi } from 'vitest'
import { gtidReached } from '../mysql2/gtid.js'
import { lsnReached } from '../pg/pg-position.js'
import { LagTracker } from './lag-tracker.js'
import { PrimaryPosition } from './primary-position.js'
import type { Session } from './session.js'
import { TokenAudit, type TokenRejectionReport } from './token-audit.js'
import { MAX_CLOCK_SKEW_MS, MAX_TOKEN_CHARS, TokenCodec, type TokenCodecOptions } from './token-codec.js'

const NOW = 1_700_000_000_000
const SECRET = 'the current secret, 32 chars ...'
const OLD_SECRET = 'the previous secret, 16+ chars'

/** A token with any payload, unsigned. */
const raw = (payload: unknown) => `rm1.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`

type Reached = (replay: string, target: string) => boolean

/**
 * A codec over clusters whose primaries are at `primary[name]` (what a sample reads); the probes
 * have seen `probed[name]`. `samples` counts the primary reads.
 */
function setup(
  options: {
    mode?: TokenCodecOptions['mode']
    keys?: string[]
    reached?: Reached
    probed?: Record<string, string>
    primary?: Record<string, string | undefined>
  } = {},
) {
  const reached = options.reached ?? lsnReached
  const primary = { default: '0/5000000', ...options.primary }
  const probed = options.probed ?? { default: '0/4000000' }
  const samples: Record<string, number> = {}
  const clusters = new Map<string, PrimaryPosition>()
  for (const name of Object.keys(primary)) {
    const lag = new LagTracker(reached)
    const seen = probed[name]
    if (seen !== undefined) lag.recordPrimary(0, seen)
    clusters.set(
      name,
      new PrimaryPosition(reached, lag, async () => {
        samples[name] = (samples[name] ?? 0) + 1
        return primary[name as keyof typeof primary]
      }),
    )
  }
  const reports: TokenRejectionReport[] = []
  const audit = new TokenAudit((r) => reports.push(r))
  const codec = new TokenCodec({
    mode: options.mode ?? 'position',
    keys: options.keys ?? [],
    clusters,
    reached,
    audit,
    now: () => NOW,
  })
  /** Decodes and runs the checks a read of each cluster would run. */
  const resume = async (token: unknown): Promise<Session> => {
    const s = codec.decode(token)
    for (const name of clusters.keys()) await s.settle(name)
    return s
  }
  return { codec, audit, reports, samples, resume, clusters, primary }
}

const positions = (s: Session) => Object.fromEntries(s.positions)

describe('TokenCodec', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('round-trips a session: write time and positions per cluster', async () => {
    const { codec, resume, audit } = setup({
      primary: { s1: '0/100' },
      probed: { default: '0/4000000', s1: '0/100' },
    })
    const written = codec.decode(undefined)
    written.lastWriteAt = NOW - 5
    written.positions.set('default', '0/3000060')
    written.positions.set('s1', '0/100')
    written.writes = 1
    const token = codec.encode(written)
    expect(token).toMatch(/^rm1\.[A-Za-z0-9_-]+$/)
    const back = await resume(token)
    expect(back.lastWriteAt).toBe(NOW - 5)
    expect(positions(back)).toEqual({ default: '0/3000060', s1: '0/100' })
    expect(audit.stats()).toMatchObject({ received: 1, rejected: 0, ignored: 0 })
  })

  it('until a resumed session writes, its token is the one it came with; a new session has a constant one', () => {
    const { codec } = setup()
    const token = raw({ w: NOW - 10, p: { default: '0/100' } })
    const s = codec.decode(token)
    expect(codec.encode(s)).toBe(token)
    s.positions.delete('default') // a check dropped a part: still no write, still the same token
    expect(codec.encode(s)).toBe(token)
    s.writes = 1
    s.positions.set('default', '0/200')
    expect(codec.encode(s)).not.toBe(token)
    const a = codec.decode(undefined)
    const b = codec.decode(null)
    expect(codec.encode(a)).toBe(codec.encode(b))
    expect(a.origin).toBeUndefined()
  })

  it.each([
    ['not a string', 42, 'malformed'],
    ['garbage', 'garbage', 'malformed'],
    ['prefix only', 'rm1.', 'malformed'],
    ['bad base64', 'rm1.!!!', 'malformed'],
    ['not JSON', `rm1.${Buffer.from('not json').toString('base64url')}`, 'malformed'],
    ['a JSON array', raw([1, 2]), 'malformed'],
    ['three parts', `${raw({ w: 1 })}.x`, 'malformed'],
    ['positions not an object', raw({ w: 1, p: 'x' }), 'malformed'],
    ['more clusters than configured', raw({ p: { default: '0/1', a: '0/1', b: '0/1' } }), 'malformed'],
    ['oversized', `rm1.${'A'.repeat(MAX_TOKEN_CHARS)}`, 'oversized'],
  ])('rejects a token that is %s: an empty session, counted', async (_what, token, reason) => {
    const { resume, audit } = setup()
    const s = await resume(token)
    expect(s.lastWriteAt).toBe(0)
    expect(s.positions.size).toBe(0)
    expect(s.origin).toBeUndefined()
    expect(audit.stats().rejected).toBe(1)
    expect(audit.stats().reasons[reason as 'malformed']).toBe(1)
  })

  it('does not count an absent token', () => {
    const { codec, audit } = setup()
    for (const t of [undefined, null, '']) codec.decode(t)
    expect(audit.stats().received).toBe(0)
  })

  it('drops ill-typed fields, unknown clusters and unparsable positions, keeps the rest', async () => {
    const { resume, audit } = setup({ primary: { s1: '0/100' } })
    const s = await resume(raw({ w: 'x', p: { default: 7, s1: '0/10' } }))
    expect(s.lastWriteAt).toBe(0)
    expect(positions(s)).toEqual({ s1: '0/10' })
    const t = await resume(raw({ p: { nope: '0/1', default: 'zz/zz' } }))
    expect(t.positions.size).toBe(0)
    expect(audit.stats().reasons).toMatchObject({ 'bad-position': 2, 'unknown-cluster': 1 })
    expect(audit.stats().rejected).toBe(0)
  })

  describe('write time (window mode)', () => {
    it('a forged far-future write time ({"w":1e300}) is dropped, not clamped to a fresh window', async () => {
      const { resume, audit, reports } = setup({ mode: 'window' })
      const s = await resume(raw({ w: 1e300, p: {} }))
      expect(s.lastWriteAt).toBe(0)
      expect(audit.stats().reasons['future-write']).toBe(1)
      expect(reports).toEqual([{ count: 1, reasons: { 'future-write': 1 } }])
    })

    it('a write time a little ahead (clock skew) is clamped to now; a past one is kept', async () => {
      const { resume, audit } = setup({ mode: 'window' })
      expect((await resume(raw({ w: NOW + MAX_CLOCK_SKEW_MS }))).lastWriteAt).toBe(NOW)
      expect((await resume(raw({ w: NOW - 1500 }))).lastWriteAt).toBe(NOW - 1500)
      expect((await resume(raw({ w: NOW + MAX_CLOCK_SKEW_MS + 1 }))).lastWriteAt).toBe(0)
      expect(audit.stats().reasons['future-write']).toBe(1)
    })

    it('clamps against the wall clock by default (fake timers)', () => {
      vi.useFakeTimers()
      vi.setSystemTime(NOW)
      const audit = new TokenAudit(() => {})
      const codec = new TokenCodec({
        mode: 'window',
        keys: [],
        clusters: new Map(),
        reached: lsnReached,
        audit,
      })
      expect(codec.decode(raw({ w: NOW + 500 })).lastWriteAt).toBe(NOW)
      vi.setSystemTime(NOW + 10_000)
      expect(codec.decode(raw({ w: NOW + 10_500 })).lastWriteAt).toBe(NOW + 10_000)
      expect(codec.decode(raw({ w: NOW + 20_000 })).lastWriteAt).toBe(0)
    })

    it('window mode ignores positions, off mode ignores everything', async () => {
      const w = setup({ mode: 'window' })
      expect((await w.resume(raw({ w: NOW - 1, p: { default: '0/1' } }))).positions.size).toBe(0)
      const off = setup({ mode: 'off' })
      const s = await off.resume(raw({ w: NOW - 1, p: { default: '0/1' } }))
      expect([s.lastWriteAt, s.positions.size]).toEqual([0, 0])
    })
  })

  describe('positions (PostgreSQL LSNs)', () => {
    it('a position the probes have seen the primary reach is kept with no primary read', async () => {
      const { resume, samples } = setup()
      const s = await resume(raw({ p: { default: '0/3FFFFFF' } }))
      expect(positions(s)).toEqual({ default: '0/3FFFFFF' })
      expect(samples.default).toBeUndefined()
    })

    it('a fresher honest position (another instance wrote it a moment ago) is kept after one primary sample', async () => {
      const { resume, samples, audit } = setup()
      const s = await resume(raw({ p: { default: '0/4800000' } }))
      expect(positions(s)).toEqual({ default: '0/4800000' })
      expect(samples.default).toBe(1)
      expect(audit.stats().ignored).toBe(0)
    })

    it('a far-future position (FFFFFFFF/FFFFFFFF) is dropped after the sample, and counted', async () => {
      const { resume, audit } = setup()
      const s = await resume(raw({ w: NOW, p: { default: 'FFFFFFFF/FFFFFFFF' } }))
      expect(s.positions.size).toBe(0)
      expect(audit.stats().reasons['ahead-of-primary']).toBe(1)
    })

    it('the check is lazy: a session that never reads that cluster costs the primary nothing', () => {
      const { codec, samples } = setup()
      const s = codec.decode(raw({ p: { default: 'FFFFFFFF/FFFFFFFF' } }))
      expect(s.positions.get('default')).toBe('FFFFFFFF/FFFFFFFF') // still pending
      expect(samples.default).toBeUndefined()
    })

    it('a check does not drop a position the session wrote meanwhile', async () => {
      const { codec } = setup()
      const s = codec.decode(raw({ p: { default: 'FFFFFFFF/FFFFFFFF' } }))
      s.writes = 1
      s.positions.set('default', '0/4900000')
      await s.settle('default')
      expect(positions(s)).toEqual({ default: '0/4900000' })
    })

    it('with no primary to sample, a position cannot be disproved: it stays (safe for reads)', async () => {
      const { resume, audit } = setup({ primary: { default: undefined } })
      const s = await resume(raw({ p: { default: '0/4800000' } }))
      expect(positions(s)).toEqual({ default: '0/4800000' })
      expect(audit.stats().ignored).toBe(0)
    })

    it('an "unknown" position from another router becomes the primary\'s position sampled after arrival', async () => {
      const { resume, codec, samples } = setup()
      const s = await resume(
        raw({ w: NOW - 1, p: { default: 'unknown' }, s: { default: 1 }, i: 'elsewhere' }),
      )
      expect(positions(s)).toEqual({ default: '0/5000000' })
      expect(samples.default).toBe(1)
      const wrote = codec.decode(raw({ p: { default: 'unknown' } }))
      wrote.writes = 1
      wrote.positions.set('default', 'unknown') // its own write's position failed too: newer than a sample
      await wrote.settle('default')
      expect(positions(wrote)).toEqual({ default: 'unknown' })
    })

    /** A session of this router that wrote (stamp taken) and has not read the position yet. */
    const wroteHere = (codec: TokenCodec, known: PrimaryPosition) => {
      const s = codec.decode(undefined)
      s.writes = 1
      s.lastWriteAt = NOW - 1
      const stamp = known.stampWrite()
      s.positions.set('default', 'unknown')
      s.pendingWrites.set('default', stamp)
      return s
    }
    const payload = (token: string) =>
      JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString('utf8'))

    it('a write-only session\'s token: "unknown" with its stamp, and a sample started; back here, that sample answers at once', async () => {
      const { codec, clusters, samples, primary } = setup()
      const known = clusters.get('default') as PrimaryPosition
      const token = codec.encode(wroteHere(codec, known))
      expect(payload(token)).toMatchObject({
        p: { default: 'unknown' },
        s: { default: 1 },
        i: expect.any(String),
      })
      await new Promise((r) => setImmediate(r))
      expect(samples.default).toBe(1) // started by the token
      primary.default = '0/6000000' // the primary moved on: the sample already taken covers the write
      const back = codec.decode(token)
      expect(positions(back)).toEqual({ default: '0/5000000' })
      expect(back.hasCheck('default')).toBe(false)
      expect(samples.default).toBe(1)
      // A later write-only session while that sample is known: its token carries a real position
      // only if the sample started after its write.
      const later = wroteHere(codec, known)
      expect(payload(codec.encode(later)).p).toEqual({ default: 'unknown' })
      await new Promise((r) => setTimeout(r, 20)) // (the spacing between samples: 5 ms)
      expect(payload(codec.encode(later))).toEqual({ w: NOW - 1, p: { default: '0/6000000' } })
    })

    it("a stamp is this router's only with its id and at most its count of writes: else a sample after arrival", async () => {
      const { codec, clusters, samples } = setup()
      const known = clusters.get('default') as PrimaryPosition
      const id = payload(codec.encode(wroteHere(codec, known))).i as string
      await new Promise((r) => setImmediate(r))
      expect(samples.default).toBe(1)
      for (const forged of [
        { p: { default: 'unknown' }, s: { default: 2 }, i: id }, // no such write yet
        { p: { default: 'unknown' }, s: { default: 1 }, i: 'x' }, // another router's
        { p: { default: 'unknown' }, s: { default: 'a' }, i: id },
      ]) {
        const s = codec.decode(raw(forged))
        expect(s.hasCheck('default')).toBe(true)
        await s.settle('default')
        expect(positions(s)).toEqual({ default: '0/5000000' })
      }
      expect(samples.default).toBeGreaterThan(1)
    })

    it('30 concurrent forged "unknown" tokens (stamps or not) cost the primary one sample at a time', async () => {
      const { codec, clusters, samples } = setup()
      const known = clusters.get('default') as PrimaryPosition
      const id = payload(codec.encode(wroteHere(codec, known))).i as string
      await new Promise((r) => setImmediate(r))
      for (let k = 0; k < 5; k++) known.stampWrite() // writes meanwhile: the forged stamps are real ones
      const before = samples.default ?? 0
      const sessions = Array.from({ length: 30 }, (_, i) =>
        codec.decode(
          raw(
            i % 2 === 0
              ? { p: { default: 'unknown' }, s: { default: 2 + (i % 5) }, i: id }
              : { p: { default: 'unknown' } },
          ),
        ),
      )
      await Promise.all(sessions.map((s) => s.settle('default')))
      expect(sessions.every((s) => s.positions.get('default') === '0/5000000')).toBe(true)
      expect((samples.default ?? 0) - before).toBeLessThanOrEqual(2)
    })

    it('30 concurrent forged tokens cost the primary one sample at a time, not one each', async () => {
      const { codec, samples, audit } = setup()
      const sessions = Array.from({ length: 30 }, (_, i) =>
        codec.decode(raw({ p: { default: `FFFFFFFF/${i.toString(16)}` } })),
      )
      await Promise.all(sessions.map((s) => s.settle('default')))
      expect(sessions.every((s) => s.positions.size === 0)).toBe(true)
      expect(samples.default).toBeLessThanOrEqual(2)
      expect(audit.stats().reasons['ahead-of-primary']).toBe(30)
    })
  })

  describe('positions (MariaDB GTIDs)', () => {
    const maria = () =>
      setup({ reached: gtidReached, primary: { default: '0-1-500' }, probed: { default: '0-1-400' } })

    it('keeps a reached GTID, checks a fresher one, drops one far ahead or of a domain the primary lacks', async () => {
      const { resume, audit } = maria()
      expect(positions(await resume(raw({ p: { default: '0-1-399' } })))).toEqual({ default: '0-1-399' })
      expect(positions(await resume(raw({ p: { default: '0-2-450' } })))).toEqual({ default: '0-2-450' })
      expect((await resume(raw({ p: { default: '0-1-99999999999' } }))).positions.size).toBe(0)
      expect((await resume(raw({ p: { default: '0-1-1,7-1-1' } }))).positions.size).toBe(0)
      expect(audit.stats().reasons['ahead-of-primary']).toBe(2)
      // A pg LSN is not a GTID.
      expect((await resume(raw({ p: { default: '0/3000060' } }))).positions.size).toBe(0)
      expect(audit.stats().reasons['bad-position']).toBe(1)
    })
  })

  describe('signed tokens (tokens.secret)', () => {
    it('signs every token it makes, and accepts them back', async () => {
      const { codec, resume, audit } = setup({ keys: [SECRET] })
      const s = codec.decode(undefined)
      s.writes = 1
      s.lastWriteAt = NOW - 1
      s.positions.set('default', '0/100')
      const token = codec.encode(s)
      expect(token).toMatch(/^rm1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]{43}$/)
      expect(positions(await resume(token))).toEqual({ default: '0/100' })
      expect(audit.stats().rejected).toBe(0)
    })

    it('ignores and counts unsigned, altered and foreign tokens', async () => {
      const { codec, resume, audit } = setup({ keys: [SECRET] })
      const s = codec.decode(undefined)
      s.writes = 1
      s.positions.set('default', '0/100')
      const token = codec.encode(s)
      const [prefix, payload, kid, mac] = token.split('.') as [string, string, string, string]
      const forgedPayload = raw({ w: 1e300, p: { default: 'FFFFFFFF/FFFFFFFF' } }).slice(4)
      const other = setup({ keys: ['another app secret, 16+'] })
      const foreign = other.codec.decode(undefined)
      foreign.writes = 1
      foreign.positions.set('default', '0/100')
      const cases: Array<[string, string]> = [
        [raw({ p: { default: '0/100' } }), 'unsigned'],
        [`${prefix}.${forgedPayload}.${kid}.${mac}`, 'bad-signature'],
        [`${prefix}.${payload}.${kid}.${mac.slice(0, -2)}AA`, 'bad-signature'],
        [`${prefix}.${payload}.AAAAAAAA.${mac}`, 'bad-signature'],
        [other.codec.encode(foreign), 'bad-signature'],
      ]
      for (const [t, reason] of cases) {
        const before = audit.stats().reasons[reason as 'unsigned']
        const r = await resume(t)
        expect([r.lastWriteAt, r.positions.size, r.origin]).toEqual([0, 0, undefined])
        expect(audit.stats().reasons[reason as 'unsigned']).toBe(before + 1)
      }
      expect(audit.stats().rejected).toBe(cases.length)
    })

    it('rotation: tokens signed with the previous key are accepted, new ones are signed with the current key', async () => {
      const before = setup({ keys: [OLD_SECRET] })
      const during = setup({ keys: [SECRET, OLD_SECRET] })
      const after = setup({ keys: [SECRET] })
      const s = before.codec.decode(undefined)
      s.writes = 1
      s.positions.set('default', '0/100')
      const oldToken = before.codec.encode(s)
      const resumed = await during.resume(oldToken)
      expect(positions(resumed)).toEqual({ default: '0/100' })
      resumed.writes = 1
      const newToken = during.codec.encode(resumed)
      expect(positions(await after.resume(newToken))).toEqual({ default: '0/100' })
      expect(after.audit.stats().rejected).toBe(0)
      expect((await after.resume(oldToken)).positions.size).toBe(0) // the old key is retired
      expect(after.audit.stats().reasons['bad-signature']).toBe(1)
    })

    it('a signed position is trusted without a primary sample; still bounded and parsed', async () => {
      const { codec, resume, samples } = setup({ keys: [SECRET] })
      const s = codec.decode(undefined)
      s.writes = 1
      s.positions.set('default', '0/4800000') // written a moment ago by an instance sharing the key
      const back = await resume(codec.encode(s))
      expect(positions(back)).toEqual({ default: '0/4800000' })
      expect(samples.default).toBeUndefined()
    })

    it('without a secret, a signed token is read as an unsigned one (and validated like one)', async () => {
      const signer = setup({ keys: [SECRET] })
      const s = signer.codec.decode(undefined)
      s.writes = 1
      s.positions.set('default', 'FFFFFFFF/FFFFFFFF')
      const plain = setup()
      const back = await plain.resume(signer.codec.encode(s))
      expect(back.positions.size).toBe(0)
      expect(plain.audit.stats().reasons['ahead-of-primary']).toBe(1)
    })
  })
})
