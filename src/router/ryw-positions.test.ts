import { describe, expect, it, vi } from 'vitest'
import { createRouter } from '../index.js'
import type { Driver, DriverPool } from './driver.js'
import type { QueryObservation } from './router-node.js'

/**
 * A pure in-memory driver for the read-your-writes bookkeeping: positions are numbers; each write
 * on the primary commits the next one; the replica has replayed `replayed`. Counts the primary
 * position reads (`positionAfterWrite`).
 */
function positionDriver(options: { reply?: boolean } = {}) {
  const state = { committed: 0, replayed: 0, positionReads: 0 }
  let lastWrite = new WeakMap<object, number>()
  const driver: Driver = {
    dialect: 'postgres',
    name: 'fake-positions',
    createPool: (node): DriverPool => ({
      acquire: async () => ({ node: node.name }),
      release: () => {},
      destroy: () => {},
      end: async () => {},
      counts: () => ({ total: 0, idle: 0, waiting: 0 }),
    }),
    execute: async (conn, stmt) => {
      await new Promise((r) => setImmediate(r)) // a round trip
      if (String(stmt).startsWith('INSERT')) {
        state.committed++
        lastWrite.set(conn as object, state.committed)
        return { rows: [{ n: state.committed }], rowCount: 1 }
      }
      return { rows: [], rowCount: 1 }
    },
    probe: async (node) => ({ role: node.name === 'primary' ? 'primary' : 'replica' }),
    positionReached: (replay, target) => Number(replay) >= Number(target),
    positionAfterWrite: async () => {
      state.positionReads++
      const seen = state.committed
      await new Promise((r) => setImmediate(r))
      return String(seen)
    },
    waitForPosition: async () => String(state.replayed),
    beginSql: () => 'BEGIN',
    savepointSql: (n) => `SAVEPOINT ${n}`,
    classify: () => 'statement',
  }
  if (options.reply === true) {
    driver.takeReplyPosition = (conn) => {
      const w = lastWrite.get(conn as object)
      lastWrite = new WeakMap()
      return w === undefined ? undefined : String(w)
    }
    driver.mergePositions = (a, b) => String(Math.max(Number(a), Number(b)))
  }
  return { driver, state }
}

const makeRouter = (driver: Driver, maxWaitMs = 0) =>
  createRouter({
    driver,
    primary: 'postgres://u@primary/db',
    replicas: ['postgres://u@replica/db'],
    healthCheck: false,
    readYourWrites: { mode: 'position', maxWaitMs },
  })

/** The session's position for the default cluster, from its token. */
const positionOf = (token: string | undefined): string =>
  JSON.parse(Buffer.from(String(token).split('.')[1] ?? '', 'base64url').toString()).p.default

