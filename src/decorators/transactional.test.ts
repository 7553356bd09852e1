import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { decorateLegacy, decorateTc39, type FakeRouter, fakeRouter } from './decorators.test-kit.js'
import { Transactional } from './transactional.js'
import { useRouter } from './use-router.js'

type Decorator = (...args: never[]) => unknown
const modes = {
  legacy: (t: object, k: string, ...d: Decorator[]) => decorateLegacy(t, k, ...d),
  tc39: (t: object, k: string, ...d: Decorator[]) => decorateTc39(t, k, {}, ...d),
}

describe.each(Object.entries(modes))('@Transactional() (%s decorators)', (_mode, decorate) => {
  let fake: FakeRouter
  let off: () => void
  beforeEach(() => {
    fake = fakeRouter()
    off = useRouter(fake.router)
  })
  afterEach(() => off())

  class Orders {
    constructor(readonly tag: string) {}
    async place(a: number, b: number) {
      return { tag: this.tag, sum: a + b, scopes: fake.active() }
    }
    async report() {
      return fake.active()
    }
    async serial() {
      return 'ok'
    }
    syncValue() {
      return 42
    }
    syncThrow(): number {
      throw new Error('sync boom')
    }
    async fails() {
      throw new Error('boom')
    }
  }
  decorate(Orders.prototype, 'place', Transactional())
  decorate(Orders.prototype, 'report', Transactional({ readOnly: true }))
  decorate(Orders.prototype, 'serial', Transactional({ isolation: 'serializable', readOnly: false }))
  decorate(Orders.prototype, 'syncValue', Transactional())
  decorate(Orders.prototype, 'syncThrow', Transactional())
  decorate(Orders.prototype, 'fails', Transactional())

  it('runs the method inside router.transaction with this and the arguments preserved', async () => {
    await expect(new Orders('o1').place(2, 3)).resolves.toEqual({
      tag: 'o1',
      sum: 5,
      scopes: ['transaction'],
    })
    expect(fake.calls).toEqual([{ method: 'transaction', options: {} }])
  })

  it('passes only the options given (readOnly left out inherits the scope)', async () => {
    await expect(new Orders('o').report()).resolves.toEqual(['transaction'])
    await new Orders('o').serial()
    expect(fake.calls.map((c) => c.options)).toEqual([
      { readOnly: true },
      { readOnly: false, isolation: 'serializable' },
    ])
  })

  it('a sync method returns a promise; a sync throw becomes a rejection', async () => {
    const o = new Orders('o') as unknown as { syncValue(): unknown; syncThrow(): unknown }
    const v = o.syncValue()
    expect(v).toBeInstanceOf(Promise)
    await expect(v).resolves.toBe(42)
    const t = o.syncThrow()
    expect(t).toBeInstanceOf(Promise)
    await expect(t).rejects.toThrow('sync boom')
  })

  it("passes the method's rejection through (the router rolls back)", async () => {
    await expect(new Orders('o').fails()).rejects.toThrow('boom')
    expect(fake.calls).toHaveLength(1)
  })

  it('keeps the method name', () => {
    expect(Orders.prototype.place.name).toBe('place')
  })

  it('uses an explicit router over the registered one', async () => {
    const other = fakeRouter()
    class C {
      async m() {
        return other.active()
      }
    }
    decorate(C.prototype, 'm', Transactional({ router: other.router }))
    await expect(new C().m()).resolves.toEqual(['transaction'])
    expect(fake.calls).toEqual([])
  })
})
