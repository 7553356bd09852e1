/**
 * The published tarball works from a fresh project: `npm pack` (which builds), install it elsewhere,
 * and use it the way users do -- ESM and CommonJS, every subpath, types under NodeNext (ESM and
 * CJS) and Bundler, without `pg` for the core -- plus publint and are-the-types-wrong on the tarball.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const INSTALL_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error']
/** What a TypeScript user of `routemate/pg` installs next to it (the .d.ts files import `pg`'s types). */
const PG = 'pg@8.23.1'
const MYSQL2 = 'mysql2@3.24.6'
const APP_DEPS = [PG, 'typescript@5.9.3', '@types/node@20', '@types/pg@8.23.1']

/** The environment for child commands: no npm script variables leaking in from a parent `npm test`. */
function cleanEnv(): NodeJS.ProcessEnv {
  const keep =
    /^npm_config_(registry|cache|userconfig|globalconfig|cafile|ca|proxy|https_proxy|noproxy|strict_ssl)$/i
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_/i.test(k) && !keep.test(k)) continue
    if (k === 'INIT_CWD' || k === 'NODE_OPTIONS') continue
    env[k] = v
  }
  return env
}
const ENV = cleanEnv()

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to completion (killed after `timeoutMs`); never rejects on a non-zero exit. */
function run(cmd: string, args: readonly string[], cwd: string, timeoutMs = 120_000): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c
    })
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c
    })
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${timeoutMs} ms]`
      child.kill('SIGKILL')
    }, timeoutMs)
    child.on('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/** Runs a command that must succeed; returns its stdout. */
async function ok(cmd: string, args: readonly string[], cwd: string, timeoutMs?: number): Promise<string> {
  const r = await run(cmd, args, cwd, timeoutMs)
  if (r.code !== 0) {
    throw new Error(`\`${cmd} ${args.join(' ')}\` in ${cwd} exited ${r.code}\n${r.stdout}\n${r.stderr}`)
  }
  return r.stdout
}

/** Runs a script with `node` in `cwd` and parses the JSON it prints last. */
async function nodeJson(cwd: string, args: readonly string[]): Promise<Record<string, unknown>> {
  const out = (await ok(process.execPath, args, cwd)).trim().split('\n')
  return JSON.parse(out[out.length - 1] ?? '') as Record<string, unknown>
}

let work: string
let tarball: string
/** Fresh project with the tarball, pg, typescript, @types/node, @types/pg. */
let app: string
/** Fresh project with the tarball alone (no pg). */
let bare: string
/** Fresh project with the tarball and mysql2, no pg: a MySQL/MariaDB-only user. */
let mysqlOnly: string
/** Fresh project with the tarball and pg, no mysql2. */
let pgOnly: string

function freshProject(name: string): string {
  const dir = path.join(work, name)
  fs.mkdirSync(dir)
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ name: `routemate-${name}`, version: '0.0.0', private: true }, null, 2)}\n`,
  )
  return dir
}

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'routemate-pack-'))
  const packDir = path.join(work, 'pack')
  fs.mkdirSync(packDir)
  await ok('npm', ['pack', '--pack-destination', packDir, '--loglevel=error'], ROOT, 180_000)
  const tgz = fs.readdirSync(packDir).filter((f) => f.endsWith('.tgz'))
  expect(tgz).toHaveLength(1)
  tarball = path.join(packDir, tgz[0]!)
  app = freshProject('app')
  bare = freshProject('bare')
  mysqlOnly = freshProject('mysql-only')
  pgOnly = freshProject('pg-only')
  await Promise.all([
    ok('npm', ['install', tarball, ...APP_DEPS, ...INSTALL_FLAGS], app, 150_000),
    ok('npm', ['install', tarball, ...INSTALL_FLAGS], bare, 150_000),
    ok('npm', ['install', tarball, MYSQL2, ...INSTALL_FLAGS], mysqlOnly, 150_000),
    ok('npm', ['install', tarball, PG, ...INSTALL_FLAGS], pgOnly, 150_000),
  ])
}, 300_000)

afterAll(() => {
  if (work !== undefined) fs.rmSync(work, { recursive: true, force: true })
})

describe('the packed tarball', () => {
  it('holds dist/, package.json and the docs, and nothing else', async () => {
    const files = (await ok('tar', ['-tzf', tarball], work))
      .split('\n')
      .filter((f) => f !== '' && !f.endsWith('/'))
      .map((f) => f.replace(/^package\//, ''))
    const allowed = /^(dist\/.+|package\.json|README\.md|CHANGELOG\.md|LICENSE)$/
    expect(files.filter((f) => !allowed.test(f))).toEqual([])
    expect(files.filter((f) => /^(src|test|\.ci|node_modules|bench|examples|docs)\//.test(f))).toEqual([])
    for (const entry of ['', 'pg/', 'testing/']) {
      for (const ext of ['js', 'cjs', 'd.ts', 'd.cts']) expect(files).toContain(`dist/${entry}index.${ext}`)
    }
    expect(files).toContain('package.json')
    if (fs.existsSync(path.join(ROOT, 'README.md'))) expect(files).toContain('README.md')
  }, 30_000)

  it('imports every entry point as ESM; errors are one class hierarchy across subpaths', async () => {
    const out = await nodeJson(app, [
      '--input-type=module',
      '-e',
      `
