import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { decorateLegacy, decorateTc39, type FakeRouter, fakeRouter } from './decorators.test-kit.js'
import { ReadOnly } from './read-only.js'
import { Transactional } from './transactional.js'
import { useRouter } from './use-router.js'
import { WithShard } from './with-shard.js'

type Decorator = (...args: never[]) => unknown
const modes = {
  legacy: (t: object, k: string, ...d: Decorator[]) => decorateLegacy(t, k, ...d),
  tc39: (t: object, k: string, ...d: Decorator[]) => decorateTc39(t, k, {}, ...d),
}

describe.each(Object.entries(modes))('@WithShard() (%s decorators)', (_mode, decorate) => {
  let fake: FakeRouter
  let off: () => void
  beforeEach(() => {
    fake = fakeRouter()
    off = useRouter(fake.router)
  })
  afterEach(() => off())

  class Mailboxes {
    constructor(readonly prefix: string) {}
    async deliver(user: { id: number }, text: string) {
      return { prefix: this.prefix, user: user.id, text, scopes: fake.active() }
    }
    async deliverTx(_userId: number) {
      return fake.active()
    }
    async read(_userId: number) {
      return fake.active()
    }
    async bad(_x: number) {
      return 'never'
    }
  }
  decorate(
    Mailboxes.prototype,
    'deliver',
    WithShard(function (this: Mailboxes, user: { id: number }) {
      return `${this.prefix}${user.id}`
    }),
  )
  decorate(
    Mailboxes.prototype,
    'deliverTx',
    WithShard((id: number) => id),
    Transactional(),
  )
  decorate(
    Mailboxes.prototype,
    'read',
    WithShard((id: number) => BigInt(id)),
    ReadOnly(),
  )
  decorate(
    Mailboxes.prototype,
    'bad',
    WithShard(() => {
      throw new Error('no key')
    }),
  )

  it('selects the key from the arguments (with this) and runs the method in router.withShard', async () => {
    await expect(new Mailboxes('u-').deliver({ id: 7 }, 'hi')).resolves.toEqual({
      prefix: 'u-',
      user: 7,
      text: 'hi',
      scopes: ['withShard'],
    })
    expect(fake.calls).toEqual([{ method: 'withShard', key: 'u-7' }])
  })

  it('stacks with @Transactional() and @ReadOnly() below it (shard outermost)', async () => {
    await expect(new Mailboxes('').deliverTx(3)).resolves.toEqual(['withShard', 'transaction'])
    await expect(new Mailboxes('').read(4)).resolves.toEqual(['withShard', 'readOnly'])
    expect(fake.calls.filter((c) => c.method === 'withShard').map((c) => c.key)).toEqual([3, 4n])
  })

  it('a throwing selector rejects the call without running the method', async () => {
    await expect(new Mailboxes('').bad(1)).rejects.toThrow('no key')
    expect(fake.calls).toEqual([])
  })

  it('keeps the method name', () => {
    expect(Mailboxes.prototype.deliver.name).toBe('deliver')
  })
})

describe('WithShard(selector)', () => {
  it('rejects a selector that is not a function at once', () => {
    expect(() => WithShard('id' as never)).toThrow(/expected a function returning the shard key/)
  })
})
