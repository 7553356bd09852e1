/**
 * The decorators compiled by the real TypeScript compiler in both modes. Vitest's transformer
 * (Vite 8, oxc) lowers only legacy decorators, and only when the tsconfig enables
 * `experimentalDecorators` (this repo's does not; standard decorators are left as syntax that
 * Node 20 cannot run), so fixtures are compiled with `ts.transpileModule` instead.
 */
import 'reflect-metadata'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  compileFixture,
  type DecoratorMode,
  type FakeRouter,
  fakeRouter,
  typeCheck,
} from './decorators.test-kit.js'
import * as decorators from './index.js'

const FIXTURE = `
export function define(d: any, fake: any, other: any) {
  const { ReadOnly, Transactional, UsePrimary, WithShard } = d
  class Service {
    constructor(readonly tag: string) {}
    @ReadOnly() read(a: number, b: number) { return { tag: this.tag, sum: a + b, scopes: fake.active() } }
    @ReadOnly() async readLater(a: number) { await null; return { a, scopes: fake.active() } }
    @UsePrimary() primary() { return fake.active() }
    @Transactional() async write(x: string) { return { tag: this.tag, x, scopes: fake.active() } }
    @Transactional({ readOnly: true, isolation: 'repeatable read' }) async report() { return fake.active() }
    @Transactional() async nested() { return { outer: fake.active(), inner: this.read(1, 1).scopes } }
    @Transactional() async fails() { throw new Error('boom') }
    @WithShard((id: number) => id) @Transactional() async inShard(id: number) { return fake.active() }
    @Transactional({ router: other.router }) async elsewhere() { return other.active() }
    @ReadOnly() static count(this: any) { return this.name }
  }
  return { Service }
}
`

const LEGACY_ONLY = `
export function define(d: any, fake: any, SetMeta: any) {
  const { ReadOnly } = d
  class Ctl {
    @ReadOnly() @SetMeta('path', ':id') below(id: number) { return fake.active() }
    @SetMeta('path', 'list') @ReadOnly() above() { return fake.active() }
  }
  return { Ctl }
}
`

interface Service {
  read(a: number, b: number): { tag: string; sum: number; scopes: string[] }
  readLater(a: number): Promise<{ a: number; scopes: string[] }>
  primary(): string[]
  write(x: string): Promise<{ tag: string; x: string; scopes: string[] }>
  report(): Promise<string[]>
  nested(): Promise<{ outer: string[]; inner: string[] }>
  fails(): Promise<never>
  inShard(id: number): Promise<string[]>
  elsewhere(): Promise<string[]>
}
type Define = (
  d: unknown,
  fake: FakeRouter,
  other: FakeRouter,
) => { Service: (new (tag: string) => Service) & { count(): string } }

describe.each(['legacy', 'tc39'] as const)('compiled by tsc with %s decorators', (mode: DecoratorMode) => {
  const fake = fakeRouter()
  const other = fakeRouter()
  let off: () => void
  let Service: ReturnType<Define>['Service']
  beforeAll(async () => {
    const mod = await compileFixture(FIXTURE, mode)
    ;({ Service } = (mod.define as Define)(decorators, fake, other))
    off = decorators.useRouter(fake.router)
  })
  afterAll(() => off())

  it('@ReadOnly(): readOnly scope, this and arguments preserved, sync value stays sync', () => {
    expect(new Service('s').read(2, 3)).toEqual({ tag: 's', sum: 5, scopes: ['readOnly'] })
  })

  it('@ReadOnly() on an async method returns its promise', async () => {
    const p = new Service('s').readLater(4)
    expect(p).toBeInstanceOf(Promise)
    await expect(p).resolves.toEqual({ a: 4, scopes: ['readOnly'] })
  })

  it('@UsePrimary(): primary scope', () => {
    expect(new Service('s').primary()).toEqual(['primary'])
  })

  it('@Transactional(): transaction with the given options', async () => {
    fake.calls.length = 0
    await expect(new Service('s').write('w')).resolves.toEqual({ tag: 's', x: 'w', scopes: ['transaction'] })
    await expect(new Service('s').report()).resolves.toEqual(['transaction'])
    expect(fake.calls.map((c) => c.options)).toEqual([{}, { readOnly: true, isolation: 'repeatable read' }])
  })

  it('a @ReadOnly() method called inside a @Transactional() one nests in it', async () => {
    await expect(new Service('s').nested()).resolves.toEqual({
      outer: ['transaction'],
      inner: ['transaction', 'readOnly'],
    })
  })

  it('rejections pass through', async () => {
    await expect(new Service('s').fails()).rejects.toThrow('boom')
  })

  it('@WithShard() above @Transactional()', async () => {
    fake.calls.length = 0
    await expect(new Service('s').inShard(9)).resolves.toEqual(['withShard', 'transaction'])
    expect(fake.calls[0]).toEqual({ method: 'withShard', key: 9 })
  })

  it('an explicit router option wins', async () => {
    await expect(new Service('s').elsewhere()).resolves.toEqual(['transaction'])
  })

  it('static methods and method names', () => {
    expect(Service.count()).toBe('Service')
    expect(Service.prototype.read.name).toBe('read')
    expect(Service.prototype.write.name).toBe('write')
  })
})

