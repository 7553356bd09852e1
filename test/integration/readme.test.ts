/**
 * The README cannot rot: every TypeScript/JavaScript block is type-checked with `tsc --strict`
 * (ESM, NodeNext) against the packed package's types, in a fresh project folder, and run against
 * a real cluster where it can run; YAML samples are loaded with `routemate/config`; the quick
 * starts' `routemate cluster ... -- node quick-start.mjs` lines are run as written, on the blocks
 * saved as written. Each block says how with a marker comment before it (`support/readme-blocks.ts`;
 * the convention is in docs/architecture.md, Tests); a block without one fails here. The CLI
 * output samples (`cli=`) are compared with real output by `cli.test.ts`. The runnable examples
 * the README points to (Express, NestJS) are run too.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts with ${ENV} references
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config-file/index.js'
import { type PgCluster, startPgCluster } from '../../src/testing/index.js'
import { REPO_ROOT } from '../support/ensure-built.js'
import { DoctestProject, type ProjectFile, type TypeProblem } from './support/doctest-project.js'
import { readmeBlocks, where } from './support/readme-blocks.js'
import { blockHandlingProblems, type ComposedBlock, composeBlock } from './support/readme-doctest.js'

const blocks = readmeBlocks()
const composed = blocks.map(composeBlock)
const typed = composed.filter((c): c is ComposedBlock => c !== undefined)
const runnable = typed.filter((c) => c.runFile !== undefined)
const commands = blocks.filter((b) => b.marker?.command === true)
const needsPg = runnable.some((c) => c.block.marker?.run === 'pg')

/** What the quick starts print, by section. */
const EXPECTED_OUTPUT: Readonly<Record<string, readonly RegExp[]>> = {
  'Quick start (PostgreSQL)': [/^\[ \{ id: 1, balance: 100 \} \] 1$/m],
  'Quick start (MySQL / MariaDB)': [/^1 1$/m, /^\{ id: 1, name: 'ada' \}$/m],
}

/** Tables the fragments use, on the shared cluster. */
const FIXTURE_SQL = [
  'CREATE TABLE users (id serial PRIMARY KEY, name text NOT NULL)',
  "INSERT INTO users (name) VALUES ('grace')",
  'CREATE TABLE orders (id serial PRIMARY KEY, customer int NOT NULL, amount numeric NOT NULL)',
  'CREATE TABLE stock (id int PRIMARY KEY, n int NOT NULL)',
  'INSERT INTO stock VALUES (3, 10)',
  'CREATE TABLE audit_log (id serial PRIMARY KEY, what text)',
  'CREATE TABLE jobs (id serial PRIMARY KEY)',
  'INSERT INTO jobs DEFAULT VALUES',
  'CREATE TABLE payments (order_id int, amount numeric)',
  'CREATE TABLE mails (user_id text, subject text)',
]

let project: DoctestProject
let cluster: PgCluster | undefined
let typeErrors: TypeProblem[]

beforeAll(async () => {
  project = DoctestProject.create()
  const files: ProjectFile[] = typed.map((c) => c.file)
  typeErrors = project.compile(files)
  for (const c of typed) if (c.savedAs !== undefined) project.write(c.savedAs, c.block.code)
  const yaml = blocks.find((b) => b.lang === 'yaml')
  if (yaml !== undefined) project.write('routemate.config.yaml', yaml.code)
  if (needsPg) {
    cluster = await startPgCluster({ replicas: 3 })
    for (const sql of FIXTURE_SQL) await cluster.query('primary', sql)
    await cluster.query('primary', 'CREATE DATABASE app_s1 OWNER app', [], { superuser: true })
    await cluster.query('primary', 'CREATE TABLE mails (user_id text, subject text)', [], {
      database: 'app_s1',
    })
    await cluster.waitForReplication()
  }
}, 180_000)

afterAll(async () => {
  await cluster?.stop()
  project?.remove()
})