describe('read-your-writes positions (fake driver)', () => {
  it('every statement sent on a held connection reaches onQuery once, with its duration and outcome (a failed session write, a failed catch-up read)', async () => {
    const { driver, state } = positionDriver({ reply: true })
    const execute = driver.execute
    driver.execute = async (conn, stmt, params) => {
      if (!String(stmt).includes('fail')) return execute(conn, stmt, params)
      await new Promise((r) => setImmediate(r))
      throw new Error('statement failed')
    }
    state.replayed = 10 // the replica is ahead of the session: its reads are caught-up reads there
    const router = makeRouter(driver, 5) // a wait allowed: the first read checks the replica on its connection
    const seen: QueryObservation[] = []
    router.onQuery((o) => seen.push(o))
    try {
      await router.session(async () => {
        await router.query('INSERT INTO t VALUES (1)')
        await expect(router.query('INSERT INTO fail VALUES (1)')).rejects.toThrow('statement failed')
        // The first read checks the replica's position on its connection (a catch-up read).
        await expect(router.readOnly(() => router.query('SELECT fail'))).rejects.toThrow('statement failed')
        await router.readOnly(() => router.query('SELECT 1'))
      })
      expect(seen.map((o) => [o.node, o.role, o.ok])).toEqual([
        ['primary', 'primary', true],
        ['primary', 'primary', false],
        ['replica1', 'replica', false],
        ['replica1', 'replica', true],
      ])
      expect(seen.every((o) => o.durationMs >= 0)).toBe(true)
      expect(router.stats().clusters[0]?.readYourWritesRedirects).toBe(0)
    } finally {
      await router.close()
    }
  })

  it('a write reads no position; concurrent sessions that then read share position reads, each covering its own write', async () => {
    const { driver, state } = positionDriver()
    const router = makeRouter(driver)
    try {
      const results = await Promise.all(
        Array.from({ length: 32 }, () =>
          router.session(async () => {
            const mine = Number((await router.query('INSERT INTO t VALUES (1)')).rows[0]?.n) // this write's number
            const before = positionOf(router.consistencyToken())
            // (to the primary at once: the position is read beside it, for the next reads and the token)
            await router.readOnly(() => router.query('SELECT 1'))
            await vi.waitFor(() => expect(positionOf(router.consistencyToken())).not.toBe('unknown'))
            return { mine, before, after: positionOf(router.consistencyToken()) }
          }),
        ),
      )
      for (const r of results) {
        expect(r.before).toBe('unknown') // nothing read at write time
        expect(Number(r.after)).toBeGreaterThanOrEqual(r.mine)
      }
      expect(state.positionReads).toBeGreaterThan(0)
      expect(state.positionReads).toBeLessThan(32 / 2)
    } finally {
      await router.close()
    }
  })

  it("no wait (the default): a session's first read after a write goes to the primary at once, not after the read of the write's position; with a wait it waits for it", async () => {
    for (const maxWaitMs of [0, 5]) {
      const { driver, state } = positionDriver()
      state.replayed = 100 // the replica is far ahead: once the position is known, reads may go there
      let release: () => void = () => {}
      const held = new Promise<void>((r) => {
        release = r
      })
      const positionAfterWrite = driver.positionAfterWrite
      driver.positionAfterWrite = async (conn) => {
        await held
        return positionAfterWrite?.(conn)
      }
      const nodes: string[] = []
      driver.execute = async (conn, stmt) => {
        await new Promise((r) => setImmediate(r))
        nodes.push((conn as { node: string }).node)
        if (String(stmt).startsWith('INSERT')) state.committed++
        return { rows: [], rowCount: 1 }
      }
      const router = makeRouter(driver, maxWaitMs)
      try {
        await router.session(async () => {
          await router.query('INSERT INTO t VALUES (1)')
          let done = false
          const reading = router
            .readOnly(() => router.query('SELECT 1'))
            .then(() => {
              done = true
            })
          for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
          expect(done).toBe(maxWaitMs === 0) // no wait: answered while the position read is held
          release()
          await reading
          expect(nodes.at(-1)).toBe(maxWaitMs === 0 ? 'primary' : 'replica1')
          await vi.waitFor(() => expect(positionOf(router.consistencyToken())).toBe('1'))
        })
      } finally {
        await router.close()
      }
    }
  })

  it("no wait: once a session's position is read, one replay read starts at once (not held back by the spacing), shared by the sessions of that sample, the replicas taking turns", async () => {
    const { driver, state } = positionDriver()
    const replayReads: string[] = []
    driver.waitForPosition = async (conn) => {
      replayReads.push((conn as { node: string }).node)
      await new Promise((r) => setImmediate(r))
      return String(state.committed) // the replicas keep up: a read covers what was committed before it
    }
    const nodes: string[] = []
    const execute = driver.execute
    driver.execute = async (conn, stmt, params) => {
      const r = await execute(conn, stmt, params)
      nodes.push((conn as { node: string }).node)
      return r
    }
    const router = createRouter({
      driver,
      primary: 'postgres://u@primary/db',
      replicas: ['postgres://u@replica1/db', 'postgres://u@replica2/db'],
      healthCheck: false,
      readYourWrites: { mode: 'position' },
    })
    /** A session that writes, reads (on the primary: its position is still to be read), waits for that read and the replay read it starts, then reads once more: where that read ran. */
    const session = () =>
      router.session(async () => {
        const reads = replayReads.length
        await router.query('INSERT INTO t VALUES (1)')
        await router.readOnly(() => router.query('SELECT 1'))
        expect(nodes.at(-1)).toBe('primary')
        await vi.waitFor(() => expect(positionOf(router.consistencyToken())).not.toBe('unknown'))
        await vi.waitFor(() => expect(replayReads.length).toBeGreaterThan(reads))
        for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
        await router.readOnly(() => router.query('SELECT 1'))
        return nodes.at(-1)
      })
    try {
      const t0 = performance.now()
      const first = await session()
      const second = await session() // well within the 10 ms spacing of replay reads: still one at once
      if (performance.now() - t0 < 10) expect(replayReads).toEqual(['replica1', 'replica2'])
      expect([first, second]).toEqual(['replica1', 'replica2'])
      // Two sessions whose writes share one position sample share one replay read too.
      const before = replayReads.length
      await Promise.all([session(), session()])
      expect(replayReads.length - before).toBe(1)
    } finally {
      await router.close()
    }
  })

  it('sessions that only write read no position', async () => {
    const { driver, state } = positionDriver()
    const router = makeRouter(driver)
    try {
      await Promise.all(
        Array.from({ length: 20 }, () => router.session(() => router.query('INSERT INTO t VALUES (1)'))),
      )
      await router.transaction(async (tx) => {
        await tx.query('INSERT INTO t VALUES (2)')
      })
      expect(state.committed).toBe(21)
      expect(state.positionReads).toBe(0)
    } finally {
      await router.close()
    }
  })

  it('a later write of the session is covered too, even while the position of an earlier one is being read', async () => {
    const { driver, state } = positionDriver()
    const router = makeRouter(driver)
    try {
      await router.session(async () => {
        await router.query('INSERT INTO t VALUES (1)')
        const reading = router.readOnly(() => router.query('SELECT 1')) // starts the position read
        await router.query('INSERT INTO t VALUES (2)')
        const second = state.committed
        await reading
        await router.readOnly(() => router.query('SELECT 1'))
        await vi.waitFor(() => expect(positionOf(router.consistencyToken())).not.toBe('unknown'))
        expect(Number(positionOf(router.consistencyToken()))).toBeGreaterThanOrEqual(second)
      })
    } finally {
      await router.close()
    }
  })

  it('with positions in the replies: none is read, and the session keeps the merge of its writes', async () => {
    const { driver, state } = positionDriver({ reply: true })
    const router = makeRouter(driver)
    try {
      await router.session(async () => {
        await router.query('INSERT INTO t VALUES (1)')
        expect(positionOf(router.consistencyToken())).toBe('1')
        await router.transaction(async (tx) => {
          await tx.query('INSERT INTO t VALUES (2)')
        })
        expect(positionOf(router.consistencyToken())).toBe('2')
        await router.query('UPDATE t SET v = 1 WHERE false') // no position in the reply: lazy
        expect(positionOf(router.consistencyToken())).toBe('unknown')
        await router.readOnly(() => router.query('SELECT 1'))
        await vi.waitFor(() => expect(positionOf(router.consistencyToken())).toBe('2'))
      })
      expect(state.positionReads).toBe(1)
    } finally {
      await router.close()
    }
  })
})
