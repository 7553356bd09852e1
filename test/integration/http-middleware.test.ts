/**
 * HTTP middleware on real clusters: Express 5 (`routemate/express`, over real HTTP with supertest)
 * and Fastify 5 (`routemate/fastify`, through `app.inject` and over real HTTP) apps over a router
 * in read-your-writes `position` mode with one replica delayed. Where each request's statements
 * land is read from the serving server itself (its port).
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express, { type NextFunction, type Request, type Response } from 'express'
import Fastify, { type FastifyInstance } from 'fastify'
import request from 'supertest'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { routemate } from '../../src/express/index.js'
import { routematePlugin } from '../../src/fastify/index.js'
import type { RoutemateHttpOptions } from '../../src/http/http-options.js'
import type { Router } from '../../src/index.js'
import {
  type DialectCase,
  dialects,
  expectIdle,
  nodeByPort,
  sleep,
  type TestCluster,
  testRouter,
} from './support/dialects.js'

type Cluster = TestCluster & { setApplyDelay(name: string, ms: number): Promise<void> }

/** A response, whatever the framework and transport. */
interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies of the test routes
  readonly body: any
}

interface Client {
  request(
    method: 'GET' | 'POST',
    path: string,
    opts?: { headers?: Record<string, string>; body?: unknown },
  ): Promise<Reply>
  close(): Promise<void>
}

type Kind = 'express' | 'fastify (inject)' | 'fastify (http)'
const KINDS: readonly Kind[] = ['express', 'fastify (inject)', 'fastify (http)']

const TOKEN_HEADER = 'x-routemate-token'

/** The routes, framework-free: each returns the JSON body (or throws, for the error handler). */
function api(router: Router, d: DialectCase, who: (port: unknown) => string) {
  const p = d.param
  const whoAmI = async () => who((await router.query<{ port: number }>(d.whoAmI)).rows[0]?.port)
  const insert = async (v: string): Promise<number> => {
    const sql =
      d.name === 'postgres'
        ? `INSERT INTO notes (v) VALUES (${p(1)}) RETURNING id`
        : `INSERT INTO notes (v) VALUES (${p(1)})`
    const r = await router.query<{ id: number }>(sql, [v])
    return Number(r.rows[0]?.id ?? r.insertId)
  }
  const port = d.name === 'postgres' ? 'inet_server_port()' : '@@port'
  return {
    /** Two statements with pauses between, so concurrent requests interleave. */
    who: async () => {
      await sleep(Math.random() * 5)
      const a = await whoAmI()
      await sleep(Math.random() * 5)
      return { nodes: [a, await whoAmI()] }
    },
    whoReadOnly: async () => ({ nodes: [await router.readOnly(whoAmI)] }),
    createNote: async (body: unknown) => ({ id: await insert(String((body as { v?: unknown })?.v)) }),
    readNote: async (id: string) => {
      const { rows } = await router.query<{ v: string | null; port: number }>(
        `SELECT (SELECT v FROM notes WHERE id = ${p(1)}) AS v, ${port} AS port`,
        [Number(id)],
      )
      return { v: rows[0]?.v ?? null, node: who(rows[0]?.port) }
    },
    writeInGet: async () => ({ id: await insert('from a GET') }),
    writeInGetPrimary: async () => ({ id: await router.primary(() => insert('from a GET, primary')) }),
    boom: async () => {
      await whoAmI()
      throw new Error('boom')
    },
    writeThenBoom: async () => {
      await insert('then boom')
      throw new Error('boom after a write')
    },
    sqlError: async () => router.query('SELECT * FROM no_such_table_here'),
  }
}

type Api = ReturnType<typeof api>

function expressApp(router: Router, options: RoutemateHttpOptions, h: Api) {
  const app = express()
  app.use(routemate(router, options))
  app.use(express.json()) // after routemate: the scope must survive body parsing
  app.get('/who', async (_req, res) => {
    res.json(await h.who())
  })
  app.post('/who', async (_req, res) => {
    res.json(await h.who())
  })
  app.get('/who-ro', async (_req, res) => {
    res.json(await h.whoReadOnly())
  })
  app.post('/notes', async (req, res) => {
    res.json(await h.createNote(req.body))
  })
  app.get('/notes/:id', async (req, res) => {
    res.json(await h.readNote(req.params.id as string))
  })
  app.get('/write-in-get', async (_req, res) => {
    res.json(await h.writeInGet())
  })
  app.get('/write-in-get-primary', async (_req, res) => {
    res.json(await h.writeInGetPrimary())
  })
  app.get('/boom', async () => {
    await h.boom()
  })
  app.post('/boom', async () => {
    await h.writeThenBoom()
  })
  app.get('/sql-error', async (_req, res) => {
    res.json(await h.sqlError())
  })
  app.use((err: Error, _req: Request, res: Response, _next: NextFunction) => {
    res.status(500).json({ error: err.message, name: err.name, handler: 'express' })
  })
  return app
}

