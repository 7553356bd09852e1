import { describe, expect, it } from 'vitest'
import { CrossShardError } from '../errors/cross-shard-error.js'
import { UnknownShardError } from '../errors/unknown-shard-error.js'
import type { Driver, DriverPool } from './driver.js'
import { createRouter } from './router.js'

/** An in-memory driver: every statement returns the node's URL host, so a test sees where it ran. */
function memoryDriver(): Driver {
  const pool = (host: string): DriverPool => ({
    acquire: async () => ({ host }),
    release: () => {},
    destroy: () => {},
    end: async () => {},
    counts: () => ({ total: 1, idle: 1, waiting: 0 }),
  })
  return {
    dialect: 'postgres',
    name: 'memory',
    createPool: (node) => pool(new URL(node.url).hostname),
    execute: async (conn) => ({ rows: [{ host: (conn as { host: string }).host }], rowCount: 1 }),
    probe: async (node) => ({ role: node.name.endsWith('primary') ? 'primary' : 'replica', position: '0/1' }),
    positionReached: () => true,
    positionAfterWrite: async () => '0/1',
    waitForPosition: async () => '0/1',
    beginSql: () => 'BEGIN',
    savepointSql: (n) => `SAVEPOINT ${n}`,
    classify: () => 'statement',
  }
}

function sharded(resolve: (key: unknown, names: readonly string[]) => string | Promise<string>) {
  return createRouter({
    driver: memoryDriver(),
    shards: {
      s0: { primary: 'postgres://u@s0-primary.invalid/app', replicas: ['postgres://u@s0-r1.invalid/app'] },
      s1: { primary: 'postgres://u@s1-primary.invalid/app', replicas: ['postgres://u@s1-r1.invalid/app'] },
    },
    sharding: { strategy: { name: 'test', resolve } as never },
    healthCheck: false,
  })
}

const host = async (r: ReturnType<typeof sharded>) =>
  (await r.query<{ host: string }>('SELECT 1')).rows[0]?.host

describe('withShard / shardFor (in-memory driver)', () => {
  it('a synchronous resolver: fn runs at once, inside the shard scope, on that shard', async () => {
    const router = sharded((key) => (key === 1 ? 's1' : 's0'))
    let ranSync = false
    const p = router.withShard(1, () => {
      ranSync = true
      return host(router)
    })
    expect(ranSync).toBe(true)
    expect(await p).toBe('s1-primary.invalid')
    expect(await router.withShard(2, () => router.readOnly(() => host(router)))).toBe('s0-r1.invalid')
    expect(await router.shardFor(1)).toBe('s1')
    await router.close()
  })

  it('an async resolver (a directory lookup) works the same', async () => {
    const router = sharded(async (key) => (key === 1 ? 's1' : 's0'))
    expect(await router.withShard(1, () => host(router))).toBe('s1-primary.invalid')
    expect(await router.shardFor(2)).toBe('s0')
    await router.close()
  })

  it('failures reject, never throw: a sync throw of fn or of the resolver, an unknown name, a non-string', async () => {
    const router = sharded((key) => {
      if (key === 'boom') throw new RangeError('cannot place')
      return key === 'nowhere' ? 's9' : key === 'num' ? (7 as unknown as string) : 's0'
    })
    const boom = () => {
      throw new Error('fn threw')
    }
    await expect(router.withShard(1, boom)).rejects.toThrow('fn threw')
    await expect(router.withShard('boom', () => 1)).rejects.toThrow(RangeError)
    await expect(router.shardFor('boom')).rejects.toThrow(RangeError)
    await expect(router.withShard('nowhere', () => 1)).rejects.toThrow(UnknownShardError)
    await expect(router.shardFor('nowhere')).rejects.toThrow(UnknownShardError)
    await expect(router.withShard('num', () => 1)).rejects.toThrow(UnknownShardError)
    const asyncUnknown = sharded(async () => 's9')
    await expect(asyncUnknown.withShard(1, () => 1)).rejects.toThrow(UnknownShardError)
    await Promise.all([router.close(), asyncUnknown.close()])
  })

  it('nests: the same shard inside its own scope is fine, another one inside a transaction is CrossShardError', async () => {
    const router = sharded((key) => (key === 1 ? 's1' : 's0'))
    expect(await router.withShard(1, () => router.withShard(1, () => host(router)))).toBe(
      's1-primary.invalid',
    )
    expect(await router.withShard(1, () => router.withShard(2, () => host(router)))).toBe(
      's0-primary.invalid',
    )
    await expect(
      router.withShard(1, () => router.transaction(() => router.withShard(2, () => host(router)))),
    ).rejects.toThrow(CrossShardError)
    expect(await router.readOnly(() => router.withShard(1, () => host(router)))).toBe('s1-r1.invalid')
    await router.close()
  })

  it('an unsharded router rejects with a TypeError', async () => {
    const router = createRouter({
      driver: memoryDriver(),
      primary: 'postgres://u@p.invalid/app',
      healthCheck: false,
    })
    await expect(router.withShard(1, () => 1)).rejects.toThrow(TypeError)
    await expect(router.shardFor(1)).rejects.toThrow('not sharded')
    await router.close()
  })
})
