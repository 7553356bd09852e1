/**
 * Preludes of README fragments (`<!-- doctest: ... prelude=NAME -->`): what a fragment takes from
 * the code around it — a `router`, an Express `app`, a `DB` type — declared before it, and an
 * epilogue run after it (close the router, request the routes it registered). They are code in
 * the doc-test project folder (see `doctest-project.ts`), where `./doctest-env.js` (below) gives
 * the shared cluster's URLs. Names a prelude introduces for its own use start with `__`, so they
 * never collide with a fragment's.
 */

/** One prelude: code before the fragment, code after it, compiler options it needs. */
export interface Prelude {
  readonly code: string
  readonly epilogue?: string
  /** Compiler options the fragment needs (blocks are grouped into one program per set). */
  readonly compilerOptions?: Readonly<Record<string, unknown>>
}

const ENV = `import * as __env from './doctest-env.js'`

/** Every prelude, by name. */
export const PRELUDES: Readonly<Record<string, Prelude>> = {
  /** `router`: a pg router over the shared cluster's primary and first two replicas, ready. */
  router: {
    code: `${ENV}
import * as __rm from 'routemate'
import * as __pg from 'routemate/pg'
const router = __rm.createRouter({ driver: __pg.pgDriver(), primary: __env.primaryUrl, replicas: __env.replicaUrls.slice(0, 2) })
await router.ready()`,
    epilogue: 'await router.close()',
  },
  /** `router`: a postgres.js router (`postgresDriver()`) over the shared cluster's primary and first two replicas, ready. */
  'router-postgres': {
    code: `${ENV}
import * as __rm from 'routemate'
import * as __pgjs from 'routemate/postgres'
const router = __rm.createRouter({ driver: __pgjs.postgresDriver(), primary: __env.primaryUrl, replicas: __env.replicaUrls.slice(0, 2) })
await router.ready()`,
    epilogue: 'await router.close()',
  },
  /** `createRouter`, `driver`, `primary`, `replicas` for a fragment that makes its own `router`. */
  'router-parts': {
    code: `${ENV}
import { createRouter } from 'routemate'
import * as __pg from 'routemate/pg'
const driver = __pg.pgDriver()
const primary = __env.primaryUrl
const replicas = __env.replicaUrls.slice(0, 2)`,
    epilogue: 'await router.ready()\nawait router.close()',
  },
  /** `R3_URL`: a third replica of the shared cluster (after `router`). */
  r3: { code: 'const R3_URL = __env.replicaUrls[2] as string' },
  /** `app`: an Express app; afterwards, every route it has is requested once (a 5xx fails). */
  express: {
    code: `import __express from 'express'
const app = __express()
app.use(__express.json())`,
    epilogue: 'await __env.requestRoutes(app)',
  },
  /** `app`: a Fastify instance, closed afterwards. */
  fastify: {
    code: `import __fastify from 'fastify'
const app = __fastify()`,
    epilogue: 'await app.ready()\nawait app.close()',
  },
  /** `saveAuditLog()`: a write through `router.query`. */
  audit: {
    code: `async function saveAuditLog() {
  await router.query("INSERT INTO audit_log (what) VALUES ('order')")
}`,
  },
  /** `reconcilePayment()`. */
  reconcile: { code: 'async function reconcilePayment(): Promise<void> {}' },
  /** `createRouter`, `pgDriver`, `URL_A`..`URL_C` (the shared cluster's nodes), `log`. */
  discovery: {
    code: `${ENV}
import { createRouter } from 'routemate'
import { pgDriver } from 'routemate/pg'
const [URL_A, URL_B, URL_C] = [__env.primaryUrl, ...__env.replicaUrls] as [string, string, string]
const log = console`,
    epilogue: 'await router.ready()\nawait router.close()',
  },
  /** Two shards on the shared cluster (databases `app` and `app_s1`), a `userId` and a `subject`. */
  shards: {
    code: `${ENV}
import { createRouter } from 'routemate'
import { pgDriver } from 'routemate/pg'
const S0_PRIMARY = __env.primaryUrl
const S0_REPLICA = __env.replicaUrls[0] as string
const S1_PRIMARY = __env.inDatabase(__env.primaryUrl, 'app_s1')
const S1_REPLICA = __env.inDatabase(__env.replicaUrls[0] as string, 'app_s1')
const userId = 'user-42'
const subject = 'Hello'`,
    epilogue: 'await router.close()',
  },
  /** Kysely's `Kysely`, `PostgresDialect` and a `DB` type for the `users` table. */
  kysely: {
    code: `import { type Generated, Kysely, PostgresDialect } from 'kysely'
interface DB {
  users: { id: Generated<number>; name: string }
}`,
    epilogue: 'await db.destroy()',
  },
  /** Drizzle's `drizzle` (node-postgres) and a `users` table. */
  drizzle: {
    code: `import { drizzle } from 'drizzle-orm/node-postgres'
import { pgTable, serial, text } from 'drizzle-orm/pg-core'
const users = pgTable('users', { id: serial('id').primaryKey(), name: text('name').notNull() })`,
  },
  /** Drizzle's `drizzle` (postgres-js) and a `users` table. */
  'drizzle-postgres': {
    code: `import { drizzle } from 'drizzle-orm/postgres-js'
import { pgTable, serial, text } from 'drizzle-orm/pg-core'
const users = pgTable('users', { id: serial('id').primaryKey(), name: text('name').notNull() })`,
  },
  /** Kysely, `PostgresJSDialect` (kysely-postgres-js) and a `DB` type for the `users` table. */
  'kysely-postgres': {
    code: `import { type Generated, Kysely } from 'kysely'
import { PostgresJSDialect } from 'kysely-postgres-js'
interface DB {
  users: { id: Generated<number>; name: string }
}`,
    epilogue: 'await db.destroy()',
  },
  /** `PrismaPg` and a declared `PrismaClient` (a real one is generated from a schema). */
  prisma: {
    code: `import { PrismaPg } from '@prisma/adapter-pg'
declare class PrismaClient {
  constructor(options: { adapter: PrismaPg })
  user: {
    findMany(): Promise<{ id: number; name: string }[]>
    findUnique(args: { where: { id: number } }): Promise<{ id: number; name: string } | null>
  }
  $extends(extension: { name?: string; query?: import('@prisma/client/extension').Prisma.Extension['query'] }): this
}`,
  },
  /** URLs and a declared `PrismaClient` taking `PrismaMariaDb` (a real one is generated from a MySQL schema). */
  'prisma-mariadb': {
    code: `${ENV}
import type { PrismaMariaDb as __PrismaMariaDb } from '@prisma/adapter-mariadb'
const PRIMARY_URL = __env.primaryUrl
const [R1_URL, R2_URL] = __env.replicaUrls as [string, string]
declare class PrismaClient {
  constructor(options: { adapter: __PrismaMariaDb })
  user: {
    findMany(): Promise<{ id: number; name: string }[]>
    create(args: { data: { name: string } }): Promise<{ id: number; name: string }>
  }
  $disconnect(): Promise<void>
}`,
  },
  /** A TypeORM `User` entity (an `EntitySchema` of the `users` table); the block's `dataSource` destroyed afterwards. */
  typeorm: {
    code: `import { EntitySchema as __EntitySchema } from 'typeorm'
const User = new __EntitySchema<{ id: number; name: string }>({
  name: 'User',
  tableName: 'users',
  columns: { id: { type: Number, primary: true, generated: true }, name: { type: String } },
})`,
    epilogue: 'await dataSource.destroy()',
  },
  /** Nothing before; the block's `sequelize` closed afterwards. */
  sequelize: { code: '', epilogue: 'await sequelize.close()' },
  /**
   * What a NestJS module file imports, the URLs, NestJS's decorator settings; afterwards the
   * block's `AppModule` is booted (`createApplicationContext`) and closed.
   */
  nestjs: {
    code: `${ENV}
import 'reflect-metadata'
import { Injectable, Module } from '@nestjs/common'
import { NestFactory as __NestFactory } from '@nestjs/core'
import { ReadOnly, type Router } from 'routemate'
import { InjectRouter, RoutemateModule } from 'routemate/nestjs'
import { pgDriver } from 'routemate/pg'
const PRIMARY_URL = __env.primaryUrl
const [R1_URL, R2_URL] = __env.replicaUrls as [string, string]`,
    epilogue: `const __app = await __NestFactory.createApplicationContext(AppModule, { logger: false })
await __app.close()`,
    compilerOptions: { experimentalDecorators: true, emitDecoratorMetadata: true },
  },
  /** `pino`, imported. */
  pino: { code: "import pino from 'pino'" },
  /** For `createRouterFromConfig()`: `DB_PASSWORD` set; the router closed afterwards. */
  'config-file': {
    code: "process.env.DB_PASSWORD ??= 'doctest-secret'",
    epilogue: 'await router.close()',
  },
}

