import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { decorateLegacy, decorateTc39, type FakeRouter, fakeRouter } from './decorators.test-kit.js'
import { ReadOnly } from './read-only.js'
import { UsePrimary } from './use-primary.js'
import { useRouter } from './use-router.js'

type Decorator = (...args: never[]) => unknown
const modes = {
  legacy: (t: object, k: string, ...d: Decorator[]) => decorateLegacy(t, k, ...d),
  tc39: (t: object, k: string, ...d: Decorator[]) => decorateTc39(t, k, {}, ...d),
}
const scopes = [
  ['ReadOnly', ReadOnly, 'readOnly'],
  ['UsePrimary', UsePrimary, 'primary'],
] as const

describe.each(Object.entries(modes))('scope decorators (%s decorators)', (_mode, decorate) => {
  let fake: FakeRouter
  let off: () => void
  beforeEach(() => {
    fake = fakeRouter()
    off = useRouter(fake.router)
  })
  afterEach(() => off())

  describe.each(scopes)('@%s()', (_name, decorator, method) => {
    class Repo {
      constructor(readonly tag: string) {}
      sync(a: number, b: string) {
        return { tag: this.tag, a, b, scopes: fake.active() }
      }
      async later(a: number) {
        await new Promise((r) => setTimeout(r, 1))
        return a * 2
      }
      throws(): never {
        throw new Error('nope')
      }
    }
    decorate(Repo.prototype, 'sync', decorator())
    decorate(Repo.prototype, 'later', decorator())
    decorate(Repo.prototype, 'throws', decorator())

    it(`runs the method inside router.${method} with this and the arguments; a sync value stays sync`, () => {
      expect(new Repo('r1').sync(1, 'x')).toEqual({ tag: 'r1', a: 1, b: 'x', scopes: [method] })
      expect(fake.calls).toEqual([{ method }])
    })

    it('returns a promise as is', async () => {
      const p = new Repo('r').later(21)
      expect(p).toBeInstanceOf(Promise)
      await expect(p).resolves.toBe(42)
    })

    it('a throw stays synchronous', () => {
      expect(() => new Repo('r').throws()).toThrow('nope')
    })

    it('keeps the method name and arity', () => {
      expect(Repo.prototype.sync.name).toBe('sync')
      expect(Repo.prototype.sync.length).toBe(2)
    })

    it('uses an explicit router (or router function) over the registered one', () => {
      const other = fakeRouter()
      class C {
        m() {
          return other.active()
        }
        n() {
          return other.active()
        }
      }
      decorate(C.prototype, 'm', decorator({ router: other.router }))
      decorate(C.prototype, 'n', decorator({ router: () => other.router }))
      expect(new C().m()).toEqual([method])
      expect(new C().n()).toEqual([method])
      expect(fake.calls).toEqual([])
    })
  })

  it('stacks: @UsePrimary() above @ReadOnly() opens primary, then readOnly', () => {
    class C {
      m() {
        return fake.active()
      }
    }
    decorate(C.prototype, 'm', UsePrimary(), ReadOnly())
    expect(new C().m()).toEqual(['primary', 'readOnly'])
  })
})