async function fastifyApp(router: Router, options: RoutemateHttpOptions, h: Api): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(routematePlugin, { router, ...options })
  app.get('/who', () => h.who())
  app.post('/who', () => h.who())
  app.get('/who-ro', () => h.whoReadOnly())
  app.post('/notes', (req) => h.createNote(req.body))
  app.get<{ Params: { id: string } }>('/notes/:id', (req) => h.readNote(req.params.id))
  app.get('/write-in-get', () => h.writeInGet())
  app.get('/write-in-get-primary', () => h.writeInGetPrimary())
  app.get('/boom', () => h.boom())
  app.post('/boom', () => h.writeThenBoom())
  app.get('/sql-error', () => h.sqlError())
  app.setErrorHandler((err: Error, _req, reply) => {
    reply.status(500).send({ error: err.message, name: err.name, handler: 'fastify' })
  })
  await app.ready()
  return app
}

/** A client that talks real HTTP to `baseUrl` with supertest. */
function httpClient(baseUrl: string, close: () => Promise<void>): Client {
  return {
    async request(method, path, opts = {}) {
      let r = method === 'GET' ? request(baseUrl).get(path) : request(baseUrl).post(path)
      for (const [k, v] of Object.entries(opts.headers ?? {})) r = r.set(k, v)
      const res = opts.body === undefined ? await r : await r.send(opts.body as object)
      return { status: res.status, headers: res.headers, body: res.body }
    },
    close,
  }
}

async function open(kind: Kind, router: Router, options: RoutemateHttpOptions, h: Api): Promise<Client> {
  if (kind === 'express') {
    const server: Server = await new Promise((resolve) => {
      const s = expressApp(router, options, h).listen(0, '127.0.0.1', () => resolve(s))
    })
    const { port } = server.address() as AddressInfo
    return httpClient(`http://127.0.0.1:${port}`, async () => {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    })
  }
  const app = await fastifyApp(router, options, h)
  if (kind === 'fastify (http)') {
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    return httpClient(url, () => app.close())
  }
  return {
    async request(method, path, opts = {}) {
      const res = await app.inject({
        method,
        url: path,
        headers: opts.headers,
        ...(opts.body === undefined ? {} : { payload: opts.body as object }),
      })
      const text = res.body
      return {
        status: res.statusCode,
        headers: res.headers as Reply['headers'],
        body: text === '' ? undefined : JSON.parse(text),
      }
    },
    close: () => app.close(),
  }
}

/** `name=value` of a cookie set by a response, for the next request's `Cookie` header. */
function cookieFrom(reply: Reply, name: string): string | undefined {
  const raw = reply.headers['set-cookie']
  const all = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]
  return all.map((c) => c.split(';')[0] as string).find((c) => c.startsWith(`${name}=`))
}

/** `g` as a token (header and, when short enough, cookie): reads and writes succeed, a write returns a fresh token. */
async function expectHarmless(c: Client, g: string): Promise<void> {
  // (the oversized one alone: with a cookie as long it would pass Node's 16 KiB header limit)
  const headers: Record<string, string> = { [TOKEN_HEADER]: encodeURI(g) }
  if (g.length < 1000) headers.cookie = `rm_token=${encodeURIComponent(g)}`
  const get = await c.request('GET', '/who', { headers })
  expect(get.status, `${g}: ${JSON.stringify(get.body)}`).toBe(200)
  for (const n of get.body.nodes) expect(n).toMatch(/^(replica|primary)/)
  const post = await c.request('POST', '/notes', { headers, body: { v: 'g' } })
  expect(post.status, `${g}: ${JSON.stringify(post.body)}`).toBe(200)
  const fresh = post.headers[TOKEN_HEADER] as string
  expect(fresh).toMatch(/^rm1\./)
  expect(fresh).not.toBe(g)
  const read = await c.request('GET', `/notes/${post.body.id}`, { headers: { [TOKEN_HEADER]: fresh } })
  expect(read.body.v).toBe('g')
}