import { ConfigError, createRouter, Router, RoutemateError } from 'routemate'
import { pgDriver } from 'routemate/pg'
import { PgClusterError, startPgCluster } from 'routemate/testing'
const describe = (e) => ({ name: e?.name, code: e?.code, path: e?.path,
  config: e instanceof ConfigError, routemate: e instanceof RoutemateError })
const out = {
  resolved: ['routemate', 'routemate/pg', 'routemate/testing'].map((s) => import.meta.resolve(s)),
  kinds: [typeof createRouter, typeof Router, typeof RoutemateError, typeof pgDriver, typeof startPgCluster],
  errorClass: RoutemateError.prototype instanceof Error,
  dialect: pgDriver().dialect,
}
try { createRouter({ driver: pgDriver(), primary: 'not a url' }); out.fromCore = 'not thrown' }
catch (e) { out.fromCore = describe(e) }
try { await startPgCluster({ replicas: -1 }); out.fromTesting = 'not thrown' }
catch (e) { out.fromTesting = describe(e) }
out.pgClusterError = new PgClusterError('x') instanceof RoutemateError
const router = createRouter({ driver: pgDriver(), primary: 'postgres://app:pw@127.0.0.1:1/app', healthCheck: false })
out.router = router instanceof Router && typeof router.pool().query === 'function'
await router.close()
console.log(JSON.stringify(out))
`,
    ])
    expect(out).toEqual({
      resolved: [
        expect.stringMatching(/\/node_modules\/routemate\/dist\/index\.js$/),
        expect.stringMatching(/\/node_modules\/routemate\/dist\/pg\/index\.js$/),
        expect.stringMatching(/\/node_modules\/routemate\/dist\/testing\/index\.js$/),
      ],
      kinds: ['function', 'function', 'function', 'function', 'function'],
      errorClass: true,
      dialect: 'postgres',
      fromCore: {
        name: 'ConfigError',
        code: 'ROUTEMATE_CONFIG',
        path: 'primary',
        config: true,
        routemate: true,
      },
      fromTesting: {
        name: 'ConfigError',
        code: 'ROUTEMATE_CONFIG',
        path: 'replicas',
        config: true,
        routemate: true,
      },
      pgClusterError: true,
      router: true,
    })
  }, 60_000)

  it('requires every entry point as CommonJS; errors are one class hierarchy across subpaths', async () => {
    const out = await nodeJson(app, [
      '-e',
      `
const { ConfigError, createRouter, Router, RoutemateError } = require('routemate')
const { pgDriver } = require('routemate/pg')
const { PgClusterError, startPgCluster } = require('routemate/testing')
const describe = (e) => ({ name: e?.name, code: e?.code, path: e?.path,
  config: e instanceof ConfigError, routemate: e instanceof RoutemateError })
