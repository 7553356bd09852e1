/**
 * The method decorators and `routemate/nestjs` against real clusters: a NestJS application whose
 * service and controller are written the way NestJS users write them (legacy decorators with
 * `emitDecoratorMetadata`, compiled by the real TypeScript compiler), and a plain class with
 * standard (TC39) decorators and `useRouter`. Where each call ran is read from the server (its
 * port and connection id), never from the router's bookkeeping.
 */
import 'reflect-metadata'
import type { INestApplication } from '@nestjs/common'
import * as common from '@nestjs/common'
import * as terminus from '@nestjs/terminus'
import { Test } from '@nestjs/testing'
import request from 'supertest'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compileFixture } from '../../src/decorators/decorators.test-kit.js'
import * as decorators from '../../src/decorators/index.js'
import { createRouter, Router } from '../../src/index.js'
import * as nest from '../../src/nestjs/index.js'
import {
  type DialectCase,
  dialects,
  expectIdle,
  nodeByPort,
  type TestCluster,
  testRouter,
} from './support/dialects.js'

/** Where one statement ran, as the server says. */
interface Where {
  node: string
  conn: string
}

/** A NestJS service and controller, as a NestJS project writes them (compiled in legacy mode). */
const NEST_FIXTURE = `
export function define(deps: any) {
  const { Injectable, Controller, Get, UseGuards, InjectRouter, Router, ReadOnly, Transactional, UsePrimary,
    HealthCheckService, HealthCheck, RoutemateHealthIndicator, whoAmI, insert, where, guard } = deps

  @Injectable()
  class WhoService {
    constructor(@InjectRouter() private readonly router: Router) {}
    async who() {
      const { rows } = await this.router.query(whoAmI)
      return where(rows[0])
    }
    @ReadOnly() read() { return this.who() }
    @UsePrimary() primary() { return this.who() }
    @Transactional() async write(v: string) {
      const first = await this.who()
      await this.router.query(insert, [v])
      const second = await this.who()
      const nested = await this.read()
      return [first, second, nested]
    }
    @Transactional({ readOnly: true }) async report() {
      return [await this.who(), await this.who(), await this.read()]
    }
  }

  @Injectable()
  class ByType {
    constructor(readonly router: Router) {}
  }

  @Injectable()
  class Guard {
    canActivate() { guard.calls++; return true }
  }

  @Controller('who')
  class WhoController {
    constructor(
      private readonly svc: WhoService,
      private readonly health: HealthCheckService,
      private readonly db: RoutemateHealthIndicator,
    ) {}
    @ReadOnly() @Get('above') @UseGuards(Guard) above() { return this.svc.who() }
    @Get('below') @UseGuards(Guard) @ReadOnly() below() { return this.svc.who() }
    @Get('health') @HealthCheck() check() { return this.health.check([() => this.db.isHealthy('database')]) }
  }

  return { WhoService, ByType, Guard, WhoController }
}
`

/** A plain class with standard (TC39) decorators (compiled in tc39 mode). */
const PLAIN_FIXTURE = `
export function define(deps: any) {
  const { ReadOnly, Transactional, UsePrimary, router, whoAmI, where } = deps
  class Repo {
    async who() {
      const { rows } = await router.query(whoAmI)
      return where(rows[0])
    }
    @ReadOnly() read() { return this.who() }
    @UsePrimary() primary() { return this.who() }
    @Transactional() async write() { return [await this.who(), await this.who(), await this.read()] }
    @Transactional({ readOnly: true }) async report() { return [await this.who(), await this.who(), await this.read()] }
  }
  return { Repo }
}
`

const replicas = ['replica1', 'replica2']

/** How many sessions of the application user, other than this check's own, a server has now. */
async function otherSessions(d: DialectCase, url: string): Promise<number> {
  const sql =
    d.name === 'postgres'
      ? "SELECT count(*) AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND usename = current_user AND backend_type = 'client backend'"
      : "SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1)"
  const check = createRouter({ driver: d.driver(), primary: url, healthCheck: false })
  try {
    const { rows } = await check.query<{ n: unknown }>(sql)
    return Number(rows[0]?.n)
  } finally {
    await check.close()
  }
}

