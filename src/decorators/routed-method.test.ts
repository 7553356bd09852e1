import 'reflect-metadata'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { decorateLegacy, decorateTc39, type FakeRouter, fakeRouter } from './decorators.test-kit.js'
import { ReadOnly } from './read-only.js'
import { Transactional } from './transactional.js'
import { useRouter } from './use-router.js'

/** A NestJS-style method decorator (`SetMetadata`): stores metadata on the method function. */
const SetMeta =
  (key: string, value: unknown) =>
  (_target: object, _key: string | symbol, descriptor: PropertyDescriptor): PropertyDescriptor => {
    Reflect.defineMetadata(key, value, descriptor.value)
    return descriptor
  }

describe('mode detection and method identity', () => {
  let fake: FakeRouter
  let off: () => void
  beforeEach(() => {
    fake = fakeRouter()
    off = useRouter(fake.router)
  })
  afterEach(() => off())

  it('legacy: returns a new descriptor keeping the other fields (enumerable, writable, configurable)', () => {
    const original = function m() {
      return 1
    }
    const descriptor = { value: original, enumerable: true, writable: false, configurable: false }
    const out = ReadOnly()({}, 'm', descriptor) as PropertyDescriptor
    expect(out).not.toBe(descriptor)
    expect(out).toMatchObject({ enumerable: true, writable: false, configurable: false })
    expect(out.value).not.toBe(original)
    expect(out.value()).toBe(1)
    expect(descriptor.value).toBe(original) // the input is not mutated
  })

  it('legacy without a descriptor (ES3-style call) reads it from the target', () => {
    const proto = {
      m() {
        return fake.active()
      },
    }
    const out = (ReadOnly() as unknown as (t: object, k: string) => PropertyDescriptor)(proto, 'm')
    expect(out.value()).toEqual(['readOnly'])
  })

  it('tc39: returns a replacement function', () => {
    const original = function m() {
      return fake.active()
    }
    const out = (ReadOnly() as unknown as (v: unknown, c: unknown) => () => unknown)(original, {
      kind: 'method',
      name: 'm',
    })
    expect(out).not.toBe(original)
    expect(out()).toEqual(['readOnly'])
  })

  it('refuses what is not a method, in both modes', () => {
    const dec = ReadOnly() as unknown as (...a: unknown[]) => unknown
    expect(() => dec(undefined, { kind: 'field', name: 'x' })).toThrow(
      '@ReadOnly() decorates methods only, not a field',
    )
    expect(() => dec(() => 1, { kind: 'getter', name: 'x' })).toThrow(/not a getter/)
    const withGetter = Object.defineProperty({}, 'x', { get: () => 1, configurable: true })
    expect(() => dec(withGetter, 'x', Object.getOwnPropertyDescriptor(withGetter, 'x'))).toThrow(
      /"x" is not a method/,
    )
    expect(() => dec({}, 'field')).toThrow(/"field" is not a method/) // legacy property decorator call
    expect(() => dec()).toThrow('@ReadOnly() must decorate a class method')
  })

  it('static methods: this is the class', () => {
    function who(this: { name: string }) {
      return this.name
    }
    class A {
      tag = 'a'
    }
    Object.defineProperty(A, 'who', { value: who, configurable: true, writable: true })
    decorateLegacy(A, 'who', ReadOnly())
    expect((A as unknown as { who(): string }).who()).toBe('A')
    class B {
      tag = 'b'
    }
    Object.defineProperty(B, 'who', { value: who, configurable: true, writable: true })
    decorateTc39(B, 'who', { static: true }, ReadOnly())
    expect((B as unknown as { who(): string }).who()).toBe('B')
  })

  it('symbol-named methods keep their name', async () => {
    const sym = Symbol('save')
    class A {
      async [sym]() {
        return fake.active()
      }
    }
    decorateLegacy(A.prototype, sym, Transactional())
    expect(A.prototype[sym].name).toBe('[save]')
    await expect(new A()[sym]()).resolves.toEqual(['transaction'])
  })

  it('legacy: metadata set by decorators below ours is copied to the wrapper', () => {
    class Controller {
      find() {
        return fake.active()
      }
    }
    // @ReadOnly() above @SetMeta(...): SetMeta runs first, on the original function
    decorateLegacy(Controller.prototype, 'find', ReadOnly(), SetMeta('path', ':id'), SetMeta('guards', ['G']))
    const fn = Controller.prototype.find
    expect(Reflect.getMetadata('path', fn)).toBe(':id')
    expect(Reflect.getMetadata('guards', fn)).toEqual(['G'])
    expect(new Controller().find()).toEqual(['readOnly'])
  })

  it('legacy: metadata set by decorators above ours lands on the wrapper', () => {
    class Controller {
      find() {
        return fake.active()
      }
    }
    decorateLegacy(Controller.prototype, 'find', SetMeta('path', ':id'), ReadOnly())
    expect(Reflect.getMetadata('path', Controller.prototype.find)).toBe(':id')
    expect(new Controller().find()).toEqual(['readOnly'])
  })

  it('wraps once per decoration: each instance call opens its own scope', () => {
    class A {
      m() {
        return fake.active().length
      }
    }
    decorateLegacy(A.prototype, 'm', ReadOnly())
    expect([new A().m(), new A().m()]).toEqual([1, 1])
    expect(fake.calls).toHaveLength(2)
  })
})