/** `doctest-env.ts`, written into the project folder: what preludes read. */
export const DOCTEST_ENV = `import type { Express } from 'express'

/** The shared cluster's primary and replicas (\`run=pg\` / \`run=mysql\` set them). */
export const primaryUrl = process.env.DATABASE_URL ?? 'postgres://app@127.0.0.1:1/app'
export const replicaUrls = process.env.REPLICA_URLS?.split(',') ?? []

/** The same server, another database. */
export function inDatabase(url: string, database: string): string {
  const u = new URL(url)
  u.pathname = \`/\${database}\`
  return u.href
}

/** Requests every route the app has once (path parameters set to 1); throws on a 5xx. */
export async function requestRoutes(app: Express): Promise<void> {
  const server = app.listen(0, '127.0.0.1')
  await new Promise<void>((resolve) => server.once('listening', () => resolve()))
  const { port } = server.address() as { port: number }
  try {
    const stack = (app as unknown as { router: { stack: { route?: { path: string; methods: Record<string, boolean> } }[] } }).router.stack
    for (const layer of stack) {
      if (layer.route === undefined) continue
      for (const method of Object.keys(layer.route.methods)) {
        const path = layer.route.path.replace(/:\\w+/g, '1')
        const res = await fetch(\`http://127.0.0.1:\${port}\${path}\`, {
          method: method.toUpperCase(),
          headers: { 'content-type': 'application/json' },
          ...(method === 'get' || method === 'head' ? {} : { body: '{}' }),
        })
        const body = await res.text()
        console.log(\`\${method.toUpperCase()} \${path} -> \${res.status} \${body.slice(0, 200)}\`)
        if (res.status >= 500) throw new Error(\`\${method.toUpperCase()} \${path} answered \${res.status}: \${body}\`)
      }
    }
  } finally {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
}
`
