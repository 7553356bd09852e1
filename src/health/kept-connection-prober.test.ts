import { describe, expect, it } from 'vitest'
import type { ProbeResult } from '../router/driver.js'
import { KeptConnectionProber, type ProbeConnectionOps } from './kept-connection-prober.js'

interface FakeConn {
  readonly id: number
  broken: boolean
  closed: boolean
  destroyed: boolean
  active: boolean
}

/** Fake probe connections (pure bookkeeping): `fail` makes the next probes on a connection throw. */
function fakeOps() {
  const conns: FakeConn[] = []
  const state = { failOn: new Set<number>(), connectError: undefined as Error | undefined, hang: false }
  const ops: ProbeConnectionOps<FakeConn> = {
    async connect(signal) {
      signal.throwIfAborted()
      if (state.connectError !== undefined) throw state.connectError
      const c = { id: conns.length + 1, broken: false, closed: false, destroyed: false, active: true }
      conns.push(c)
      return c
    },
    probe(c, signal) {
      if (c.destroyed || c.closed) return Promise.reject(new Error(`conn ${c.id} is gone`))
      if (state.failOn.has(c.id)) return Promise.reject(new Error(`conn ${c.id} failed`))
      if (state.hang)
        return new Promise<ProbeResult>((_, reject) =>
          signal.addEventListener('abort', () => reject(new Error('aborted'))),
        )
      return Promise.resolve({ role: 'replica', position: String(c.id) })
    },
    broken: (c) => c.broken,
    setActive(c, active) {
      c.active = active
    },
    close(c) {
      c.closed = true
    },
    destroy(c) {
      c.destroyed = true
    },
  }
  return { ops, conns, state }
}

const signal = () => new AbortController().signal

describe('KeptConnectionProber', () => {
  it('reuses one connection across probes', async () => {
    const { ops, conns } = fakeOps()
    const p = new KeptConnectionProber(ops, 60_000)
    for (let i = 0; i < 5; i++) expect((await p.probe(signal())).position).toBe('1')
    expect(conns).toHaveLength(1)
    expect(conns[0]?.closed).toBe(false)
    expect(conns[0]?.active).toBe(false) // idle between probes: does not keep the process alive
  })

  it('replaces a connection older than maxAgeMs, closing the old one politely', async () => {
    const { ops, conns } = fakeOps()
    const p = new KeptConnectionProber(ops, 20)
    await p.probe(signal())
    await new Promise((r) => setTimeout(r, 30))
    expect((await p.probe(signal())).position).toBe('2')
    expect(conns[0]).toMatchObject({ closed: true, destroyed: false })
  })

  it('replaces a connection that reported an error while idle, without a failed probe', async () => {
    const { ops, conns } = fakeOps()
    const p = new KeptConnectionProber(ops, 60_000)
    await p.probe(signal())
    conns[0]!.broken = true
    expect((await p.probe(signal())).position).toBe('2')
  })

  it('a kept connection that fails is destroyed and the probe retried once on a fresh one', async () => {
    const { ops, conns, state } = fakeOps()
    const p = new KeptConnectionProber(ops, 60_000)
    await p.probe(signal())
    state.failOn.add(1)
    expect((await p.probe(signal())).position).toBe('2')
    expect(conns[0]?.destroyed).toBe(true)
    expect(conns).toHaveLength(2)
  })

  it('a fresh connection that fails fails the probe, and is not kept', async () => {
    const { ops, conns, state } = fakeOps()
    const p = new KeptConnectionProber(ops, 60_000)
    state.failOn.add(1)
    await expect(p.probe(signal())).rejects.toThrow('conn 1 failed')
    expect(conns[0]?.destroyed).toBe(true)
    expect((await p.probe(signal())).position).toBe('2')
  })

  it('a failed connect fails the probe', async () => {
    const { ops, state } = fakeOps()
    const p = new KeptConnectionProber(ops, 60_000)
    state.connectError = new Error('refused')
    await expect(p.probe(signal())).rejects.toThrow('refused')
  })

  it('an abort destroys the connection at once and is not retried', async () => {
    const { ops, conns, state } = fakeOps()
    const p = new KeptConnectionProber(ops, 60_000)
    await p.probe(signal())
    state.hang = true
    const ac = new AbortController()
    const probe = p.probe(ac.signal)
    ac.abort()
    await expect(probe).rejects.toThrow('aborted')
    expect(conns[0]?.destroyed).toBe(true)
    expect(conns).toHaveLength(1)
  })

  it('close() closes the kept connection; later probes fail', async () => {
    const { ops, conns } = fakeOps()
    const p = new KeptConnectionProber(ops, 60_000)
    await p.probe(signal())
    p.close()
    p.close()
    expect(conns[0]?.closed).toBe(true)
    await expect(p.probe(signal())).rejects.toThrow('prober closed')
    expect(conns).toHaveLength(1)
  })
})
