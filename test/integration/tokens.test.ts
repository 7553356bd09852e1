/**
 * Consistency tokens over HTTP on real clusters, both replicas delayed (PostgreSQL
 * `recovery_min_apply_delay` 600 ms, MariaDB `MASTER_DELAY=1`), so a read that lands on a replica
 * right after a write is stale:
 * - read-your-writes holds with a router made with default options, through Express, Fastify and
 *   a NestJS application (30 write-then-read request pairs each, zero stale), and across two
 *   routers (two app instances); a router that cannot honour tokens is refused at setup;
 * - forged tokens (a far-future write time, positions the primary never reached, garbage) neither
 *   hold reads on the primary nor make them wait: their reads are served by the replicas, and
 *   every rejection is counted;
 * - with `tokens.secret`, unsigned and altered tokens are ignored and counted; rotation accepts
 *   tokens of the previous key.
 * Where each read ran is read from the serving server (its port).
 */
import 'reflect-metadata'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { INestApplication } from '@nestjs/common'
import * as common from '@nestjs/common'
import { Test } from '@nestjs/testing'
import express, { type Express } from 'express'
import Fastify, { type FastifyInstance } from 'fastify'
import request from 'supertest'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { routemate } from '../../src/express/index.js'
import { routematePlugin } from '../../src/fastify/index.js'
import { ConfigError, createRouter, Router, type RouterOptions } from '../../src/index.js'
import * as nest from '../../src/nestjs/index.js'
import { type DialectCase, dialects, nodeByPort, type TestCluster } from './support/dialects.js'

type Cluster = TestCluster & { setApplyDelay(name: string, ms: number): Promise<void> }

const TOKEN = 'x-routemate-token'
const PAIRS = 30
const NEW_SECRET = 'the new token secret, 32 chars..'
const OLD_SECRET = 'the old token secret, 32 chars..'

/** A token with any payload (what a forger sends). */
const forge = (payload: unknown) => `rm1.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`

/** The routes, framework-free. */
function routes(router: Router, d: DialectCase, who: (port: unknown) => string) {
  const port = d.name === 'postgres' ? 'inet_server_port()' : '@@port'
  return {
    async create(v: string): Promise<{ id: number }> {
      const sql =
        d.name === 'postgres'
          ? 'INSERT INTO notes (v) VALUES ($1) RETURNING id'
          : 'INSERT INTO notes (v) VALUES (?)'
      const r = await router.query<{ id: number }>(sql, [v])
      return { id: Number(r.rows[0]?.id ?? r.insertId) }
    },
    async read(id: string): Promise<{ v: string | null; node: string }> {
      const { rows } = await router.query<{ v: string | null; port: number }>(
        `SELECT (SELECT v FROM notes WHERE id = ${d.param(1)}) AS v, ${port} AS port`,
        [Number(id)],
      )
      return { v: rows[0]?.v ?? null, node: who(rows[0]?.port) }
    },
  }
}

/** An Express app (auto mode: GET reads on replicas) over `router`. */
function expressApp(router: Router, d: DialectCase, who: (port: unknown) => string): Express {
  const h = routes(router, d, who)
  const app = express()
  app.use(routemate(router, { auto: true }))
  app.use(express.json())
  app.post('/notes', async (req, res) => {
    res.json(await h.create(String(req.body?.v)))
  })
  app.get('/notes/:id', async (req, res) => {
    res.json(await h.read(req.params.id as string))
  })
  return app
}

/** Listens on a free port; returns the base URL and the closer. */
async function listen(app: Express): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    },
  }
}

/** A supertest target: a base URL or a Node.js server. */
type Target = string | Server

/**
 * `n` write-then-read request pairs: POST a note, then GET it with the token the POST returned
 * (`readAt` may be another instance), and once more without any token (the control: it shows the
 * delay is real). Returns the stale counts and where the token reads were served.
 */