describe.each(dialects)('HTTP middleware ($name)', (d: DialectCase) => {
  let cluster: Cluster
  let router: Router
  let who: (port: unknown) => string
  let h: Api

  beforeAll(async () => {
    cluster = (await d.start(2)) as Cluster
    who = nodeByPort(cluster)
    router = testRouter(d, cluster, {
      readYourWrites: { mode: 'position', maxWaitMs: 100 },
      maxReplicationLagMs: 0, // keep the delayed replica in rotation: only read-your-writes protects reads
    })
    await router.ready()
    for (const sql of d.setup('notes')) await router.query(sql)
    await cluster.waitForReplication()
    await cluster.setApplyDelay('replica1', 300) // MariaDB: MASTER_DELAY=1 (whole seconds)
    h = api(router, d, who)
  })

  afterAll(async () => {
    await router?.close()
    await cluster?.stop()
  })

  describe.each(KINDS)('%s', (kind) => {
    const clients: Client[] = []
    const app = async (options: RoutemateHttpOptions = {}) => {
      const c = await open(kind, router, options, h)
      clients.push(c)
      return c
    }

    afterEach(async () => {
      for (const c of clients.splice(0)) await c.close()
      await expectIdle(router)
    })

    it('(a) without auto: router.query in a GET goes to the primary, router.readOnly to the replicas', async () => {
      const c = await app()
      const plain = new Set<string>()
      const ro = new Set<string>()
      for (let i = 0; i < 10; i++) {
        const a = await c.request('GET', '/who')
        expect(a.status).toBe(200)
        for (const n of a.body.nodes) plain.add(n)
        const b = await c.request('GET', '/who-ro')
        expect(b.status).toBe(200)
        for (const n of b.body.nodes) ro.add(n)
        expect(a.headers[TOKEN_HEADER]).toBeUndefined() // no write: no token
      }
      expect([...plain]).toEqual(['primary'])
      expect([...ro].sort()).toEqual(['replica1', 'replica2'])
    })

    it('(b) auto mode: GET -> a replica, POST -> the primary; a write in a GET is refused unless wrapped in router.primary', async () => {
      const c = await app({ auto: true })
      const gets = new Set<string>()
      const posts = new Set<string>()
      for (let i = 0; i < 10; i++) {
        for (const n of (await c.request('GET', '/who')).body.nodes) gets.add(n)
        for (const n of (await c.request('POST', '/who', { body: { any: 'thing' } })).body.nodes) posts.add(n)
      }
      expect([...gets].sort()).toEqual(['replica1', 'replica2'])
      expect([...posts]).toEqual(['primary'])

      const refused = await c.request('GET', '/write-in-get')
      expect(refused.status).toBe(500)
      expect(refused.body.name).toBe('ReadOnlyViolationError')
      const allowed = await c.request('GET', '/write-in-get-primary')
      expect(allowed.status).toBe(200)
      expect(allowed.body.id).toBeGreaterThan(0)
      expect(allowed.headers[TOKEN_HEADER]).toMatch(/^rm1\./) // that GET wrote: it gets a token
    })

    it('(b) auto mode with POST as a read method: the readOnly scope survives JSON body parsing', async () => {
      const c = await app({ auto: { readMethods: ['GET', 'POST'] } })
      const nodes = new Set<string>()
      for (let i = 0; i < 10; i++) {
        const r = await c.request('POST', '/who', { body: { pad: 'x'.repeat(20_000) } })
        expect(r.status).toBe(200)
        for (const n of r.body.nodes) nodes.add(n)
      }
      expect([...nodes].sort()).toEqual(['replica1', 'replica2'])
    })

    it('(c) a POST that writes returns a token; a GET carrying it reads the row (100 iterations, zero stale)', async () => {
      const c = await app({ auto: true })
      let token: string | undefined
      let stale = 0
      let staleWithout = 0
      const served: Record<string, number> = {}
      for (let i = 0; i < 100; i++) {
        const v = `note ${i}`
        const post = await c.request('POST', '/notes', {
          body: { v },
          headers: token === undefined ? {} : { [TOKEN_HEADER]: token },
        })
        expect(post.status).toBe(200)
        expect(post.headers[TOKEN_HEADER]).toMatch(/^rm1\.[A-Za-z0-9_-]+$/)
        token = post.headers[TOKEN_HEADER] as string
        const get = await c.request('GET', `/notes/${post.body.id}`, { headers: { [TOKEN_HEADER]: token } })
        expect(get.status).toBe(200)
        expect(get.headers[TOKEN_HEADER]).toBeUndefined() // a read sends no new token
        if (get.body.v !== v) stale++
        served[get.body.node] = (served[get.body.node] ?? 0) + 1
        for (let k = 0; k < 2; k++) {
          // twice: round-robin then visits both replicas, the delayed one included
          const bare = await c.request('GET', `/notes/${post.body.id}`)
          if (bare.body.v !== v) staleWithout++
        }
      }
      console.log(
        `[${d.name}, ${kind}] token header: ${stale} stale of 100, served ${JSON.stringify(served)}; without the token: ${staleWithout} stale of 200`,
      )
      expect(stale).toBe(0)
      // Reads after a write go to a replica once it has the write (not all to the primary: on
      // PostgreSQL the token of a write-only request carries `unknown` plus the write's stamp).
      expect((served.replica1 ?? 0) + (served.replica2 ?? 0)).toBeGreaterThan(0)
    })

    it('(d) the cookie transport works the same', async () => {
      const c = await app({ auto: true, token: { cookie: { name: 'rm_token', maxAgeSeconds: 60 } } })
      let cookie: string | undefined
      let stale = 0
      for (let i = 0; i < 100; i++) {
        const v = `cookie note ${i}`
        const post = await c.request('POST', '/notes', {
          body: { v },
          headers: cookie === undefined ? {} : { cookie },
        })
        expect(post.status).toBe(200)
        expect(post.headers[TOKEN_HEADER]).toBeUndefined()
        const setCookie = ([] as string[]).concat(post.headers['set-cookie'] ?? [])
        expect(setCookie).toHaveLength(1)
        expect(setCookie[0]).toMatch(
          /^rm_token=rm1\.[A-Za-z0-9_-]+; Path=\/; Max-Age=60; SameSite=Lax; HttpOnly$/,
        )
        cookie = cookieFrom(post, 'rm_token')
        const get = await c.request('GET', `/notes/${post.body.id}`, {
          headers: { cookie: `theme=dark; ${cookie}; other=1` },
        })
        expect(get.status).toBe(200)
        expect(get.headers['set-cookie']).toBeUndefined()
        if (get.body.v !== v) stale++
      }
      expect(stale).toBe(0)
    })

    it('(e) a garbage token is harmless: reads and writes work, a write returns a fresh token', async () => {
      const c = await app({ auto: true, token: { header: TOKEN_HEADER, cookie: 'rm_token' } })
      const garbage = [
        'garbage',
        'rm1.',
        'rm1.!!!!',
        'rm1.bm90IGpzb24',
        `rm1.${Buffer.from('[1,2]').toString('base64url')}`,
        `rm1.${'A'.repeat(9000)}`,
        '\u00e9t\u00e9',
        'rm1.a, rm1.b',
      ]
      for (const g of garbage) await expectHarmless(c, g)
    })

    // A well-formed token whose position is not one the database can parse: the server refuses to
    // wait for it (MariaDB: "Could not parse GTID list") and the router reads from the primary.
    it('(e) a well-formed token with a forged position is harmless', async () => {
      const c = await app({ auto: true })
      const forged = `rm1.${Buffer.from('{"w":"x","p":{"default":"zz/zz","other":7}}').toString('base64url')}`
      await expectHarmless(c, forged)
    })

    it('(f) 200 concurrent mixed requests keep their scopes apart', async () => {
      const c = await app({ auto: true })
      let fallbacks = 0
      const off = router.on('fallback', () => {
        fallbacks++
      })
      try {
        const results = await Promise.all(
          Array.from({ length: 200 }, async (_, i) => {
            const kindOf = i % 3 === 0 ? 'get' : i % 3 === 1 ? 'post' : 'write'
            if (kindOf === 'write') {
              const r = await c.request('POST', '/notes', { body: { v: `c${i}` } })
              return { kindOf, r }
            }
            const r = await c.request(kindOf === 'get' ? 'GET' : 'POST', '/who', {
              ...(kindOf === 'post' ? { body: { i } } : {}),
            })
            return { kindOf, r }
          }),
        )
        const seen = { get: new Set<string>(), post: new Set<string>() }
        for (const { kindOf, r } of results) {
          expect(r.status, JSON.stringify(r.body)).toBe(200)
          if (kindOf === 'write') {
            expect(r.headers[TOKEN_HEADER]).toMatch(/^rm1\./) // its own write, its own token
            continue
          }
          expect(r.headers[TOKEN_HEADER]).toBeUndefined() // never a token leaked from a writer
          for (const n of r.body.nodes) seen[kindOf as 'get' | 'post'].add(n)
        }
        if (fallbacks === 0) expect([...seen.get].every((n) => n.startsWith('replica'))).toBe(true)
        expect([...seen.post]).toEqual(['primary'])
      } finally {
        off()
      }
    })

    it('(g) errors of async handlers reach the error handler; a write before the error still sends its token', async () => {
      const c = await app({ auto: true })
      const handler = kind === 'express' ? 'express' : 'fastify'
      const boom = await c.request('GET', '/boom')
      expect(boom.status).toBe(500)
      expect(boom.body).toMatchObject({ error: 'boom', handler })
      const sql = await c.request('GET', '/sql-error')
      expect(sql.status).toBe(500)
      expect(sql.body.handler).toBe(handler)
      expect(sql.body.error).toMatch(/no_such_table_here/)
      const wrote = await c.request('POST', '/boom')
      expect(wrote.status).toBe(500)
      expect(wrote.body).toMatchObject({ error: 'boom after a write', handler })
      expect(wrote.headers[TOKEN_HEADER]).toMatch(/^rm1\./)
      await expectIdle(router)
      // The app still serves normally afterwards.
      expect((await c.request('GET', '/who')).status).toBe(200)
    })
  })
})
