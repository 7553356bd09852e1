import { describe, expect, it } from 'vitest'
import { CrossShardError } from '../errors/cross-shard-error.js'
import { ShardKeyRequiredError } from '../errors/shard-key-required-error.js'
import { ShardQueryError } from '../errors/shard-query-error.js'
import { UnknownShardError } from '../errors/unknown-shard-error.js'
import { type FakeDriverKit, FakeStatementError, fakeDriver } from './fake-driver.test-kit.js'
import type { RouterOptions } from './options.js'
import { createRouter, type Router } from './router.js'

const TENANTS: Record<string, string> = { acme: 's0', globex: 's1', initech: 's2' }

function setup(options: Partial<RouterOptions> = {}): { kit: FakeDriverKit; router: Router } {
  const kit = fakeDriver()
  const router = createRouter({
    driver: kit.driver,
    shards: {
      s0: { primary: 'postgres://db1/app', replicas: ['postgres://db2/app'] },
      s1: { primary: 'postgres://db3/app' },
      s2: { primary: 'postgres://db4/app' },
    },
    sharding: { strategy: 'lookup', lookup: (key) => TENANTS[String(key)] },
    healthCheck: false,
    ...options,
  } as RouterOptions) as unknown as Router
  return { kit, router }
}

const nodeOf = (r: { rows: unknown[] }) => (r.rows[0] as { node: string }).node

describe('ShardOps over the fake driver: handles, scatter-gather, cross-shard', () => {
  it('resolves keys to shards; withShard routes every call inside to that shard', async () => {
    const { router } = setup()
    try {
      expect(router.shardNames).toEqual(['s0', 's1', 's2'])
      expect(await router.shardFor('globex')).toBe('s1')
      await expect(router.shardFor('nobody')).rejects.toThrow("no shard for key 'nobody'")
      await expect(router.query('SELECT 1')).rejects.toBeInstanceOf(ShardKeyRequiredError)
      const served = await router.withShard('acme', async () => [
        nodeOf(await router.query('SELECT 1')),
        nodeOf(await router.readOnly(() => router.query('SELECT 1'))),
        await router.transaction(async (tx) => tx.node),
        // the same shard again nests; a shard scope inside a read scope keeps reading
        await router.withShard('acme', async () => nodeOf(await router.query('SELECT 1'))),
        await router.readOnly(() =>
          router.withShard('acme', async () => nodeOf(await router.query('SELECT 1'))),
        ),
      ])
      expect(served).toEqual(['s0.primary', 's0.replica1', 's0.primary', 's0.primary', 's0.replica1'])
    } finally {
      await router.close()
    }
  })

  it('shard handles: query, readOnly, primary, transaction, run; an unknown name is UnknownShardError', async () => {
    const { router } = setup()
    try {
      const s0 = router.shard('s0')
      expect(s0.name).toBe('s0')
      expect(nodeOf(await s0.query('SELECT 1'))).toBe('s0.primary')
      expect(nodeOf(await s0.readOnly(() => router.query('SELECT 1')))).toBe('s0.replica1')
      expect(nodeOf(await s0.primary(() => router.query('SELECT 1')))).toBe('s0.primary')
      expect(await s0.transaction(async (tx) => tx.node)).toBe('s0.primary')
      expect(nodeOf(await s0.run(() => router.query('SELECT 1')))).toBe('s0.primary')
      expect(() => router.shard('s9')).toThrow(UnknownShardError)
    } finally {
      await router.close()
    }
  })

  it('a transaction on one shard refuses another shard inside it (CrossShardError), allows its own', async () => {
    const { router } = setup()
    try {
      await router.shard('s0').transaction(async () => {
        await expect(router.withShard('globex', () => 1)).rejects.toBeInstanceOf(CrossShardError)
        expect(await router.withShard('acme', async () => nodeOf(await router.query('SELECT 1')))).toBe(
          's0.primary',
        )
      })
    } finally {
      await router.close()
    }
  })

  it('forEachShard runs once per shard in its scope, up to `concurrency` at once; a failure is ShardQueryError', async () => {
    const { router } = setup()
    try {
      let running = 0
      let most = 0
      const out = await router.forEachShard(
        async (shard) => {
          running++
          most = Math.max(most, running)
          await new Promise((r) => setTimeout(r, 1))
          running--
          return nodeOf(await router.query('SELECT 1')) + (shard.name === 's1' ? '!' : '')
        },
        { concurrency: 2 },
      )
      expect(out).toEqual({ s0: 's0.primary', s1: 's1.primary!', s2: 's2.primary' })
      expect(most).toBe(2)
      const err = await router
        .forEachShard((shard) => {
          if (shard.name === 's2') throw new Error('s2 failed')
          return 1
        })
        .catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ShardQueryError)
      expect((err as ShardQueryError).shard).toBe('s2')
      await expect(router.forEachShard(() => 1, { concurrency: 0 })).rejects.toThrow(
        'concurrency: expected an integer >= 1, got 0',
      )
    } finally {
      await router.close()
    }
  })

  it('queryAllShards tags rows with their shard; onError fail or partial', async () => {
    const { kit, router } = setup()
    try {
      const all = await router.readOnly(() => router.queryAllShards('SELECT 1'))
      expect(all.rows).toEqual([
        { shard: 's0', row: { node: 's0.replica1' } },
        { shard: 's1', row: { node: 's1.primary' } },
        { shard: 's2', row: { node: 's2.primary' } },
      ])
      expect(all.errors).toEqual([])
      kit.onExecute = (node) =>
        node === 's1.primary' ? new FakeStatementError('relation does not exist') : undefined
      await expect(router.queryAllShards('SELECT 1')).rejects.toBeInstanceOf(ShardQueryError)
      const partial = await router.queryAllShards('SELECT 1', undefined, {
        onError: 'partial',
        concurrency: 1,
      })
      expect(partial.rows.map((r) => r.shard)).toEqual(['s0', 's2'])
      expect(partial.errors.map((e) => e.shard)).toEqual(['s1'])
      await expect(
        router.queryAllShards('SELECT 1', undefined, { onError: 'ignore' as 'partial' }),
      ).rejects.toThrow("onError: expected 'fail' or 'partial', got ignore")
    } finally {
      await router.close()
    }
  })

  it('a default shard takes statements with no shard in scope; an unsharded router has one shard, "default"', async () => {
    const { router } = setup({ sharding: { strategy: 'lookup', lookup: TENANTS, defaultShard: 's2' } })
    try {
      expect(nodeOf(await router.query('SELECT 1'))).toBe('s2.primary')
    } finally {
      await router.close()
    }
    // a strategy function naming a shard that does not exist
    const odd = setup({ sharding: { strategy: (key) => String(key) } })
    try {
      await expect(odd.router.shardFor('s9')).rejects.toThrow("custom resolver 'strategy' gave 's9'")
      expect(await odd.router.shardFor('s1')).toBe('s1')
    } finally {
      await odd.router.close()
    }
    const kit = fakeDriver()
    const plain = createRouter({ driver: kit.driver, primary: 'postgres://db1/app', healthCheck: false })
    try {
      expect(plain.shardNames).toEqual(['default'])
      await expect(plain.shardFor(1)).rejects.toThrow('this router is not sharded (no shards configured)')
      expect(nodeOf(await plain.shard('default').query('SELECT 1'))).toBe('primary')
    } finally {
      await plain.close()
    }
  })
})
