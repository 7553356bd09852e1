/**
 * The `routemate` CLI against real clusters: `status` in-process through `runCli` (all up, a
 * replica killed, the primary killed, --json, colours, passwords), one `status` on MariaDB, one
 * smoke test of the built executable `dist/cli/main.js`, and its `check` of hostile and invalid
 * files (every error, with lines).
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts with ${ENV} references
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StatusReport } from '../../src/cli/status-report.js'
import { runCli } from '../../src/cli/run-cli.js'
import {
  type MariaDbCluster,
  type PgCluster,
  startMariaDbCluster,
  startPgCluster,
} from '../../src/testing/index.js'

const PG_SECRET = 'app-secret' // startPgCluster's default password of `app`
const WRONG = 'Wr0ng-pa55word'
const ESC = '\u001b['
const dir = mkdtempSync(join(tmpdir(), 'routemate-cli-it-'))

afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Writes a YAML config; `${DB_PASSWORD}` stands for the password where the URLs had it. */
function config(name: string, driver: string, primary: string, replicas: string[], secret: string): string {
  const ref = (url: string) => url.replace(`:${encodeURIComponent(secret)}@`, ':${DB_PASSWORD}@')
  const lines = [
    `driver: ${driver}`,
    `primary: ${ref(primary)}`,
    'replicas:',
    ...replicas.map((r) => `  - ${ref(r)}`),
    'healthCheck: { intervalMs: 1000, timeoutMs: 500 }',
  ]
  writeFileSync(join(dir, name), `${lines.join('\n')}\n`)
  return name
}

async function run(argv: string[], opts: { isTTY?: boolean; env?: Record<string, string> } = {}) {
  let stdout = ''
  let stderr = ''
  const code = await runCli(argv, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    isTTY: opts.isTTY ?? false,
    env: opts.env ?? {},
    cwd: dir,
  })
  return { code, stdout, stderr, all: `${stdout}\n${stderr}` }
}

/** The table's rows by node name: [shard, node, expected, actual, state, latency, lag, note]. */
function rows(stdout: string): Map<string, string[]> {
  const lines = stdout.split('\n')
  const start = lines.findIndex((l) => l.startsWith('SHARD'))
  const map = new Map<string, string[]>()
  for (const line of lines.slice(start + 1)) {
    if (line === '') break
    const cells = line.split(/ {2,}/)
    map.set(cells[1]!, cells)
  }
  return map
}

