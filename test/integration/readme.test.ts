/**
 * The README's quick starts cannot rot: their code blocks are extracted from README.md, compiled
 * as they are (TypeScript), pointed at the built package and run against real clusters. The
 * runnable examples the README sends newcomers to (Express, NestJS) are run too.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type MariaDbCluster,
  type PgCluster,
  startMariaDbCluster,
  startPgCluster,
} from '../../src/testing/index.js'
import { REPO_ROOT } from '../support/ensure-built.js'

const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8')
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'routemate-readme-'))

/** The first ```ts block after a heading of the README. */
function codeAfter(heading: string): string {
  const at = readme.indexOf(`\n## ${heading}\n`)
  expect(at, `README has a "## ${heading}" section`).toBeGreaterThan(0)
  const match = /```ts\n([\s\S]*?)```/.exec(readme.slice(at))
  expect(match, `a ts block under "${heading}"`).not.toBeNull()
  return (match as RegExpExecArray)[1] as string
}

/** Compiles a README block to an ESM script importing the built package, and runs it. */
function run(
  name: string,
  code: string,
  env: Record<string, string>,
): { status: number | null; out: string } {
  const dist = (sub: string) => pathToFileURL(path.join(REPO_ROOT, 'dist', sub, 'index.js')).href
  const js = ts
    .transpileModule(code, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    })
    .outputText.replace(/from 'routemate'/g, `from '${dist('')}'`)
    .replace(/from 'routemate\/(\w+)'/g, (_, sub: string) => `from '${dist(sub)}'`)
  const file = path.join(tmp, `${name}.mjs`)
  fs.writeFileSync(file, js)
  const r = spawnSync(process.execPath, [file], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` }
}

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true })
})

describe('README quick start (PostgreSQL), as written', () => {
  let cluster: PgCluster

  beforeAll(async () => {
    cluster = await startPgCluster({ replicas: 2 })
    await cluster.query('primary', 'CREATE TABLE users (id serial PRIMARY KEY, name text)')
    await cluster.query('primary', 'CREATE TABLE accounts (id int PRIMARY KEY, balance int)')
    await cluster.query('primary', 'INSERT INTO accounts VALUES (1, 100), (2, 100)')
    await cluster.waitForReplication()
  })

  afterAll(async () => {
    await cluster?.stop()
  })

  it('runs and does what it says', async () => {
    const r = run('quick-start-pg', codeAfter('Quick start (PostgreSQL)'), {
      DATABASE_URL: cluster.primary.url,
      REPLICA1_URL: cluster.replicas[0]!.url,
      REPLICA2_URL: cluster.replicas[1]!.url,
    })
    expect(r.out).not.toMatch(/Error/)
    expect(r.status).toBe(0)
    const users = await cluster.query('primary', 'SELECT name FROM users')
    expect(users).toEqual([{ name: 'ada' }])
    const accounts = await cluster.query('primary', 'SELECT id, balance FROM accounts ORDER BY id')
    expect(accounts).toEqual([
      { id: 1, balance: 90 },
      { id: 2, balance: 110 },
    ])
  })

  it('the Express example runs end to end', () => {
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'examples/express/server.mjs')], {
      encoding: 'utf8',
      timeout: 90_000,
    })
    expect(r.status, r.stdout + r.stderr).toBe(0)
  })

  it('the NestJS example runs end to end', () => {
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'examples/nestjs/main.mjs')], {
      encoding: 'utf8',
      timeout: 90_000,
    })
    expect(r.status, r.stdout + r.stderr).toBe(0)
  })
})

describe('README quick start (MySQL / MariaDB), as written', () => {
  let cluster: MariaDbCluster

  beforeAll(async () => {
    cluster = await startMariaDbCluster({ replicas: 2 })
    await cluster.query('primary', 'CREATE TABLE users (id INT AUTO_INCREMENT PRIMARY KEY, name TEXT)')
    await cluster.waitForReplication()
  })

  afterAll(async () => {
    await cluster?.stop()
  })

  it('runs and does what it says', async () => {
    const code = codeAfter('Quick start (MySQL / MariaDB)')
      .replace("'mysql://app:secret@db-primary:3306/app'", 'process.env.PRIMARY_URL')
      .replace(
        "['mysql://app:secret@db-replica1:3306/app', 'mysql://app:secret@db-replica2:3306/app']",
        '[process.env.REPLICA1_URL, process.env.REPLICA2_URL]',
      )
    expect(code).toContain('process.env.PRIMARY_URL') // the README's URLs are the ones replaced
    expect(code).toContain('process.env.REPLICA1_URL')
    const r = run('quick-start-mysql', `${code}\nawait router.close()\n`, {
      PRIMARY_URL: cluster.primary.url,
      REPLICA1_URL: cluster.replicas[0]!.url,
      REPLICA2_URL: cluster.replicas[1]!.url,
    })
    expect(r.out).not.toMatch(/Error/)
    expect(r.status).toBe(0)
    expect(r.out).toMatch(/^1 1$/m) // console.log(r.rowCount, r.insertId)
    expect(await cluster.query('primary', 'SELECT name FROM users')).toEqual([{ name: 'ada' }])
  })
})