;(async () => {
  const out = {
    resolved: ['routemate', 'routemate/pg', 'routemate/testing'].map((s) => require.resolve(s)),
    kinds: [typeof createRouter, typeof Router, typeof RoutemateError, typeof pgDriver, typeof startPgCluster],
    errorClass: RoutemateError.prototype instanceof Error,
    dialect: pgDriver().dialect,
  }
  try { createRouter({ driver: pgDriver(), primary: 'not a url' }); out.fromCore = 'not thrown' }
  catch (e) { out.fromCore = describe(e) }
  try { await startPgCluster({ replicas: -1 }); out.fromTesting = 'not thrown' }
  catch (e) { out.fromTesting = describe(e) }
  out.pgClusterError = new PgClusterError('x') instanceof RoutemateError
  const router = createRouter({ driver: pgDriver(), primary: 'postgres://app:pw@127.0.0.1:1/app', healthCheck: false })
  out.router = router instanceof Router && typeof router.pool().query === 'function'
  await router.close()
  console.log(JSON.stringify(out))
})().catch((e) => { console.error(e); process.exitCode = 1 })
`,
    ])
    expect(out).toEqual({
      resolved: [
        expect.stringMatching(/\/node_modules\/routemate\/dist\/index\.cjs$/),
        expect.stringMatching(/\/node_modules\/routemate\/dist\/pg\/index\.cjs$/),
        expect.stringMatching(/\/node_modules\/routemate\/dist\/testing\/index\.cjs$/),
      ],
      kinds: ['function', 'function', 'function', 'function', 'function'],
      errorClass: true,
      dialect: 'postgres',
      fromCore: {
        name: 'ConfigError',
        code: 'ROUTEMATE_CONFIG',
        path: 'primary',
        config: true,
        routemate: true,
      },
      fromTesting: {
        name: 'ConfigError',
        code: 'ROUTEMATE_CONFIG',
        path: 'replicas',
        config: true,
        routemate: true,
      },
      pgClusterError: true,
      router: true,
    })
  }, 60_000)

  it('loads the core without pg installed; routemate/pg then fails to load', async () => {
    expect(fs.existsSync(path.join(bare, 'node_modules', 'pg'))).toBe(false)
    const cjs = await nodeJson(bare, [
      '-e',
      `
const out = { core: typeof require('routemate').createRouter }
try { require('routemate/pg'); out.pg = 'loaded' } catch (e) { out.pg = { code: e.code, message: e.message } }
console.log(JSON.stringify(out))
`,
    ])
    const esm = await nodeJson(bare, [
      '--input-type=module',
      '-e',
      `
const out = { core: typeof (await import('routemate')).createRouter }
try { await import('routemate/pg'); out.pg = 'loaded' } catch (e) { out.pg = { code: e.code, message: e.message } }
console.log(JSON.stringify(out))
`,
    ])
    expect(cjs).toEqual({
      core: 'function',
      pg: { code: 'MODULE_NOT_FOUND', message: expect.stringMatching(/^Cannot find module 'pg'/) },
    })
    expect(esm).toEqual({
      core: 'function',
      pg: { code: 'ERR_MODULE_NOT_FOUND', message: expect.stringMatching(/^Cannot find package 'pg'/) },
    })
  }, 60_000)

  /** Script: each starter of routemate/testing either runs a cluster (one query on each node) or says what is missing. */
  const CLUSTER_SCRIPT = `
