/**
 * The README's "Multi-host URLs" block, as written: extracted from README.md, compiled as it is
 * (TypeScript), pointed at the built package and run with `DATABASE_URL` set to a multi-host URL
 * of a real cluster (replicas listed first, `target_session_attrs=read-only`). Its own file, so
 * that it needs nothing of the other README tests but the built package.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PgCluster, startPgCluster } from '../../src/testing/index.js'
import { REPO_ROOT } from '../support/ensure-built.js'

const HEADING = 'Multi-host URLs'
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'routemate-readme-multi-host-'))

/** The first ```ts block of the README section. */
function block(): string {
  const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8')
  const at = readme.indexOf(`\n## ${HEADING}\n`)
  expect(at, `README has a "## ${HEADING}" section`).toBeGreaterThan(0)
  const match = /```ts\n([\s\S]*?)```/.exec(readme.slice(at))
  expect(match, `a ts block under "${HEADING}"`).not.toBeNull()
  return (match as RegExpExecArray)[1] as string
}

/** Compiles the block to an ESM script importing the built package, and runs it. */
function run(code: string, env: Record<string, string>): { status: number | null; out: string } {
  const dist = (sub: string) => pathToFileURL(path.join(REPO_ROOT, 'dist', sub, 'index.js')).href
  const js = ts
    .transpileModule(code, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    })
    .outputText.replace(/from 'routemate'/g, `from '${dist('')}'`)
    .replace(/from 'routemate\/(\w+)'/g, (_, sub: string) => `from '${dist(sub)}'`)
  const file = path.join(tmp, 'multi-host-urls.mjs')
  fs.writeFileSync(file, js)
  const r = spawnSync(process.execPath, [file], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` }
}

describe('README multi-host URLs, as written', () => {
  let cluster: PgCluster

  beforeAll(async () => {
    cluster = await startPgCluster({ replicas: 2 })
    await cluster.query('primary', 'CREATE TABLE users (id serial PRIMARY KEY, name text)')
    await cluster.query('primary', "INSERT INTO users (name) VALUES ('bob')")
    await cluster.waitForReplication()
  })

  afterAll(async () => {
    await cluster?.stop()
    fs.rmSync(tmp, { recursive: true, force: true })
  })

  it('runs and does what it says: nodes named host:port, pool reads read-only, pool writes refused, explicit scopes win', async () => {
    // The URL the block's comment shows, with the test cluster's servers, replicas listed first.
    const u = new URL(cluster.primary.url)
    const hosts = [cluster.replicas[0]!, cluster.primary, cluster.replicas[1]!].map(
      (n) => `127.0.0.1:${n.port}`,
    )
    const url = `${u.protocol}//${u.username}:${u.password}@${hosts.join(',')}${u.pathname}?target_session_attrs=read-only`
    const r = run(block(), { DATABASE_URL: url })
    expect(r.out).not.toMatch(/Error/)
    expect(r.status).toBe(0)
    expect(r.out.split('\n').slice(0, 4)).toEqual([
      `primary is now ${hosts[1]} (was undefined)`,
      `[ '${hosts[0]}', '${hosts[1]}', '${hosts[2]}' ]`,
      'on',
      'ROUTEMATE_READ_ONLY_VIOLATION',
    ])
    // The pool's DELETE FROM users was refused; the one in router.primary ran.
    expect(await cluster.query('primary', 'SELECT name FROM users ORDER BY id')).toEqual([{ name: 'ada' }])
  })
})