async function waitForNoSessions(d: DialectCase, url: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const n = await otherSessions(d, url)
    if (n === 0) return
    if (Date.now() > deadline) throw new Error(`${n} sessions still open on ${new URL(url).port}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
const fastHealth = {
  intervalMs: 600,
  timeoutMs: 500,
  failureThreshold: 2,
  successThreshold: 1,
  maxBackoffMs: 600,
}

describe.each(dialects)('decorators and RoutemateModule ($name)', (d: DialectCase) => {
  let cluster: TestCluster
  let app: INestApplication
  let router: Router
  let svc: {
    read(): Promise<Where>
    primary(): Promise<Where>
    write(v: string): Promise<Where[]>
    report(): Promise<Where[]>
  }
  let fixture: Record<string, new (...args: never[]) => unknown>
  const guard = { calls: 0 }

  beforeAll(async () => {
    cluster = await d.start(2)
    const who = nodeByPort(cluster)
    const where = (row: { port: unknown; conn: unknown }): Where => ({
      node: who(row.port),
      conn: String(row.conn),
    })
    const setup = testRouter(d, cluster)
    for (const sql of d.setup('users')) await setup.query(sql)
    await setup.close()
    await cluster.waitForReplication()

    const mod = await compileFixture(NEST_FIXTURE, 'legacy')
    fixture = (mod.define as (deps: unknown) => typeof fixture)({
      ...common,
      ...terminus,
      ...nest,
      Router,
      whoAmI: d.whoAmI,
      insert: `INSERT INTO users (v) VALUES (${d.param(1)})`,
      where,
      guard,
    })
    const moduleRef = await Test.createTestingModule({
      imports: [
        nest.RoutemateModule.forRoot({
          driver: d.driver(),
          primary: { name: 'primary', url: cluster.primary.url },
          replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
          healthCheck: fastHealth,
          connectTimeoutMs: 2000,
        }),
        terminus.TerminusModule.forRoot({ logger: false }),
      ],
      controllers: [fixture.WhoController as common.Type],
      providers: [
        fixture.WhoService as common.Type,
        fixture.ByType as common.Type,
        fixture.Guard as common.Type,
      ],
    }).compile()
    app = moduleRef.createNestApplication({ logger: false })
    await app.init()
    router = app.get(nest.ROUTEMATE_ROUTER)
    svc = app.get(fixture.WhoService as common.Type)
  })

  afterAll(async () => {
    await app?.close()
    await cluster?.stop()
  })

  it('provides one router, by token and by type; init waited for the first probes', () => {
    expect(router).toBeInstanceOf(Router)
    expect(app.get(Router)).toBe(router)
    expect((app.get(fixture.ByType as common.Type) as { router: Router }).router).toBe(router)
    // app.init() waited for router.ready(): every node has been probed
    expect(router.stats().nodes.map((n) => [n.name, n.lastProbeMs !== undefined])).toEqual([
      ['primary', true],
      ['replica1', true],
      ['replica2', true],
    ])
  })

  it('@ReadOnly() methods read from the replicas, both of them', async () => {
    const nodes = new Set<string>()
    for (let i = 0; i < 10; i++) nodes.add((await svc.read()).node)
    expect([...nodes].sort()).toEqual(replicas)
    await expectIdle(router)
  })

  it('@UsePrimary() methods read from the primary', async () => {
    for (let i = 0; i < 4; i++) expect((await svc.primary()).node).toBe('primary')
  })

  it('@Transactional() runs on the primary on one connection; a nested @ReadOnly() method stays on it', async () => {
    const [first, second, nested] = await svc.write('from-nest')
    expect(first?.node).toBe('primary')
    expect(second).toEqual(first)
    expect(nested).toEqual(first)
    await cluster.waitForReplication()
    const { rows } = await router.primary(() =>
      router.query("SELECT count(*) AS n FROM users WHERE v = 'from-nest'"),
    )
    expect(Number(rows[0]?.n)).toBe(1)
    await expectIdle(router)
  })

  it('@Transactional({ readOnly: true }) runs on one replica, on one connection', async () => {
    const [first, second, nested] = await svc.report()
    expect(replicas).toContain(first?.node)
    expect(second).toEqual(first)
    expect(nested).toEqual(first)
    await expectIdle(router)
  })

  it('stacked with NestJS route and guard decorators (above and below), over HTTP', async () => {
    guard.calls = 0
    const server = app.getHttpServer()
    const above = await request(server).get('/who/above').expect(200)
    const below = await request(server).get('/who/below').expect(200)
    expect(replicas).toContain(above.body.node)
    expect(replicas).toContain(below.body.node)
    expect(guard.calls).toBe(2)
  })

  it('the health indicator reports up with each node, and no password; terminus serves it', async () => {
    const indicator = app.get(nest.RoutemateHealthIndicator)
    const result = await indicator.isHealthy()
    expect(result.database).toMatchObject({
      status: 'up',
      closed: false,
      clusters: { default: { primary: 'primary', readsFallingBack: false } },
      nodes: {
        primary: { role: 'primary', usable: true },
        replica1: { role: 'replica', usable: true },
        replica2: { role: 'replica', usable: true },
      },
    })
    const password = new URL(cluster.primary.url).password
    if (password !== '') expect(JSON.stringify(result)).not.toContain(password)
    const http = await request(app.getHttpServer()).get('/who/health').expect(200)
    expect(http.body).toMatchObject({ status: 'ok', info: { database: { status: 'up' } } })
  })

  it('forRootAsync: options from an injected factory; a second app registers its router until it closes', async () => {
    const CONFIG = 'TEST_CONFIG'
    class ConfigModule {}
    common.Module({
      providers: [
        { provide: CONFIG, useValue: { primary: cluster.primary.url, replica: cluster.replicas[0]?.url } },
      ],
      exports: [CONFIG],
    })(ConfigModule)
    const ref = await Test.createTestingModule({
      imports: [
        nest.RoutemateModule.forRootAsync({
          imports: [ConfigModule],
          inject: [CONFIG],
          useFactory: async (config: { primary: string; replica: string }) => ({
            driver: d.driver(),
            primary: { name: 'primary', url: config.primary },
            replicas: [{ name: 'replica1', url: config.replica }],
            healthCheck: fastHealth,
          }),
          global: false,
        }),
      ],
    }).compile()
    const app2 = ref.createNestApplication({ logger: false })
    await app2.init()
    const router2 = app2.get<Router>(nest.ROUTEMATE_ROUTER)
    try {
      expect(router2).not.toBe(router)
      expect(app2.get(Router)).toBe(router2)
      expect(router2.stats().nodes.map((n) => n.name)).toEqual(['primary', 'replica1'])
      // the decorators now use router2 (registered last): its readOnly scope does not route router's queries
      expect((await svc.read()).node).toBe('primary')
    } finally {
      await app2.close()
    }
    expect(router2.closed).toBe(true)
    expect(replicas).toContain((await svc.read()).node) // router is the registered one again
  })

  it('app.close() closes the router: its server sessions end, decorators unregistered, health down', async () => {
    const indicator = app.get(nest.RoutemateHealthIndicator)
    const urls = [cluster.primary.url, ...cluster.replicas.map((r) => r.url)]
    for (const url of urls) expect(await otherSessions(d, url)).toBeGreaterThan(0)
    await app.close()
    expect(router.closed).toBe(true)
    for (const url of urls) await waitForNoSessions(d, url)
    expect(() => svc.read()).toThrow(decorators.NoRouterError)
    await expect(svc.write('after-close')).rejects.toThrow(decorators.NoRouterError)
    expect((await indicator.isHealthy('db')).db.status).toBe('down')
  })
})

describe.each(dialects)(
  'decorators without NestJS: useRouter + standard decorators ($name)',
  (d: DialectCase) => {
    let cluster: TestCluster
    let router: Router
    let off: () => void
    let repo: {
      read(): Promise<Where>
      primary(): Promise<Where>
      write(): Promise<Where[]>
      report(): Promise<Where[]>
    }

    beforeAll(async () => {
      cluster = await d.start(2)
      const who = nodeByPort(cluster)
      router = testRouter(d, cluster)
      await router.ready()
      off = decorators.useRouter(router)
      const mod = await compileFixture(PLAIN_FIXTURE, 'tc39')
      const { Repo } = (mod.define as (deps: unknown) => { Repo: new () => typeof repo })({
        ...decorators,
        router,
        whoAmI: d.whoAmI,
        where: (row: { port: unknown; conn: unknown }): Where => ({
          node: who(row.port),
          conn: String(row.conn),
        }),
      })
      repo = new Repo()
    })

    afterAll(async () => {
      off?.()
      await router?.close()
      await cluster?.stop()
    })

    it('routes @ReadOnly() to the replicas and @UsePrimary() to the primary', async () => {
      const nodes = new Set<string>()
      for (let i = 0; i < 10; i++) nodes.add((await repo.read()).node)
      expect([...nodes].sort()).toEqual(replicas)
      expect((await repo.primary()).node).toBe('primary')
    })

    it('@Transactional(): one primary connection; a nested @ReadOnly() method stays on it', async () => {
      const [first, second, nested] = await repo.write()
      expect(first?.node).toBe('primary')
      expect(second).toEqual(first)
      expect(nested).toEqual(first)
    })

    it('@Transactional({ readOnly: true }): one replica connection', async () => {
      const [first, second, nested] = await repo.report()
      expect(replicas).toContain(first?.node)
      expect(second).toEqual(first)
      expect(nested).toEqual(first)
      await expectIdle(router)
    })
  },
)