const describe = (e) => ({ name: e?.name, code: e?.code, message: String(e?.message).split('\\n')[0] })
async function tryCluster(start) {
  let cluster
  try {
    cluster = await start({ replicas: 1 })
    const rows = []
    for (const node of cluster.nodes) rows.push(...(await cluster.query(node.name, 'SELECT 1 AS one')))
    return { rows }
  } catch (e) {
    return describe(e)
  } finally {
    await cluster?.stop()
  }
}
const out = {}
out.mariadb = await tryCluster(testing.startMariaDbCluster)
out.pg = await tryCluster(testing.startPgCluster)
console.log(JSON.stringify(out))
`
  const ESM_PRELUDE = `const testing = await import('routemate/testing')`
  const CJS_WRAP = (body: string) =>
    `const testing = require('routemate/testing');(async () => {${body}})().catch((e) => { console.error(e); process.exitCode = 1 })`

  it('routemate/testing with mysql2 and without pg: a MariaDB cluster runs (ESM and CJS), startPgCluster says pg is missing', async () => {
    expect(fs.existsSync(path.join(mysqlOnly, 'node_modules', 'pg'))).toBe(false)
    expect(fs.existsSync(path.join(mysqlOnly, 'node_modules', 'mysql2'))).toBe(true)
    const expected = {
      mariadb: { rows: [{ one: 1 }, { one: 1 }] },
      pg: {
        name: 'PgClusterError',
        code: 'ROUTEMATE_PG_CLUSTER',
        message: 'startPgCluster needs the `pg` package: npm install -D pg',
      },
    }
    const esm = await nodeJson(mysqlOnly, ['--input-type=module', '-e', `${ESM_PRELUDE}\n${CLUSTER_SCRIPT}`])
    expect(esm).toEqual(expected)
    const cjs = await nodeJson(mysqlOnly, ['-e', CJS_WRAP(CLUSTER_SCRIPT)])
    expect(cjs).toEqual(expected)
  }, 120_000)

  it('routemate/testing with pg and without mysql2: a PostgreSQL cluster runs, startMariaDbCluster says mysql2 is missing', async () => {
    expect(fs.existsSync(path.join(pgOnly, 'node_modules', 'mysql2'))).toBe(false)
    expect(fs.existsSync(path.join(pgOnly, 'node_modules', 'pg'))).toBe(true)
    const out = await nodeJson(pgOnly, ['--input-type=module', '-e', `${ESM_PRELUDE}\n${CLUSTER_SCRIPT}`])
    expect(out).toEqual({
      mariadb: {
        name: 'MariaDbClusterError',
        code: 'ROUTEMATE_MARIADB_CLUSTER',
        message: 'startMariaDbCluster needs the `mysql2` package: npm install -D mysql2',
      },
      pg: { rows: [{ one: 1 }, { one: 1 }] },
    })
  }, 120_000)

  it('routemate/testing loads with neither driver; both starters say which package is missing', async () => {
    const out = await nodeJson(bare, ['-e', CJS_WRAP(CLUSTER_SCRIPT)])
    expect(out).toEqual({
      mariadb: expect.objectContaining({ message: expect.stringContaining('needs the `mysql2` package') }),
      pg: expect.objectContaining({ message: expect.stringContaining('needs the `pg` package') }),
    })
  }, 60_000)

  describe('types', () => {
    const CHECK_TS = `
import type { Pool } from 'pg'
import { createRouter, type Router, type RouterOptions, RoutemateError } from 'routemate'
import { RoundRobinBalancer } from 'routemate/balancers'
import { KeptConnectionProber } from 'routemate/driver'
import { type PgDriver, type PgDriverOptions, pgDriver } from 'routemate/pg'
import { HashResolver } from 'routemate/sharding'
import { type PgCluster, startPgCluster } from 'routemate/testing'

export async function main(): Promise<number> {
  const cluster: PgCluster = await startPgCluster({ replicas: 1 })
  const pgOptions: PgDriverOptions = {}
  const options: RouterOptions = {
    driver: pgDriver(pgOptions),
    primary: cluster.primary.url,
    replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url })),
    healthCheck: { intervalMs: 1000, timeoutMs: 500 },
  }
  const router: Router = createRouter(options)
  try {
    const { rows } = await router.readOnly(() => router.query<{ n: number }>('SELECT 1 AS n'))
    const n: number | undefined = rows[0]?.n
    await router.transaction(async (tx) => {
      await tx.query('SELECT 1')
    })
    return n ?? 0
  } catch (err) {
    if (err instanceof RoutemateError) return err.code.length
    throw err
  } finally {
    await router.close()
    await cluster.stop()
  }
}

// A router is typed by its driver: router.pool() is a pg.Pool, results have pg's fields.
export function typedByDriver(url: string): Pool {
  const balancer = new RoundRobinBalancer()
  const router: Router<PgDriver> = createRouter({ driver: pgDriver(), primary: url, balancer })
  const pool: Pool = router.pool()
  // @ts-expect-error a Pool is not a string
  const notString: string = router.pool()
  const command: Promise<string> = router.query('SELECT 1').then((r) => r.command)
  const shard: Promise<string> = router.shardFor(1)
  void [notString, command, shard, new HashResolver(), KeptConnectionProber]
  return pool
}