describe('README doc-tests', () => {
  it('every code block has doc-test handling (a marker before it)', () => {
    expect(blockHandlingProblems(blocks).join('\n')).toBe('')
  })

  it('a block without handling fails, named by line, heading and first line', () => {
    const md = [
      '## New section',
      '',
      '```ts',
      'await router.query(1)',
      '```',
      '',
      '<!-- doctest: typecheck-only -->',
      '```ts',
      'x()',
      '```',
      '',
      '```',
      'output',
      '```',
      '<!-- doctest: run=pg prelude=nope -->',
      '```ts',
      'y()',
      '```',
    ].join('\n')
    const problems = blockHandlingProblems(readmeBlocks(md))
    expect(problems).toHaveLength(4)
    expect(problems[0]).toMatch(
      /^README\.md:4 \(## New section, block 1: await router\.query\(1\)\): a ```ts block with no doc-test handling: put a marker/,
    )
    expect(problems[1]).toMatch(/block 2: x\(\)\): bad doctest marker: typecheck-only needs a reason/)
    expect(problems[2]).toMatch(/block 3: output\): an output block with no doc-test handling/)
    expect(problems[3]).toMatch(/block 4: y\(\)\): unknown prelude "nope"/)
  })

  it('every TypeScript block type-checks under tsc --strict (ESM, NodeNext) against the packed package', () => {
    const messages = typeErrors.map((e) => {
      const c = typed.find((t) => t.file.name === e.file)
      if (c === undefined) return `${e.file}:${e.line} ${e.message}`
      const inBlock = e.line - c.preludeLines
      if (inBlock < 1)
        return `${where(c.block)}: in prelude ${c.block.marker?.preludes.join(',')}: ${e.message}`
      if (inBlock > c.codeLines) return `${where(c.block)}: in the epilogue: ${e.message}`
      return `README.md:${c.block.line + inBlock - 1} (## ${c.block.heading}): ${e.message}`
    })
    expect(messages.join('\n')).toBe('')
  })

  it('every YAML sample is a valid config file (routemate/config)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routemate-readme-yaml-'))
    try {
      for (const b of blocks.filter((x) => x.lang === 'yaml')) {
        const file = path.join(dir, `block-${b.index + 1}.yaml`)
        fs.writeFileSync(file, b.code)
        await expect(
          loadConfig(file, { env: { DB_PASSWORD: 'doctest-secret' } }),
          where(b),
        ).resolves.toMatchObject({ driver: expect.anything() })
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  for (const c of runnable) {
    it(`runs: ${where(c.block)}`, async () => {
      const env: Record<string, string> = {}
      if (c.block.marker?.run === 'pg' && cluster !== undefined) {
        env.DATABASE_URL = cluster.primary.url
        env.REPLICA_URLS = cluster.replicas.map((r) => r.url).join(',')
      }
      const r = await project.run(process.execPath, [c.runFile as string], env, 90_000)
      expect(r.code, `${where(c.block)}\n${r.stdout}\n${r.stderr}`).toBe(0)
      expect(r.stderr, where(c.block)).not.toMatch(/Error/)
    })
  }

  for (const b of commands) {
    it(`command runs as written: ${where(b)}`, async () => {
      const line = b.code.trim()
      const r = await project.run('sh', ['-c', line], {}, 150_000, sectionDir(b.heading))
      expect(r.code, `${where(b)}\n${r.stdout}\n${r.stderr}`).toBe(0)
      expect(r.stderr, where(b)).not.toMatch(/Error/)
      for (const pattern of EXPECTED_OUTPUT[b.heading] ?? []) expect(r.stdout, where(b)).toMatch(pattern)
    })
  }
})

/** The folder of a section's `file=` blocks and `command` blocks. */
function sectionDir(heading: string): string {
  const c = typed.find((t) => t.block.heading === heading && t.savedAs !== undefined)
  return c === undefined ? '.' : path.dirname(c.savedAs as string)
}

describe('the runnable examples the README points to', () => {
  it('the Express example runs end to end', async () => {
    const r = await project.run(
      process.execPath,
      [path.join(REPO_ROOT, 'examples/express/server.mjs')],
      {},
      90_000,
    )
    expect(r.code, r.stdout + r.stderr).toBe(0)
  })

  it('the NestJS example runs end to end', async () => {
    const r = await project.run(
      process.execPath,
      [path.join(REPO_ROOT, 'examples/nestjs/main.mjs')],
      {},
      90_000,
    )
    expect(r.code, r.stdout + r.stderr).toBe(0)
  })
})
