import { afterEach, describe, expect, it, vi } from 'vitest'
import { QueryTimeoutError } from '../errors/query-timeout-error.js'
import { ReadOnlyViolationError } from '../errors/read-only-violation-error.js'
import { RouterClosedError } from '../errors/router-closed-error.js'
import { WriteOutcomeUnknownError } from '../errors/write-outcome-unknown-error.js'
import {
  FakeConnectError,
  type FakeDriverKit,
  FakeReadOnlyError,
  FakeStatementError,
  fakeDriver,
  HANG,
} from './fake-driver.test-kit.js'
import type { RouterOptions } from './options.js'
import { createRouter, type Router } from './router.js'

const PRIMARY = 'postgres://db1/app'
const R1 = 'postgres://db2/app'
const R2 = 'postgres://db3/app'

function setup(options: Partial<RouterOptions> = {}): {
  kit: FakeDriverKit
  router: Router
  retries: string[]
} {
  const kit = fakeDriver()
  const router = createRouter({
    driver: kit.driver,
    primary: PRIMARY,
    replicas: [R1, R2],
    healthCheck: false,
    ...options,
  } as RouterOptions) as unknown as Router
  const retries: string[] = []
  router.on('retry', (e) => retries.push(`${e.from}->${e.to}`))
  return { kit, router, retries }
}

/** The statements each connection ran, as `node#conn: sql`. */
const log = (kit: FakeDriverKit, from = 0) => kit.statements.slice(from).map((s) => `${s.node}: ${s.sql}`)

afterEach(() => {
  vi.useRealTimers()
})