describe('routemate status (postgres)', () => {
  let cluster: PgCluster
  const env = { DB_PASSWORD: PG_SECRET }
  let file: string

  beforeAll(async () => {
    cluster = await startPgCluster({ replicas: 2 })
    file = config(
      'pg.yaml',
      'pg',
      cluster.primary.url,
      cluster.replicas.map((r) => r.url),
      PG_SECRET,
    )
    expect(cluster.primary.url).toContain(`:${PG_SECRET}@`)
  })

  afterAll(async () => {
    await cluster?.stop()
  })

  it('all up: exit 0, three nodes up, plain text in a pipe', async () => {
    const r = await run(['status', file], { env })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).not.toContain(ESC)
    expect(r.stdout.split('\n')[0]).toBe('pg.yaml: 1 cluster, 3 nodes (postgres)')
    const table = rows(r.stdout)
    expect([...table.keys()]).toEqual(['primary', 'replica1', 'replica2'])
    expect(table.get('primary')?.slice(0, 5)).toEqual(['default', 'primary', 'primary', 'primary', 'up'])
    expect(table.get('replica1')?.slice(0, 5)).toEqual(['default', 'replica1', 'replica', 'replica', 'up'])
    expect(table.get('replica2')?.slice(0, 5)).toEqual(['default', 'replica2', 'replica', 'replica', 'up'])
    for (const cells of table.values()) expect(cells[5]).toMatch(/^\d+$/) // probe latency
    expect(r.stdout).toContain('✓ all 3 nodes up')
    expect(r.all).not.toContain(PG_SECRET)
  })

  it('--json: a parseable, stable document', async () => {
    const r = await run(['status', file, '--json'], { env })
    expect(r.code).toBe(0)
    const report = JSON.parse(r.stdout) as StatusReport
    expect(report).toMatchObject({
      version: 1,
      config: 'pg.yaml',
      dialect: 'postgres',
      ok: true,
      errors: [],
      warnings: [],
      clusters: [{ name: 'default', primary: 'primary', primaryOk: true, fallingBack: false }],
    })
    expect(Date.parse(report.checkedAt)).not.toBeNaN()
    expect(
      report.nodes.map((n) => [n.name, n.expectedRole, n.actualRole, n.state, n.trusted, n.usable]),
    ).toEqual([
      ['primary', 'primary', 'primary', 'up', true, true],
      ['replica1', 'replica', 'replica', 'up', true, true],
      ['replica2', 'replica', 'replica', 'up', true, true],
    ])
    for (const n of report.nodes) {
      expect(Object.keys(n)).toEqual([
        'cluster',
        'name',
        'url',
        'expectedRole',
        'actualRole',
        'state',
        'trusted',
        'usable',
        'unusableReason',
        'latencyMs',
        'lagMs',
        'error',
      ])
      expect(n.url).toContain(':***@')
      expect(typeof n.latencyMs).toBe('number')
    }
    expect(r.all).not.toContain(PG_SECRET)
  })

  it('colours on a TTY, none with NO_COLOR', async () => {
    const tty = await run(['status', file], { env, isTTY: true })
    expect(tty.code).toBe(0)
    expect(tty.stdout).toContain(`${ESC}32mup${ESC}39m`)
    const noColor = await run(['status', file], { env: { ...env, NO_COLOR: '1' }, isTTY: true })
    expect(noColor.stdout).not.toContain(ESC)
  })

  it('a password the server rejects is never printed', async () => {
    const bad = (url: string) => url.replace(`:${PG_SECRET}@`, `:${WRONG}@`)
    writeFileSync(
      join(dir, 'wrong.yaml'),
      [
        'driver: pg',
        `primary: ${cluster.primary.url}`,
        `replicas: ["${cluster.replicas[0]!.url}", "${bad(cluster.replicas[1]!.url)}"]`,
      ].join('\n'),
    )
    const r = await run(['status', 'wrong.yaml'])
    expect(r.code).toBe(0)
    expect(rows(r.stdout).get('replica2')?.slice(3, 5)).toEqual(['unknown', 'down'])
    expect(r.stdout).toMatch(/password authentication failed/)
    const json = await run(['status', 'wrong.yaml', '--json'])
    expect((JSON.parse(json.stdout) as StatusReport).warnings[0]).toMatch(
      /^replica "replica2" is down: .*password/,
    )
    // The primary with the wrong password: exit 1, still no password.
    writeFileSync(join(dir, 'wrong-primary.yaml'), `driver: pg\nprimary: \${URL}\n`)
    const p = await run(['status', 'wrong-primary.yaml'], { env: { URL: bad(cluster.primary.url) } })
    expect(p.code).toBe(1)
    expect(p.stdout).toMatch(/✗ primary "primary" is down: .*password authentication failed/)
    const check = await run(['check', 'wrong.yaml'])
    expect(check.code).toBe(0)
    for (const out of [r, json, p, check]) {
      expect(out.all).not.toContain(WRONG)
      expect(out.all).not.toContain(PG_SECRET)
    }
  })

  it('the built executable (dist/cli/main.js) runs status', () => {
    const main = resolve(__dirname, '../../dist/cli/main.js')
    if (!existsSync(main)) {
      throw new Error(
        `${main} is missing: wire the CLI entry into tsup.config.ts and build (npx tsup) before this test`,
      )
    }
    const r = spawnSync(process.execPath, [main, 'status', file], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', DB_PASSWORD: PG_SECRET },
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).toContain('✓ all 3 nodes up')
    expect(r.stdout).not.toContain(ESC)
    const version = spawnSync(process.execPath, [main, '--version'], { encoding: 'utf8' })
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/)
  })

  it('a replica killed: shown down, exit 0 with a warning', async () => {
    await cluster.kill('replica2')
    const r = await run(['status', file], { env })
    expect(r.code).toBe(0)
    const table = rows(r.stdout)
    expect(table.get('replica2')?.slice(2, 5)).toEqual(['replica', 'unknown', 'down'])
    expect(table.get('replica1')?.[4]).toBe('up')
    expect(r.stdout).toContain('! replica "replica2" is down: ')
    expect(r.stdout).toContain('✓ every primary is up (2 of 3 nodes up, 1 warning)')
    expect(r.all).not.toContain(PG_SECRET)
  })

  it('the primary killed: exit 1', async () => {
    await cluster.kill('primary')
    const r = await run(['status', file], { env })
    expect(r.code).toBe(1)
    expect(rows(r.stdout).get('primary')?.slice(2, 5)).toEqual(['primary', 'unknown', 'down'])
    expect(r.stdout).toContain('✗ primary "primary" is down: ')
    const json = JSON.parse((await run(['status', file, '--json'], { env })).stdout) as StatusReport
    expect(json.ok).toBe(false)
    expect(json.clusters[0]?.primaryOk).toBe(false)
    expect(r.all).not.toContain(PG_SECRET)
  })
})