// The declarations are real types, not \`any\`:
// @ts-expect-error driver is required
export const noDriver: RouterOptions = { primary: 'postgres://h/db' }
// @ts-expect-error not a balancer
export const badBalancer: RouterOptions = { driver: pgDriver(), primary: 'postgres://h/db', balancer: 'fastest' }
// @ts-expect-error replicas is a count
export const badCluster = () => startPgCluster({ replicas: 'two' })
`

    /**
     * Type-checks check.ts in `app/<name>/` (whose package.json says `type`) with `compilerOptions`;
     * returns the declaration files of routemate it used.
     */
    async function typecheck(
      name: string,
      type: 'module' | 'commonjs',
      compilerOptions: Record<string, unknown>,
    ): Promise<string[]> {
      const dir = path.join(app, name)
      fs.mkdirSync(dir, { recursive: true })
      fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ type }, null, 2)}\n`)
      fs.writeFileSync(path.join(dir, 'check.ts'), CHECK_TS)
      const tsconfig = {
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2022'],
          types: ['node'],
          strict: true,
          skipLibCheck: false, // check the shipped .d.ts files too
          noEmit: true,
          ...compilerOptions,
        },
        files: ['check.ts'],
      }
      fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2))
      const tsc = path.join(app, 'node_modules', 'typescript', 'bin', 'tsc')
      const r = await run(process.execPath, [tsc, '-p', 'tsconfig.json', '--listFiles'], dir)
      const lines = r.stdout.split('\n').map((l) => l.trim().replace(/\\/g, '/'))
      if (r.code !== 0) {
        const errors = lines.filter((l) => l !== '' && !path.isAbsolute(l))
        throw new Error(`tsc (${name}) exited ${r.code}:\n${errors.join('\n')}\n${r.stderr}`)
      }
      const marker = '/node_modules/routemate/'
      return lines
        .filter((f) => f.includes(marker))
        .map((f) => f.slice(f.indexOf(marker) + marker.length))
        .sort()
    }

    const entries = (ext: string) => [
      `dist/index.${ext}`,
      `dist/pg/index.${ext}`,
      `dist/testing/index.${ext}`,
    ]

    it('type-check under NodeNext as ESM ("type": "module")', async () => {
      const used = await typecheck('esm', 'module', { module: 'NodeNext', moduleResolution: 'NodeNext' })
      expect(used).toEqual(expect.arrayContaining(entries('d.ts')))
      expect(used.filter((f) => f.endsWith('.d.cts'))).toEqual([])
    }, 60_000)

    it('type-check under NodeNext as CommonJS ("type": "commonjs")', async () => {
      const used = await typecheck('cjs', 'commonjs', { module: 'NodeNext', moduleResolution: 'NodeNext' })
      expect(used).toEqual(expect.arrayContaining(entries('d.cts')))
      expect(used.filter((f) => f.endsWith('.d.ts'))).toEqual([])
    }, 60_000)

    it('type-check under Bundler resolution (module ESNext)', async () => {
      const used = await typecheck('bundler', 'module', { module: 'ESNext', moduleResolution: 'Bundler' })
      expect(used).toEqual(expect.arrayContaining(entries('d.ts')))
    }, 60_000)
  })

  it('passes publint --strict', async () => {
    const r = await run('npx', ['--no', 'publint', 'run', tarball, '--strict'], ROOT, 60_000)
    const output = `${r.stdout}\n${r.stderr}`
    expect(r.code, output).toBe(0)
    expect(output).not.toMatch(/Errors?:|Warnings?:/)
  }, 60_000)

  it('passes are-the-types-wrong for every entry point (node16 profile: ESM and CJS, no false CJS/ESM)', async () => {
    const r = await run(
      'npx',
      ['--no', 'attw', tarball, '--profile', 'node16', '--format', 'json', '--no-definitely-typed'],
      ROOT,
      60_000,
    )
    expect(r.code, `${r.stdout}\n${r.stderr}`.slice(0, 4000)).toBe(0)
    const report = JSON.parse(r.stdout) as {
      analysis: { entrypoints: Record<string, unknown> }
      problems?: Record<string, Array<{ kind: string; entrypoint?: string; resolutionKind?: string }>>
    }
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>
    }
    expect(Object.keys(report.analysis.entrypoints).sort()).toEqual(Object.keys(pkg.exports).sort())
    // The node16 profile ignores `moduleResolution: node10` (TypeScript's pre-exports resolution).
    const problems = Object.values(report.problems ?? {})
      .flat()
      .filter((p) => p.resolutionKind !== 'node10')
    expect(problems).toEqual([])
  }, 60_000)
})
