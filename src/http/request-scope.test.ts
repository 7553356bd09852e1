import { AsyncLocalStorage } from 'node:async_hooks'
import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import type { Router } from '../router/router.js'
import { runInRequestScope } from './request-scope.js'
import { resolveHttpOptions } from './resolve-http-options.js'

/**
 * The three scope methods of a router, on their own AsyncLocalStorage (the real router is
 * exercised by test/integration/http-middleware.test.ts). A session is a mutable box whose token
 * changes on `write()`.
 */
function fakeRouter() {
  const als = new AsyncLocalStorage<{ mode: string; session?: { token: string } }>()
  const router = {
    withConsistencyToken: <T>(token: string | undefined | null, fn: () => T): T =>
      als.run({ mode: als.getStore()?.mode ?? 'write', session: { token: token ?? 'empty' } }, fn),
    readOnly: <T>(fn: () => T): T => als.run({ ...als.getStore(), mode: 'read' }, fn),
    consistencyToken: () => als.getStore()?.session?.token,
  }
  const write = (v: string) => {
    const s = als.getStore()?.session
    if (s !== undefined) s.token = v
  }
  return { router: router as unknown as Router, mode: () => als.getStore()?.mode, write }
}

describe('runInRequestScope', () => {
  it('auto mode: read methods (any case) run readOnly, the others in the default scope', () => {
    const f = fakeRouter()
    const auto = resolveHttpOptions({ auto: true })
    for (const m of ['GET', 'get', 'HEAD', 'OPTIONS']) {
      runInRequestScope(f.router, auto, m, undefined, (s) => {
        expect(s.readOnly).toBe(true)
        expect(f.mode()).toBe('read')
      })
    }
    for (const m of ['POST', 'PUT', 'PATCH', 'DELETE', undefined]) {
      runInRequestScope(f.router, auto, m, undefined, (s) => {
        expect(s.readOnly).toBe(false)
        expect(f.mode()).toBe('write')
      })
    }
  })

  it('auto mode: a GET carrying a token still runs readOnly (the router handles read-your-writes)', () => {
    const f = fakeRouter()
    runInRequestScope(f.router, resolveHttpOptions({ auto: true }), 'GET', 'rm1.fresh', () => {
      expect(f.mode()).toBe('read')
      expect(f.router.consistencyToken()).toBe('rm1.fresh')
    })
  })

  it('without auto, every method runs in the default scope', () => {
    const f = fakeRouter()
    runInRequestScope(f.router, resolveHttpOptions(), 'GET', undefined, (s) => {
      expect(s.readOnly).toBe(false)
      expect(f.mode()).toBe('write')
    })
  })

  it('tokenToSend: undefined until the session writes, then its current token, from any context', async () => {
    const f = fakeRouter()
    const scope = await runInRequestScope(f.router, resolveHttpOptions(), 'POST', 'rm1.old', async (s) => {
      expect(s.tokenToSend()).toBeUndefined()
      await Promise.resolve()
      f.write('rm1.new')
      return s
    })
    expect(f.router.consistencyToken()).toBeUndefined() // outside the scope now
    expect(scope.tokenToSend()).toBe('rm1.new')
  })

  it('run() re-enters the scope from an event emitted outside it', async () => {
    const f = fakeRouter()
    const emitter = new EventEmitter()
    const seen = new Promise<string | undefined>((resolve) => {
      runInRequestScope(f.router, resolveHttpOptions({ auto: true }), 'GET', 'rm1.t', (s) => {
        emitter.once('end', () => s.run(() => resolve(`${f.mode()}:${f.router.consistencyToken()}`)))
      })
    })
    setImmediate(() => emitter.emit('end'))
    expect(await seen).toBe('read:rm1.t')
  })

  it('returns what fn returns', () => {
    const f = fakeRouter()
    expect(runInRequestScope(f.router, resolveHttpOptions(), 'GET', undefined, () => 42)).toBe(42)
  })
})