async function pairs(writeAt: Target, readAt: Target, n: number, tag: string) {
  let stale = 0
  let staleWithout = 0
  const served: Record<string, number> = {}
  for (let i = 0; i < n; i++) {
    const v = `${tag} ${i}`
    const post = await request(writeAt).post('/notes').send({ v }).expect(200)
    const token = post.headers[TOKEN] as string
    expect(token).toMatch(/^rm1\./)
    const get = await request(readAt).get(`/notes/${post.body.id}`).set(TOKEN, token).expect(200)
    expect(get.headers[TOKEN]).toBeUndefined() // a read sends no new token
    if (get.body.v !== v) stale++
    served[get.body.node] = (served[get.body.node] ?? 0) + 1
    const bare = await request(readAt).get(`/notes/${post.body.id}`).expect(200)
    if (bare.body.v !== v) staleWithout++
  }
  return { stale, staleWithout, served }
}

describe.each(dialects)('consistency tokens ($name)', (d: DialectCase) => {
  let cluster: Cluster
  let who: (port: unknown) => string
  const routers: Router[] = []
  const closers: Array<() => Promise<void>> = []

  /** A router made with default options (only driver, primary, replicas), closed after the suite. */
  const defaultRouter = async (extra: Partial<Omit<RouterOptions, 'driver'>> = {}): Promise<Router> => {
    const router = createRouter({
      driver: d.driver(),
      primary: { name: 'primary', url: cluster.primary.url },
      replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
      ...extra,
    })
    routers.push(router)
    await router.ready()
    return router
  }

  const serve = async (router: Router): Promise<string> => {
    const s = await listen(expressApp(router, d, who))
    closers.push(s.close)
    return s.url
  }

  beforeAll(async () => {
    cluster = (await d.start(2)) as Cluster
    who = nodeByPort(cluster)
    const setup = createRouter({ driver: d.driver(), primary: cluster.primary.url, healthCheck: false })
    for (const sql of d.setup('notes')) await setup.query(sql)
    await setup.close()
    await cluster.waitForReplication()
    for (const r of cluster.replicas) await cluster.setApplyDelay(r.name, 600) // MariaDB: 1 s
  })

  afterAll(async () => {
    for (const close of closers.splice(0)) await close()
    for (const r of routers.splice(0)) await r.close()
    await cluster?.stop()
  })

  describe('read-your-writes with default router options', () => {
    it(`Express: ${PAIRS} write-then-read request pairs, zero stale`, async () => {
      const url = await serve(await defaultRouter())
      const r = await pairs(url, url, PAIRS, 'express')
      console.log(`[${d.name}] express, default options: ${JSON.stringify(r)}`)
      expect(r.stale).toBe(0)
      expect(r.staleWithout).toBeGreaterThan(0) // the replicas really are behind
    })

    it(`Fastify: ${PAIRS} write-then-read request pairs, zero stale`, async () => {
      const router = await defaultRouter()
      const h = routes(router, d, who)
      const app: FastifyInstance = Fastify()
      await app.register(routematePlugin, { router, auto: true })
      app.post('/notes', (req) => h.create(String((req.body as { v?: unknown })?.v)))
      app.get<{ Params: { id: string } }>('/notes/:id', (req) => h.read(req.params.id))
      const url = await app.listen({ port: 0, host: '127.0.0.1' })
      closers.push(() => app.close())
      const r = await pairs(url, url, PAIRS, 'fastify')
      console.log(`[${d.name}] fastify, default options: ${JSON.stringify(r)}`)
      expect(r.stale).toBe(0)
      expect(r.staleWithout).toBeGreaterThan(0)
    })

    it(`NestJS (RoutemateModule.forRoot with defaults, the Express middleware): ${PAIRS} pairs, zero stale`, async () => {
      let h: ReturnType<typeof routes> | undefined
      class NotesController {
        create(body: { v?: unknown }) {
          return h?.create(String(body?.v))
        }
        read(id: string) {
          return h?.read(id)
        }
      }
      const proto = NotesController.prototype
      const method = (key: 'create' | 'read', ...decorators: MethodDecorator[]) => {
        const desc = Object.getOwnPropertyDescriptor(proto, key) as PropertyDescriptor
        for (const dec of decorators) dec(proto, key, desc)
      }
      method('create', common.Post(), common.HttpCode(200))
      common.Body()(proto, 'create', 0)
      method('read', common.Get(':id'))
      common.Param('id')(proto, 'read', 0)
      common.Controller('notes')(NotesController)
      const moduleRef = await Test.createTestingModule({
        imports: [
          nest.RoutemateModule.forRoot({
            driver: d.driver(),
            primary: { name: 'primary', url: cluster.primary.url },
            replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
          }),
        ],
        controllers: [NotesController],
      }).compile()
      const app: INestApplication = moduleRef.createNestApplication({ logger: false })
      const router = moduleRef.get(Router)
      h = routes(router, d, who)
      app.use(routemate(router, { auto: true }))
      await app.init()
      closers.push(() => app.close())
      const server = app.getHttpServer() as Server
      const r = await pairs(server, server, PAIRS, 'nest')
      console.log(`[${d.name}] nestjs, default options: ${JSON.stringify(r)}`)
      expect(r.stale).toBe(0)
      expect(r.staleWithout).toBeGreaterThan(0)
    })

    it(`across two instances (two routers): ${PAIRS} pairs written on one, read on the other, zero stale`, async () => {
      const a = await defaultRouter()
      const b = await defaultRouter()
      const r = await pairs(await serve(a), await serve(b), PAIRS, 'two instances')
      console.log(
        `[${d.name}] two instances: ${JSON.stringify(r)}; reader tokens: ${JSON.stringify(b.stats().tokens)}`,
      )
      expect(r.stale).toBe(0)
      // Honest tokens are fresher than the reader's probes: checked against the primary, never dropped.
      expect(b.stats().tokens).toMatchObject({ received: PAIRS, rejected: 0, ignored: 0 })
    })

    it('a router that cannot honour tokens (readYourWrites: false) is refused at setup, never a silent no-op', async () => {
      const off = await defaultRouter({ readYourWrites: false })
      expect(() => routemate(off)).toThrow(ConfigError)
      expect(() => routemate(off, { token: { cookie: 'rm' } })).toThrow(/readYourWrites: false/)
      expect(() => routemate(off, { token: false })).not.toThrow()
      const app = Fastify()
      await expect(app.register(routematePlugin, { router: off, auto: true })).rejects.toMatchObject({
        name: 'ConfigError',
        path: 'token',
      })
      await app.close()
      const ok = Fastify()
      await ok.register(routematePlugin, { router: off, token: false })
      await ok.close()
    })
  })

  describe('forged tokens', () => {
    const farAhead = d.name === 'postgres' ? 'FFFFFFFF/FFFFFFFF' : '0-1-99999999999'
    const forged: Array<[string, string, string]> = [
      ['a far-future write time', forge({ w: 1e300 }), 'future-write'],
      [
        'a position the primary never reached',
        forge({ w: Date.now(), p: { default: farAhead } }),
        'ahead-of-primary',
      ],
      [
        'a domain / timeline the primary does not have',
        forge({ p: { default: d.name === 'postgres' ? '7FFFFFFF/0' : '9-9-1' } }),
        'ahead-of-primary',
      ],
      ['a garbage position', forge({ p: { default: 'zz/zz; DROP TABLE notes' } }), 'bad-position'],
      ['an unknown cluster', forge({ p: { shard9: '0/1' } }), 'unknown-cluster'],
      ['garbage', 'rm1.bm90IGpzb24', 'malformed'],
    ]

    it.each(['position', 'window'] as const)(
      '%s mode: reads with forged tokens are served by the replicas, never redirected to the primary; each rejection is counted',
      async (mode) => {
        // The configuration of the report: reads wait up to 100 ms for a replica to catch up.
        const router = await defaultRouter({
          readYourWrites: mode === 'position' ? { mode, maxWaitMs: 100 } : { mode, windowMs: 60_000 },
        })
        const url = await serve(router)
        const id = (await request(url).post('/notes').send({ v: 'target' }).expect(200)).body.id
        const redirects = () => router.stats().clusters[0]?.readYourWritesRedirects
        const before = redirects()
        for (const [what, token, reason] of forged) {
          if (mode === 'window' && reason !== 'future-write' && reason !== 'malformed') continue
          const was = router.stats().tokens.reasons[reason as 'malformed']
          for (let i = 0; i < 10; i++) {
            const get = await request(url).get(`/notes/${id}`).set(TOKEN, token).expect(200)
            expect(get.body.node, `${what}: ${token}`).toMatch(/^replica/)
          }
          expect(router.stats().tokens.reasons[reason as 'malformed'], what).toBe(was + 10)
        }
        if (mode === 'position') {
          // A read-only transaction (a read connection) of a forged session: checked first, a replica.
          const tx = await router.withConsistencyToken(forge({ p: { default: farAhead } }), () =>
            router.transaction(async (t) => t.node, { readOnly: true }),
          )
          expect(tx).toMatch(/^replica/)
        }
        expect(redirects()).toBe(before)
        console.log(`[${d.name}] ${mode} mode, forged tokens: ${JSON.stringify(router.stats().tokens)}`)
      },
    )
  })

  describe('signed tokens (tokens.secret)', () => {
    it('signed tokens round-trip; unsigned and altered ones are ignored and counted; rotation accepts the previous key', async () => {
      const current = await defaultRouter({ tokens: { secret: [NEW_SECRET, OLD_SECRET] } })
      const oldInstance = await defaultRouter({ tokens: { secret: OLD_SECRET } })
      const retired = await defaultRouter({ tokens: { secret: NEW_SECRET } })
      const unsigned = await defaultRouter()
      const [url, oldUrl, retiredUrl, unsignedUrl] = [
        await serve(current),
        await serve(oldInstance),
        await serve(retired),
        await serve(unsigned),
      ]
      // Honest signed tokens: fresh reads.
      const own = await pairs(url, url, 10, 'signed')
      expect(own.stale).toBe(0)
      const post = await request(url).post('/notes').send({ v: 'signed' }).expect(200)
      const token = post.headers[TOKEN] as string
      expect(token).toMatch(/^rm1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]{43}$/)

      // Rotation: tokens signed by an instance still on the old key are accepted (and fresh).
      const rotated = await pairs(oldUrl, url, 10, 'rotated')
      expect(rotated.stale).toBe(0)
      expect(current.stats().tokens.rejected).toBe(0)

      // Unsigned (an instance without the secret), altered, and old-key tokens after retirement.
      const tokens = current.stats().tokens
      const unsignedToken = (await request(unsignedUrl).post('/notes').send({ v: 'u' }).expect(200)).headers[
        TOKEN
      ] as string
      const [prefix, , kid, mac] = token.split('.')
      const altered = `${prefix}.${forge({ w: 1e300, p: { default: d.name === 'postgres' ? 'FFFFFFFF/FFFFFFFF' : '0-1-99999999999' } }).slice(4)}.${kid}.${mac}`
      for (const t of [unsignedToken, altered]) {
        const get = await request(url).get(`/notes/${post.body.id}`).set(TOKEN, t).expect(200)
        expect(get.body.node).toMatch(/^replica/) // ignored: normal routing
      }
      expect(current.stats().tokens.reasons).toMatchObject({
        unsigned: tokens.reasons.unsigned + 1,
        'bad-signature': tokens.reasons['bad-signature'] + 1,
      })
      const oldToken = (await request(oldUrl).post('/notes').send({ v: 'o' }).expect(200)).headers[
        TOKEN
      ] as string
      await request(retiredUrl).get(`/notes/${post.body.id}`).set(TOKEN, oldToken).expect(200)
      expect(retired.stats().tokens.reasons['bad-signature']).toBe(1)
    })
  })
})
