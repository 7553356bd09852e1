// routemate + NestJS: a small user service on a real PostgreSQL primary with two streaming
// replicas. GET /users/:id reads in a @ReadOnly() scope (a replica), POST /users writes in a
// @Transactional() one (the primary), GET /health is @nestjs/terminus with routemate's indicator.
// The service starts, calls itself over HTTP, prints which node served each request, and stops.
//
//   npm run build && node examples/nestjs/main.mjs
//
// Plain JavaScript, so the NestJS decorators are called as functions (`Injectable()(UserService)`,
// `decorate(...)` below); in a TypeScript project with `experimentalDecorators` and
// `emitDecoratorMetadata` you write them as usual: `@Injectable()`, `@ReadOnly()`, `@Get(':id')`.
// Exit status: 0 when every request was served where it should be, 1 otherwise.

import 'reflect-metadata'
import { Body, Controller, Get, Injectable, Module, Param, ParseIntPipe, Post } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus'
import {
  InjectRouter,
  ReadOnly,
  RoutemateHealthIndicator,
  RoutemateModule,
  Transactional,
} from '../../dist/nestjs/index.js'
import { pgDriver } from '../../dist/pg/index.js'
import { startPgCluster } from '../../dist/testing/index.js'

/** Applies legacy (NestJS) method decorators to `Class.prototype[method]`, as `@A() @B() method()` would. */
function decorate(Class, method, ...decorators) {
  const descriptor = Object.getOwnPropertyDescriptor(Class.prototype, method)
  Object.defineProperty(
    Class.prototype,
    method,
    Reflect.decorate(decorators, Class.prototype, method, descriptor),
  )
}

// ---- the service: plain router.query calls; the decorators choose where they go ----------------

class UserService {
  constructor(router) {
    this.router = router
  }

  // @ReadOnly(): a replica
  async findById(id) {
    const { rows } = await this.router.query(
      'SELECT id, name, inet_server_port() AS port FROM users WHERE id = $1',
      [id],
    )
    return rows[0] ?? null
  }

  // @Transactional(): one connection on the primary, committed when the method resolves
  async create(name) {
    const { rows } = await this.router.query(
      'INSERT INTO users (name) VALUES ($1) RETURNING id, name, inet_server_port() AS port',
      [name],
    )
    await this.router.query('INSERT INTO audit (user_id, action) VALUES ($1, $2)', [rows[0].id, 'created'])
    return rows[0]
  }
}
decorate(UserService, 'findById', ReadOnly())
decorate(UserService, 'create', Transactional())
InjectRouter()(UserService, undefined, 0) // constructor(@InjectRouter() router)
Injectable()(UserService)

// ---- HTTP ----------------------------------------------------------------------------------------

class UsersController {
  constructor(users) {
    this.users = users
  }
  findOne(id) {
    return this.users.findById(id)
  }
  create(body) {
    return this.users.create(String(body.name))
  }
}
decorate(UsersController, 'findOne', Get(':id'))
decorate(UsersController, 'create', Post())
Param('id', ParseIntPipe)(UsersController.prototype, 'findOne', 0)
Body()(UsersController.prototype, 'create', 0)
Reflect.defineMetadata('design:paramtypes', [UserService], UsersController)
Controller('users')(UsersController)

class HealthController {
  constructor(health, db) {
    this.health = health
    this.db = db
  }
  check() {
    return this.health.check([() => this.db.isHealthy('database')])
  }
}
decorate(HealthController, 'check', Get(), HealthCheck())
Reflect.defineMetadata('design:paramtypes', [HealthCheckService, RoutemateHealthIndicator], HealthController)
Controller('health')(HealthController)

function appModule(cluster) {
  class AppModule {}
  Module({
    imports: [
      RoutemateModule.forRoot({
        driver: pgDriver(),
        primary: { name: 'primary', url: cluster.primary.url },
        replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
        healthCheck: { intervalMs: 1000, timeoutMs: 800 },
      }),
      TerminusModule.forRoot({ logger: false }),
    ],
    controllers: [UsersController, HealthController],
    providers: [UserService],
  })(AppModule)
  return AppModule
}

// ---- run -----------------------------------------------------------------------------------------

console.log('starting a PostgreSQL primary and 2 replicas...')
const cluster = await startPgCluster({ replicas: 2 })
const nodeOf = (port) => cluster.nodes.find((n) => n.port === Number(port))?.name ?? `port ${port}`
let failures = 0
const check = (ok, line) => {
  if (!ok) failures++
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${line}`)
}
let app
try {
  await cluster.query('primary', 'CREATE TABLE users (id serial PRIMARY KEY, name text NOT NULL)')
  await cluster.query('primary', 'CREATE TABLE audit (user_id int, action text)')

  app = await NestFactory.create(appModule(cluster), { logger: ['error', 'warn'], abortOnError: false })
  app.enableShutdownHooks()
  await app.listen(0, '127.0.0.1')
  const base = (await app.getUrl()).replace('[::1]', '127.0.0.1')
  console.log(`listening on ${base}\n`)

  const call = async (method, path, body) => {
    const res = await fetch(base + path, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    })
    return { status: res.status, body: await res.json() }
  }

  const ids = []
  for (const name of ['ada', 'grace', 'edsger']) {
    const { status, body } = await call('POST', '/users', { name })
    ids.push(body.id)
    check(
      status === 201 && nodeOf(body.port) === 'primary',
      `POST /users ${name} -> id ${body.id}, served by ${nodeOf(body.port)}`,
    )
  }
  // Replicas are asynchronous: wait until they have the new rows (or use the router's
  // `readYourWrites` option and a session to read your own writes right away).
  await cluster.waitForReplication()
  for (let i = 0; i < 6; i++) {
    const id = ids[i % ids.length]
    const { status, body } = await call('GET', `/users/${id}`)
    const node = nodeOf(body.port)
    check(status === 200 && node.startsWith('replica'), `GET /users/${id} -> ${body.name}, served by ${node}`)
  }
  const health = await call('GET', '/health')
  const nodes = Object.entries(health.body.details.database.nodes)
    .map(([name, n]) => `${name} ${n.state}${n.lagMs === undefined ? '' : ` (lag ${n.lagMs} ms)`}`)
    .join(', ')
  check(
    health.status === 200 && health.body.status === 'ok',
    `GET /health -> ${health.body.status}: ${nodes}`,
  )
} catch (err) {
  failures++
  console.error(err)
} finally {
  await app?.close() // closes the router too (RoutemateModule's onApplicationShutdown)
  await cluster.stop()
}
console.log(failures === 0 ? '\nall requests served where expected' : `\n${failures} failure(s)`)
process.exitCode = failures === 0 ? 0 : 1
