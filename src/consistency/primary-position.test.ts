import { afterEach, describe, expect, it, vi } from 'vitest'
import { LagTracker } from './lag-tracker.js'
import { PrimaryPosition } from './primary-position.js'

const num = (replay: string, target: string) => Number(replay) >= Number(target)

/** A PrimaryPosition whose primary reads are answered by hand, on a hand-moved clock (no spacing unless given). */
function setup(spacingMs = 0, clock?: () => number) {
  const lag = new LagTracker(num)
  let t = 0
  const reads: Array<{ resolve: (p: string | undefined) => void; reject: (e: unknown) => void }> = []
  const known = new PrimaryPosition(
    num,
    lag,
    () =>
      new Promise<string | undefined>((resolve, reject) => {
        reads.push({ resolve, reject })
      }),
    clock ?? (() => t),
    spacingMs,
  )
  const tick = (ms = 1) => {
    t += ms
    return t
  }
  const flush = () => new Promise((r) => setImmediate(r))
  return { lag, known, reads, tick, now: () => t, flush }
}

describe('PrimaryPosition', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('covers what a probe sample or an own write reached, nothing beyond', () => {
    const { lag, known } = setup()
    expect(known.covers('1')).toBe(false)
    lag.recordPrimary(0, '10')
    expect(known.covers('10')).toBe(true)
    expect(known.covers('11')).toBe(false)
    known.observe('20')
    expect(known.covers('15')).toBe(true)
    known.observe('12') // older: kept at 20
    expect(known.covers('20')).toBe(true)
    expect(known.covers('21')).toBe(false)
    known.clear()
    expect(known.covers('15')).toBe(false)
    expect(known.covers('10')).toBe(true) // the lag tracker is cleared by its own owner
  })

  it('one sample at a time: checks from before it started wait for the next one, later ones share it', async () => {
    const { known, reads, tick, flush } = setup()
    const a = known.sampleAfter(tick()) // t=1: starts sample #1 (at 1)
    await flush()
    expect(reads).toHaveLength(1)
    const b = known.sampleAfter(1) // the running one started at 1: shared
    const c = known.sampleAfter(tick()) // t=2: started too early for it: queued
    const d = known.sampleAfter(2) // joins the queued one
    await flush()
    expect(reads).toHaveLength(1)
    reads[0]?.resolve('100')
    expect(await a).toBe('100')
    expect(await b).toBe('100')
    await flush()
    expect(reads).toHaveLength(2) // the queued sample started after #1 ended
    reads[1]?.resolve('150')
    expect(await c).toBe('150')
    expect(await d).toBe('150')
    expect(known.covers('150')).toBe(true) // samples count as known positions
    // A finished sample that started late enough answers at once.
    expect(await known.sampleAfter(2)).toBe('150')
    expect(reads).toHaveLength(2)
  })

  it('a failed read answers undefined and is not recorded; the next check samples again', async () => {
    const { known, reads, tick, flush } = setup()
    const a = known.sampleAfter(tick())
    await flush()
    reads[0]?.reject(new Error('primary down'))
    expect(await a).toBeUndefined()
    expect(known.covers('1')).toBe(false)
    const b = known.sampleAfter(tick())
    await flush()
    expect(reads).toHaveLength(2)
    reads[1]?.resolve(undefined) // no usable primary
    expect(await b).toBeUndefined()
  })

  it('under a flood, two samples start at least spacingMs apart (fake timers); otherwise at once', async () => {
    vi.useFakeTimers()
    const { known, reads } = setup(5, () => Date.now())
    const settle = async () => {
      for (let i = 0; i < 5; i++) await Promise.resolve()
    }
    const a = known.sampleAfter(Date.now())
    await settle()
    expect(reads).toHaveLength(1) // nothing ran before: at once
    reads[0]?.resolve('10')
    expect(await a).toBe('10')
    vi.advanceTimersByTime(1)
    const b = known.sampleAfter(Date.now()) // 1 ms after the last start: waits for the spacing
    const c = known.sampleAfter(Date.now())
    await settle()
    expect(reads).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(3)
    expect(reads).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1) // 5 ms after the last start
    expect(reads).toHaveLength(2)
    reads[1]?.resolve('20')
    expect([await b, await c]).toEqual(['20', '20'])
    await vi.advanceTimersByTimeAsync(100)
    const d = known.sampleAfter(Date.now()) // long after: at once again
    await settle()
    expect(reads).toHaveLength(3)
    reads[2]?.resolve('30')
    expect(await d).toBe('30')
  })

  it('the clock passing the spacing between its two readings never leaves an old sample answering later checks', async () => {
    // The check sees the spacing not passed (t=2 < 0 + 5); by the time the queued sample reads the
    // clock, it has (t=6: a preemption, a GC pause). Before the fix the queued sample then started
    // synchronously and stayed queued for good: every later check got that sample (stale reads).
    let t = 0
    const script: number[] = []
    const { known, reads, flush } = setup(5, () => script.shift() ?? t)
    const a = known.sampleAfter(0) // t=0: starts at once
    await flush()
    reads[0]?.resolve('100')
    expect(await a).toBe('100')
    t = 6
    script.push(2) // what sampleAfter's own look at the clock sees; the queued sample sees 6
    const b = known.sampleAfter(2)
    await flush()
    expect(reads).toHaveLength(2)
    reads[1]?.resolve('200')
    expect(await b).toBe('200')
    // Much later, after more writes: a check must get a sample started after it, not the old one.
    t = 100
    const c = known.sampleAfter(100)
    await flush()
    expect(reads).toHaveLength(3)
    reads[2]?.resolve('300')
    expect(await c).toBe('300')
    const stamp = known.stampWrite()
    const d = known.afterWrite(stamp)
    await flush()
    expect(reads).toHaveLength(4)
    reads[3]?.resolve('400')
    expect(await d).toBe('400')
  })

  it('a sample started before clear() (the primary changed) is not recorded', async () => {
    const { known, reads, tick, flush } = setup()
    const a = known.sampleAfter(tick())
    await flush()
    known.clear()
    reads[0]?.resolve('999')
    expect(await a).toBeUndefined()
    expect(known.covers('999')).toBe(false)
  })

  describe('positions after own writes (stampWrite / afterWrite)', () => {
    it('a write costs no read; the first demand reads once, and that read serves every write stamped before it started', async () => {
      const { known, reads, flush } = setup()
      const stamps = [known.stampWrite(), known.stampWrite(), known.stampWrite()]
      await flush()
      expect(reads).toHaveLength(0) // writes alone read nothing
      const answers = stamps.map((s) => known.afterWrite(s))
      await flush()
      expect(reads).toHaveLength(1) // three demands, one read
      reads[0]?.resolve('30')
      expect(await Promise.all(answers)).toEqual(['30', '30', '30'])
      // A later demand for the same writes: the finished sample answers it, no read.
      expect(await known.afterWrite(stamps[0] as number)).toBe('30')
      expect(reads).toHaveLength(1)
    })

    it('a read started before a write finished is never used for it: the write waits for the next one, shared by the writes meanwhile', async () => {
      const { known, reads, flush } = setup(1000) // spacing: never applies to writes
      const w1 = known.stampWrite()
      const a = known.afterWrite(w1) // read #1 starts
      await flush()
      expect(reads).toHaveLength(1)
      const w2 = known.stampWrite() // finished while read #1 runs
      const w3 = known.stampWrite()
      const b = known.afterWrite(w2)
      const c = known.afterWrite(w3)
      const again = known.afterWrite(w1) // still served by read #1
      await flush()
      expect(reads).toHaveLength(1) // #2 only once #1 is done
      reads[0]?.resolve('10')
      expect(await a).toBe('10')
      expect(await again).toBe('10')
      await flush()
      expect(reads).toHaveLength(2) // at once, despite spacingMs 1000
      reads[1]?.resolve('20')
      expect(await b).toBe('20')
      expect(await c).toBe('20')
      expect(reads).toHaveLength(2)
    })

    it('a failed read gives undefined, and the next demand reads again', async () => {
      const { known, reads, flush } = setup()
      const w = known.stampWrite()
      const a = known.afterWrite(w)
      await flush()
      reads[0]?.reject(new Error('primary gone'))
      expect(await a).toBeUndefined()
      const b = known.afterWrite(w)
      await flush()
      expect(reads).toHaveLength(2)
      reads[1]?.resolve('5')
      expect(await b).toBe('5')
    })

    it('token checks and write demands share the samples', async () => {
      const { known, reads, tick, flush } = setup()
      const t = known.sampleAfter(tick())
      const w = known.afterWrite(known.stampWrite()) // stamped after sample #1 started: needs #2
      await flush()
      expect(reads).toHaveLength(1)
      const t2 = known.sampleAfter(tick()) // joins #2
      reads[0]?.resolve('1')
      expect(await t).toBe('1')
      await flush()
      expect(reads).toHaveLength(2)
      reads[1]?.resolve('2')
      expect(await w).toBe('2')
      expect(await t2).toBe('2')
    })

    it('many concurrent writers: reads stay far below writes, and every answer covers its write', async () => {
      // A simulated primary: write n commits position n; a read returns what was committed when it ran.
      let committed = 0
      const pending: Array<() => void> = []
      const known = new PrimaryPosition(num, new LagTracker(num), () => {
        const seen = committed
        return new Promise<string>((resolve) => pending.push(() => resolve(String(seen))))
      })
      const checks: Array<Promise<void>> = []
      let reads = 0
      let answered = 0
      for (let n = 1; n <= 400; n++) {
        committed = n // the write's reply has arrived...
        const stamp = known.stampWrite() // ...then it is stamped
        expect(stamp).toBe(n)
        checks.push(
          known.afterWrite(stamp).then((p) => {
            answered++
            expect(Number(p)).toBeGreaterThanOrEqual(n)
          }),
        )
        for (let k = 0; k < 3; k++) await null // let the sampler run between writes
        if (n % 7 === 0) {
          reads += pending.length
          for (const answer of pending.splice(0)) answer() // the primary answers now and then
        }
      }
      while (answered < 400) {
        await new Promise((r) => setImmediate(r))
        reads += pending.length
        for (const answer of pending.splice(0)) answer()
      }
      await Promise.all(checks)
      expect(reads).toBeGreaterThan(0)
      expect(reads).toBeLessThan(400 / 4)
    })
  })
})