describe('compiled by tsc with legacy decorators (NestJS-style metadata)', () => {
  const fake = fakeRouter()
  let off: () => void
  beforeAll(() => {
    off = decorators.useRouter(fake.router)
  })
  afterAll(() => off())
  const SetMeta = (key: string, value: unknown) => (_t: object, _k: string, desc: PropertyDescriptor) => {
    Reflect.defineMetadata(key, value, desc.value)
  }

  it('metadata from decorators stacked below or above ours is kept', async () => {
    const mod = await compileFixture(LEGACY_ONLY, 'legacy')
    const { Ctl } = (mod.define as (d: unknown, f: FakeRouter, s: unknown) => { Ctl: new () => object })(
      decorators,
      fake,
      SetMeta,
    )
    const proto = Ctl.prototype as { below(): string[]; above(): string[] }
    expect(Reflect.getMetadata('path', proto.below)).toBe(':id')
    expect(Reflect.getMetadata('path', proto.above)).toBe('list')
    expect(new (Ctl as new () => typeof proto)().below()).toEqual(['readOnly'])
    // emitDecoratorMetadata's design:* metadata lives on (prototype, key), untouched by the wrapper
    expect(Reflect.getMetadata('design:paramtypes', proto, 'below')).toEqual([Number])
  })
})

const TYPED = `
import type { Router } from 'ROUTEMATE/router/router.js'
import { ReadOnly, Transactional, UsePrimary, WithShard } from 'ROUTEMATE/decorators/index.js'
declare const router: Router
export class Users {
  n = 1
  @ReadOnly() find(id: number): number { return id + this.n }
  @ReadOnly() async findLater(id: number): Promise<number> { return id }
  @UsePrimary() fresh(): string { return 'x' }
  @Transactional() async save(name: string): Promise<number> { return name.length }
  @Transactional({ readOnly: true, isolation: 'serializable', router }) async report(): Promise<void> {}
  @Transactional({ router: () => router }) async other(): Promise<void> {}
  @WithShard((id: number) => id) @Transactional() async inShard(id: number): Promise<number> { return id }
  @ReadOnly() static count(): number { return 1 }
}
export class Misuse {
  // @ts-expect-error @Transactional() needs a method returning a promise
  @Transactional() syncSave(): number { return 1 }
  // @ts-expect-error @WithShard() needs a method returning a promise
  @WithShard((id: number) => id) syncShard(id: number): number { return id }
}
const n: number = new Users().find(1)
const p: Promise<number> = new Users().save('a')
void n
void p
`

describe('types', () => {
  const src = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '')
  it.each(['legacy', 'tc39'] as const)(
    'decorated classes type-check with %s decorators (tsc)',
    (mode) => {
      expect(typeCheck({ 'users.ts': TYPED }, mode, src)).toEqual([])
    },
    60_000,
  )
})
