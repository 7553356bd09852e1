import { afterEach, describe, expect, it } from 'vitest'
import { RoutemateError } from '../errors/routemate-error.js'
import type { Router } from '../router/router.js'
import { decorateLegacy, fakeRouter } from './decorators.test-kit.js'
import { NoRouterError } from './no-router-error.js'
import { ReadOnly } from './read-only.js'
import { Transactional } from './transactional.js'
import { resolveRouter, useRouter } from './use-router.js'

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})
const register = (router: Router) => {
  const off = useRouter(router)
  cleanups.push(off)
  return off
}

describe('useRouter', () => {
  it('registers the router the decorators use, until unregistered', () => {
    const a = fakeRouter()
    const off = register(a.router)
    expect(resolveRouter(undefined, 'ReadOnly', 'm')).toBe(a.router)
    off()
    expect(() => resolveRouter(undefined, 'ReadOnly', 'm')).toThrow(NoRouterError)
  })

  it('stacks registrations: the last wins, unregistering it restores the previous one', () => {
    const a = fakeRouter()
    const b = fakeRouter()
    const offA = register(a.router)
    const offB = register(b.router)
    expect(resolveRouter(undefined, 'ReadOnly', 'm')).toBe(b.router)
    offB()
    expect(resolveRouter(undefined, 'ReadOnly', 'm')).toBe(a.router)
    offB() // idempotent: does not remove a's registration
    expect(resolveRouter(undefined, 'ReadOnly', 'm')).toBe(a.router)
    const offB2 = register(b.router)
    offA() // unregistering an older one leaves the newest in place
    expect(resolveRouter(undefined, 'ReadOnly', 'm')).toBe(b.router)
    offB2()
    expect(() => resolveRouter(undefined, 'ReadOnly', 'm')).toThrow(NoRouterError)
  })

  it('rejects what is not a router', () => {
    expect(() => useRouter(undefined as unknown as Router)).toThrow(/useRouter: expected a Router/)
    expect(() => useRouter({} as Router)).toThrow(TypeError)
  })

  it('an explicit router (or router function) wins over the registered one', () => {
    const registered = fakeRouter()
    const explicit = fakeRouter()
    register(registered.router)
    expect(resolveRouter(explicit.router, 'ReadOnly', 'm')).toBe(explicit.router)
    let n = 0
    const source = () => {
      n++
      return explicit.router
    }
    expect(resolveRouter(source, 'ReadOnly', 'm')).toBe(explicit.router)
    expect(resolveRouter(source, 'ReadOnly', 'm')).toBe(explicit.router)
    expect(n).toBe(2)
  })
})

describe('no router', () => {
  class Users {
    find(id: number) {
      return id
    }
    async save(id: number) {
      return id
    }
  }
  decorateLegacy(Users.prototype, 'find', ReadOnly())
  decorateLegacy(Users.prototype, 'save', Transactional())

  it('a sync-scope decorator throws NoRouterError on call, naming the decorator and the method', () => {
    let error: unknown
    try {
      new Users().find(1)
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(NoRouterError)
    expect(error).toBeInstanceOf(RoutemateError)
    expect((error as NoRouterError).code).toBe('ROUTEMATE_NO_ROUTER')
    expect((error as Error).message).toBe(
      '@ReadOnly() on find(): no router registered: call useRouter(router) or import RoutemateModule',
    )
  })

  it('a promise-returning decorator rejects with NoRouterError (never throws synchronously)', async () => {
    const p = new Users().save(1)
    expect(p).toBeInstanceOf(Promise)
    await expect(p).rejects.toThrow(/@Transactional\(\) on save\(\): no router registered/)
  })

  it('a router function returning nothing is the same error', () => {
    class C {
      m() {
        return 1
      }
    }
    decorateLegacy(C.prototype, 'm', ReadOnly({ router: () => undefined as unknown as Router }))
    expect(() => new C().m()).toThrow(NoRouterError)
  })

  it('the router is looked up per call: registering after the class is defined works', () => {
    const f = fakeRouter()
    register(f.router)
    expect(new Users().find(7)).toBe(7)
    expect(f.calls).toEqual([{ method: 'readOnly' }])
  })
})