describe('TransactionRunner (fake driver)', () => {
  it('runs BEGIN, the statements and COMMIT on one primary connection; router.query inside joins it', async () => {
    const { kit, router } = setup()
    try {
      const out = await router.transaction(async (tx) => {
        expect(tx.node).toBe('primary')
        expect(tx.readOnly).toBe(false)
        await tx.query('INSERT INTO t VALUES (1)')
        await router.query('SELECT 1')
        await router.readOnly(() => router.query('SELECT 2')) // still the transaction's connection
        return 42
      })
      expect(out).toBe(42)
      expect(log(kit)).toEqual([
        'primary: BEGIN',
        'primary: INSERT INTO t VALUES (1)',
        'primary: SELECT 1',
        'primary: SELECT 2',
        'primary: COMMIT',
      ])
      expect(new Set(kit.statements.map((s) => s.conn)).size).toBe(1)
      expect(kit.pools.primary).toMatchObject({ acquired: 1, released: 1, busy: 0 })
    } finally {
      await router.close()
    }
  })

  it('rolls back when the callback throws, and rethrows its error', async () => {
    const { kit, router } = setup()
    try {
      await expect(
        router.transaction(async (tx) => {
          await tx.query('INSERT INTO t VALUES (1)')
          throw new Error('nope')
        }),
      ).rejects.toThrow('nope')
      expect(log(kit)).toEqual(['primary: BEGIN', 'primary: INSERT INTO t VALUES (1)', 'primary: ROLLBACK'])
    } finally {
      await router.close()
    }
  })

  it('nested transactions are savepoints: the outermost wins; an inner failure rolls back to its savepoint only', async () => {
    const { kit, router } = setup()
    try {
      await router.transaction(async () => {
        await router.transaction(async (inner) => {
          await inner.query('INSERT INTO t VALUES (1)')
        })
        await expect(
          router.transaction(async (inner) => {
            await inner.query('INSERT INTO t VALUES (2)')
            throw new Error('inner')
          }),
        ).rejects.toThrow('inner')
        await router.query('INSERT INTO t VALUES (3)')
      })
      expect(log(kit)).toEqual([
        'primary: BEGIN',
        'primary: SAVEPOINT routemate_sp_1',
        'primary: INSERT INTO t VALUES (1)',
        'primary: RELEASE SAVEPOINT routemate_sp_1',
        'primary: SAVEPOINT routemate_sp_2',
        'primary: INSERT INTO t VALUES (2)',
        'primary: ROLLBACK TO SAVEPOINT routemate_sp_2',
        'primary: INSERT INTO t VALUES (3)',
        'primary: COMMIT',
      ])
    } finally {
      await router.close()
    }
  })

  it('a read-only transaction runs on one replica, BEGIN READ ONLY, and refuses writes before sending them', async () => {
    const { kit, router } = setup()
    try {
      await router.readOnly(() =>
        router.transaction(async (tx) => {
          expect(tx.node).toMatch(/^replica/)
          expect(tx.readOnly).toBe(true)
          await tx.query('SELECT 1')
          await expect(tx.query('DELETE FROM t')).rejects.toBeInstanceOf(ReadOnlyViolationError)
        }),
      )
      expect(log(kit).map((l) => l.replace(/replica\d/, 'R'))).toEqual([
        'R: BEGIN READ ONLY',
        'R: SELECT 1',
        'R: COMMIT',
      ])
      expect(kit.statements.every((s) => s.readOnly)).toBe(true)
      // readOnly: true in a primary scope: the primary's read-only pool
      await router.primary(() => router.transaction(async (tx) => tx.query('SELECT 1'), { readOnly: true }))
      expect(kit.statements.at(-1)).toMatchObject({ node: 'primary', readOnly: true })
    } finally {
      await router.close()
    }
  })

  it("an isolation level: the driver's BEGIN statements run in order", async () => {
    const { kit, router } = setup()
    try {
      await router.transaction(async () => {}, { isolation: 'serializable' })
      expect(log(kit)).toEqual(['primary: SET ISOLATION', 'primary: BEGIN', 'primary: COMMIT'])
    } finally {
      await router.close()
    }
  })

  it('a BEGIN that loses its connection is retried once: a replica on another replica, the primary on a fresh connection', async () => {
    const { kit, router, retries } = setup()
    try {
      let failures = 1
      kit.onExecute = (node, sql) =>
        sql.startsWith('BEGIN') && failures-- > 0 ? new FakeConnectError(node, 'ECONNRESET') : undefined
      const node = await router.readOnly(() => router.transaction(async (tx) => tx.node))
      expect(retries).toHaveLength(1)
      expect(retries[0]).toBe(`${retries[0]?.split('->')[0]}->${node}`)
      expect(retries[0]?.split('->')[0]).not.toBe(node)
      failures = 1
      await router.transaction(async () => {})
      expect(retries[1]).toBe('primary->primary')
      expect(kit.pools.primary).toMatchObject({ acquired: 2, busy: 0 })
      // its second connection failure marks the primary down: no retry on a primary that is down
      failures = 2
      await expect(router.transaction(async () => {})).rejects.toBeInstanceOf(FakeConnectError)
      expect(retries).toHaveLength(2)
      expect(router.stats().nodes[0]?.state).toBe('down')
    } finally {
      await router.close()
    }
    // a statement error at BEGIN is not retried
    const s = setup()
    try {
      s.kit.onExecute = (_node, sql) => (sql === 'BEGIN' ? new FakeStatementError('no') : undefined)
      await expect(s.router.transaction(async () => {})).rejects.toThrow('no')
      expect(s.retries).toEqual([])
    } finally {
      await s.router.close()
    }
  })

  it('a read-only BEGIN failing on the only replica is not retried without retryReads', async () => {
    const { kit, router, retries } = setup({ replicas: [R1], retryReads: false })
    try {
      kit.onExecute = (node, sql) => (sql.startsWith('BEGIN') ? new FakeConnectError(node) : undefined)
      await expect(router.readOnly(() => router.transaction(async () => {}))).rejects.toBeInstanceOf(
        FakeConnectError,
      )
      expect(retries).toEqual([])
    } finally {
      await router.close()
    }
  })

  it('a statement losing its connection: the error passes, the rollback fails, the connection is closed', async () => {
    const { kit, router } = setup()
    try {
      kit.onExecute = (node, sql) =>
        sql.startsWith('INSERT') || sql === 'ROLLBACK' ? new FakeConnectError(node) : undefined
      await expect(
        router.transaction(async (tx) => {
          await tx.query('INSERT INTO t VALUES (1)')
        }),
      ).rejects.toBeInstanceOf(FakeConnectError)
      expect(kit.pools.primary?.busy).toBe(0)
      expect(router.stats().nodes[0]?.errors).toBe(2)
    } finally {
      await router.close()
    }
  })

  it('the server refusing a write in a transaction is ReadOnlyViolationError', async () => {
    const { kit, router } = setup()
    try {
      kit.onExecute = (_node, sql) =>
        sql.startsWith('INSERT') ? new FakeReadOnlyError('read-only') : undefined
      const err = await router
        .transaction((tx) => tx.query('INSERT INTO t VALUES (1)'))
        .catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ReadOnlyViolationError)
      expect((err as Error).message).toBe('write statement rejected by the server on "primary" (read-only)')
    } finally {
      await router.close()
    }
  })

  it('a COMMIT that loses its connection: WriteOutcomeUnknownError', async () => {
    const { kit, router } = setup()
    try {
      kit.onExecute = (node, sql) => (sql === 'COMMIT' ? new FakeConnectError(node) : undefined)
      const err = await router.transaction(async () => {}).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(WriteOutcomeUnknownError)
      expect((err as Error).cause).toBeInstanceOf(FakeConnectError)
    } finally {
      await router.close()
    }
  })

  it('a statement past queryTimeoutMs dooms the transaction: rolled back even if the callback caught it', async () => {
    vi.useFakeTimers({ now: 0 })
    const { kit, router } = setup({ queryTimeoutMs: 100, connectTimeoutMs: 50 })
    try {
      kit.onExecute = (_node, sql) => (sql === 'SELECT pg_sleep(10)' ? HANG : undefined)
      const done = router
        .transaction(async (tx) => {
          const err = await tx.query('SELECT pg_sleep(10)').catch((e: unknown) => e)
          expect(err).toBeInstanceOf(QueryTimeoutError)
          // the cancel could not be confirmed: the connection is gone, later statements fail at once
          await expect(tx.query('SELECT 1')).rejects.toBe(err)
          return 'went on'
        })
        .catch((e: unknown) => e)
      await vi.advanceTimersByTimeAsync(200)
      const err = await done
      expect(err).toBeInstanceOf(QueryTimeoutError)
      expect(log(kit)).toEqual(['primary: BEGIN', 'primary: SELECT pg_sleep(10)'])
      expect(kit.pools.primary?.busy).toBe(0)
    } finally {
      await router.close()
    }
  })

  it('a timeout inside a savepoint that was rolled back does not doom the transaction', async () => {
    vi.useFakeTimers({ now: 0 })
    const { kit, router } = setup({ queryTimeoutMs: 100, connectTimeoutMs: 50 })
    kit.driver.cancel = async () => true // the server confirms the cancel: the connection is kept
    try {
      kit.onExecute = (_node, sql) =>
        sql === 'SELECT pg_sleep(10)'
          ? new Promise((_, reject) =>
              setTimeout(() => reject(new FakeStatementError('canceling statement')), 150),
            )
          : undefined
      const done = router.transaction(async () => {
        await expect(
          router.transaction(async (tx) => {
            await tx.query('SELECT pg_sleep(10)')
          }),
        ).rejects.toBeInstanceOf(QueryTimeoutError)
        const caught = await router
          .transaction(async (tx) => {
            await tx.query('SELECT pg_sleep(10)').catch(() => {})
            return 'caught'
          })
          .catch((e: unknown) => e)
        expect(caught).toBeInstanceOf(QueryTimeoutError) // caught inside and went on: rolled back
        return 'committed'
      })
      await vi.advanceTimersByTimeAsync(400)
      await expect(done).resolves.toBe('committed')
      expect(log(kit).at(-1)).toBe('primary: COMMIT')
    } finally {
      await router.close()
    }
  })

  it("a session's committed write transaction records its position (reads go where it is visible)", async () => {
    const { kit, router } = setup({ replicas: [R1] })
    kit.positions.primary = '0/10'
    try {
      await router.session(async () => {
        await router.transaction((tx) => tx.query('INSERT INTO t VALUES (1)'))
        const r = await router.readOnly(() => router.query('SELECT 1'))
        expect(r.rows[0]).toEqual({ node: 'primary' })
      })
    } finally {
      await router.close()
    }
  })

  it('after close(): RouterClosedError', async () => {
    const { router } = setup()
    await router.close()
    await expect(router.transaction(async () => {})).rejects.toBeInstanceOf(RouterClosedError)
  })
})

describe('TransactionRunner: retries and fallback of read-only transactions', () => {
  it('a read-only transaction whose replica checkout fails moves to another node', async () => {
    const { kit, router, retries } = setup({ replicas: [R1, R2] })
    try {
      kit.modes.replica1 = 'refusing'
      kit.modes.replica2 = 'refusing'
      const node = await router.readOnly(() =>
        router.transaction(async (tx) => tx.node).catch((e: unknown) => e),
      )
      expect(node).toBeInstanceOf(FakeConnectError)
      expect(retries).toHaveLength(1)
      kit.modes.replica2 = 'up'
      const served = new Set<unknown>()
      for (let i = 0; i < 2; i++)
        served.add(await router.readOnly(() => router.transaction(async (tx) => tx.node)))
      expect(served).toEqual(new Set(['replica2']))
    } finally {
      await router.close()
    }
  })
})