describe('routemate status (mariadb)', () => {
  let cluster: MariaDbCluster

  beforeAll(async () => {
    cluster = await startMariaDbCluster({ replicas: 1 })
  })

  afterAll(async () => {
    await cluster?.stop()
  })

  it('all up: exit 0, roles reported, no password', async () => {
    const secret = decodeURIComponent(new URL(cluster.primary.url).password)
    const file = config(
      'maria.yaml',
      'mysql2',
      cluster.primary.url,
      cluster.replicas.map((r) => r.url),
      secret,
    )
    const r = await run(['status', file], { env: { DB_PASSWORD: secret } })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout.split('\n')[0]).toBe('maria.yaml: 1 cluster, 2 nodes (mysql)')
    const table = rows(r.stdout)
    expect(table.get('primary')?.slice(2, 5)).toEqual(['primary', 'primary', 'up'])
    expect(table.get('replica1')?.slice(2, 5)).toEqual(['replica', 'replica', 'up'])
    expect(r.all).not.toContain(secret)
  })
})

describe('routemate check (built executable)', () => {
  it('prints every error of a hostile file with its line, redacted, and exits 1', () => {
    const main = resolve(__dirname, '../../dist/cli/main.js')
    const bomb = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for (const [name, prev] of ['ba', 'cb', 'dc', 'ed', 'fe', 'gf']) {
      bomb.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`)
    }
    writeFileSync(
      join(dir, 'hostile.yaml'),
      [
        'driver: pg',
        `primary: &h { url: "postgres://app:${WRONG}@db1/app", <<: *h }`,
        'replicas:',
        '  - postgres://app:${DB_PASSWORD}@db2/app',
        ...bomb,
      ].join('\n'),
    )
    writeFileSync(
      join(dir, 'invalid.yaml'),
      [
        'driver: pg',
        `primary: mysql://app:${WRONG}@db1/app`,
        'replicas:',
        '  - postgres://app:${DB_PASSWORD}@db2/app',
        '  - { url: "postgres://app@db3/app", weight: -1 }',
        'maxReplicationLagMs: soon',
      ].join('\n'),
    )
    const check = (file: string) =>
      spawnSync(process.execPath, [main, 'check', file], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '' },
        encoding: 'utf8',
        timeout: 30_000,
      })
    const hostile = check('hostile.yaml')
    expect(hostile.status).toBe(1)
    expect(hostile.stdout).toBe('')
    expect(hostile.stderr.split('\n')).toEqual([
      '✗ hostile.yaml:2:65 alias *h is inside the node &h it refers to: a cycle',
      '✗ hostile.yaml:4:20 replicas[0]: environment variable DB_PASSWORD is not set (use ${DB_PASSWORD:-default} for a default)',
      '✗ hostile.yaml:10:8 alias *e takes the file past 100000 values once aliases are expanded (an alias bomb?)',
      'hostile.yaml: 3 errors',
      '',
    ])
    const invalid = check('invalid.yaml')
    expect(invalid.status).toBe(1)
    expect(invalid.stderr.split('\n')).toEqual([
      '✗ invalid.yaml:2:10 primary: expected a postgres:// URL (or postgresql://), got "mysql://app:***@db1/app" (the driver speaks postgres, not mysql)',
      '✗ invalid.yaml:4:20 replicas[0]: environment variable DB_PASSWORD is not set (use ${DB_PASSWORD:-default} for a default)',
      '✗ invalid.yaml:5:46 replicas[1].weight: expected a number >= 0, got -1',
      '✗ invalid.yaml:6:22 maxReplicationLagMs: expected a number >= 0, got "soon"',
      'invalid.yaml: 4 errors',
      '',
    ])
    for (const r of [hostile, invalid]) expect(`${r.stdout}${r.stderr}`).not.toContain(WRONG)
  })
})
