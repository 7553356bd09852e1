import { afterEach, describe, expect, it, vi } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import { RouterClosedError } from '../errors/router-closed-error.js'
import { ShardKeyRequiredError } from '../errors/shard-key-required-error.js'
import { UnknownShardError } from '../errors/unknown-shard-error.js'
import { type FakeDriverKit, fakeDriver, HANG } from './fake-driver.test-kit.js'
import type { RouterOptions } from './options.js'
import { createRouter, type Router } from './router.js'

const PRIMARY = 'postgres://db1/app'
const R1 = 'postgres://db2/app'
const R2 = 'postgres://db3/app'

function setup(options: Partial<RouterOptions> = {}): {
  kit: FakeDriverKit
  router: Router
  events: string[]
} {
  const kit = fakeDriver()
  const router = createRouter({
    driver: kit.driver,
    primary: PRIMARY,
    replicas: [R1, R2],
    healthCheck: false,
    ...options,
  } as RouterOptions) as unknown as Router
  const events: string[] = []
  router.on('node:added', (e) => events.push(`added ${e.node}`))
  router.on('node:drained', (e) => events.push(`drained ${e.node} aborted=${e.aborted}`))
  router.on('node:removed', (e) => events.push(`removed ${e.node}`))
  return { kit, router, events }
}

const read = (router: Router) => router.readOnly(() => router.query('SELECT 1'))
const nodeOf = (r: { rows: unknown[] }) => (r.rows[0] as { node: string }).node
const candidates = (router: Router) => router.stats().clusters[0]?.candidates

afterEach(() => {
  vi.useRealTimers()
})

describe('runtime topology (fake driver)', () => {
  it('addReplica: validated, named after the existing nodes, probed, then a candidate', async () => {
    const { router, events } = setup({ replicas: [{ name: 'replica2', url: R2 }] })
    try {
      expect(await router.addReplica(R1)).toBe('replica3') // replica2 is taken
      expect(candidates(router)).toEqual(['replica2', 'replica3'])
      expect(await router.addReplica({ name: 'extra', url: 'postgres://db5/app', weight: 2 })).toBe('extra')
      await expect(router.addReplica(R1)).rejects.toBeInstanceOf(ConfigError) // same server twice
      await expect(router.addReplica({ name: 'primary', url: 'postgres://db6/app' })).rejects.toThrow(
        ConfigError,
      )
      await expect(router.addReplica(R1, { shard: 's1' })).rejects.toBeInstanceOf(UnknownShardError)
      expect(events).toEqual(['added replica3', 'added extra'])
    } finally {
      await router.close()
    }
    await expect(router.addReplica('postgres://db7/app')).rejects.toBeInstanceOf(RouterClosedError)
  })

  it('addReplica on a sharded router needs a shard', async () => {
    const kit = fakeDriver()
    const router = createRouter({
      driver: kit.driver,
      shards: { s0: { primary: PRIMARY }, s1: { primary: R1 } },
      sharding: { strategy: 'hash' },
      healthCheck: false,
    })
    try {
      await expect(router.addReplica(R2)).rejects.toBeInstanceOf(ShardKeyRequiredError)
      expect(await router.addReplica(R2, { shard: 's1' })).toBe('s1.replica1')
      expect(router.stats().clusters[1]?.candidates).toEqual(['s1.replica1'])
    } finally {
      await router.close()
    }
  })

  it('drain: no new reads at once; in-flight work finishes; pools close once; a second drain shares the first', async () => {
    const { kit, router, events } = setup({ replicas: [R1] })
    try {
      let finish: (() => void) | undefined
      kit.onExecute = (node) =>
        node === 'replica1' ? new Promise<undefined>((r) => (finish = () => r(undefined))) : undefined
      const running = read(router)
      while (finish === undefined) await new Promise((r) => setImmediate(r))
      const drained = router.drain('replica1')
      const again = router.drain('replica1')
      expect(candidates(router)).toEqual([])
      expect(nodeOf(await read(router))).toBe('primary') // falls back while draining
      finish?.()
      expect(nodeOf(await running)).toBe('replica1')
      await Promise.all([drained, again])
      expect(events).toEqual(['drained replica1 aborted=0']) // once
      expect(kit.pools.replica1?.ended).toBe(2)
      expect(router.stats().nodes.find((n) => n.name === 'replica1')?.unusableReason).toBe('drained')
      await expect(router.drain('primary')).rejects.toThrow(
        '"primary" is the primary of cluster "default": it cannot be drained or removed',
      )
    } finally {
      await router.close()
    }
  })

  it('drain aborts work still running at timeoutMs (a read is then retried elsewhere)', async () => {
    vi.useFakeTimers({ now: 0 })
    const { kit, router, events } = setup({ replicas: [R1] })
    try {
      kit.onExecute = (node) => (node === 'replica1' ? HANG : undefined)
      const running = read(router).catch((e: unknown) => e)
      await vi.advanceTimersByTimeAsync(0)
      const drained = router.drain('replica1', { timeoutMs: 50 })
      await vi.advanceTimersByTimeAsync(60)
      await drained
      // aborted on the drained replica, the read is retried where reads may go: the primary
      expect(nodeOf((await running) as { rows: unknown[] })).toBe('primary')
      expect(kit.pools.replica1?.destroyed).toBe(1)
      expect(events).toEqual(['drained replica1 aborted=1'])
    } finally {
      await router.close()
    }
  })

  it('removeReplica drains then forgets the node; concurrent removes remove it once', async () => {
    const { router, events } = setup()
    try {
      await Promise.all([router.removeReplica('replica1'), router.removeReplica('replica1')])
      expect(router.stats().nodes.map((n) => n.name)).toEqual(['primary', 'replica2'])
      expect(events).toEqual(['drained replica1 aborted=0', 'removed replica1'])
      expect(new Set([nodeOf(await read(router)), nodeOf(await read(router))])).toEqual(new Set(['replica2']))
    } finally {
      await router.close()
    }
  })

  it('setWeight 0 takes a replica out of balancing without closing it; back with a weight', async () => {
    const { kit, router } = setup({ balancer: 'weighted-round-robin' })
    try {
      router.setWeight('replica1', 0)
      expect(candidates(router)).toEqual(['replica2'])
      for (let i = 0; i < 4; i++) expect(nodeOf(await read(router))).toBe('replica2')
      expect(kit.pools.replica1?.ended).toBe(0)
      router.setWeight('replica1', 3)
      const served: string[] = []
      for (let i = 0; i < 8; i++) served.push(nodeOf(await read(router)))
      expect(served.filter((n) => n === 'replica1')).toHaveLength(6)
    } finally {
      await router.close()
    }
  })
})
