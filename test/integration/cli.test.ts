/**
 * The `routemate` CLI against real clusters: `status` in-process through `runCli` (all up, a
 * replica killed, the primary killed, --json, colours, passwords, the lag column's one meaning),
 * one `status` on MariaDB, one smoke test of the built executable `dist/cli/main.js`, its `check`
 * of hostile and invalid files (every error, with lines), `cluster` without a command (Ctrl-C)
 * and with failing SQL, and the README's CLI samples (`<!-- doctest: cli=NAME -->`) against real
 * output.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts with ${ENV} references
import { spawn, spawnSync } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/run-cli.js'
import type { StatusReport } from '../../src/cli/status-report.js'
import {
  type MariaDbCluster,
  type PgCluster,
  startMariaDbCluster,
  startPgCluster,
} from '../../src/testing/index.js'
import { waitFor } from './support/dialects.js'
import { readmeBlocks, readmeText } from './support/readme-blocks.js'
import { cliBlock, cliSample, normaliseStatus } from './support/readme-cli-samples.js'

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

async function run(
  argv: readonly string[],
  opts: { isTTY?: boolean; env?: Record<string, string>; cwd?: string } = {},
) {
  let stdout = ''
  let stderr = ''
  const code = await runCli(argv, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    isTTY: opts.isTTY ?? false,
    env: opts.env ?? {},
    cwd: opts.cwd ?? dir,
  })
  return { code, stdout, stderr, all: `${stdout}\n${stderr}` }
}

const MAIN = resolve(__dirname, '../../dist/cli/main.js')

/** A folder of `dir` holding `routemate.config.yaml` with `text`, for commands run without a file name. */
function folderWithConfig(name: string, text: string): string {
  const folder = join(dir, name)
  mkdirSync(folder, { recursive: true })
  writeFileSync(join(folder, 'routemate.config.yaml'), text)
  return folder
}

/** The README's YAML sample (the config-file section's first block). */
function readmeYaml(): string {
  const yaml = readmeBlocks().find((b) => b.lang === 'yaml')
  expect(yaml, 'a yaml block in the README').toBeDefined()
  return yaml!.code
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

  it('lag has one meaning: a number for every replica up (its primary up), "-" / null for the primary, on every run', async () => {
    for (let i = 0; i < 3; i++) {
      const table = rows((await run(['status', file], { env })).stdout)
      expect(table.get('primary')?.[6]).toBe('-')
      expect(table.get('replica1')?.[6]).toMatch(/^\d+$/)
      expect(table.get('replica2')?.[6]).toMatch(/^\d+$/)
      const json = JSON.parse((await run(['status', file, '--json'], { env })).stdout) as StatusReport
      expect(json.nodes.map((n) => typeof n.lagMs)).toEqual(['object', 'number', 'number'])
      expect(json.nodes[0]?.lagMs).toBeNull()
    }
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
    expect(table.get('replica2')?.[6], 'the lag of a replica down is unknown').toBe('-')
    expect(table.get('replica1')?.[6]).toMatch(/^\d+$/)
  })

  it('README: the status sample (cli=status) is the real output, ports, latencies and lags aside', async () => {
    const sample = cliSample('status')
    const cwd = folderWithConfig('readme-status', readFileSync(join(dir, file), 'utf8'))
    const r = await run(sample.argv, { env, cwd })
    expect(r.code).toBe(0)
    expect(normaliseStatus(r.stdout.replace(/\n$/, '').split('\n')), sample.where).toEqual(
      normaliseStatus(sample.output),
    )
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

describe('the README CLI samples (built executable)', () => {
  const check = (cwd: string, env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [MAIN, 'check'], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
      encoding: 'utf8',
      timeout: 30_000,
    })

  it('cli=commands: what `check` prints for the README config sample', () => {
    const { where, code } = cliBlock('commands')
    const said = /^npx routemate check +# (.*)$/m.exec(code)
    expect(said, `${where}: a "npx routemate check  # output" line`).not.toBeNull()
    const r = check(folderWithConfig('readme-ok', readmeYaml()), { DB_PASSWORD: 'x' })
    expect(r.status).toBe(0)
    expect(r.stdout, where).toBe(`${said![1]}\n`)
  })

  it("the README's example of a config-file error message is a real one", () => {
    const quoted = /`(routemate\.config\.yaml:\d+:\d+ [^`]*environment variable[^`]*)`/.exec(readmeText())
    expect(quoted, 'the README quotes an unset-variable message').not.toBeNull()
    const r = check(folderWithConfig('readme-unset', readmeYaml()))
    expect(r.status).toBe(1)
    const lines = r.stderr.split('\n').map((l) => l.replace(/^✗ /, ''))
    expect(
      lines.some((l) => l.startsWith(quoted![1]!)),
      `${quoted![1]} in\n${r.stderr}`,
    ).toBe(true)
  })

  it('cli=check-errors: every error of a bad file, exactly as the README shows them', () => {
    const sample = cliSample('check-errors')
    expect(sample.argv).toEqual(['check'])
    const cwd = folderWithConfig(
      'readme-errors',
      [
        'driver: pg',
        'primary: mysql://app:secret@db1/app',
        'replicas:',
        '  - postgres://app:${DB_PASSWORD}@db2/app',
        '  - postgres://app@db3/app',
        'maxReplicationLagMs: soon',
        '',
      ].join('\n'),
    )
    const r = check(cwd)
    expect(r.status).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr.replace(/\n$/, '').split('\n'), sample.where).toEqual(sample.output)
  })
})

describe('routemate cluster (built executable)', () => {
  it('without a command: prints the URLs, keeps the cluster until SIGINT, then stops it and deletes its data', async () => {
    const base = tmpBase()
    const child = spawn(
      process.execPath,
      [
        MAIN,
        'cluster',
        'pg',
        '--replicas',
        '0',
        '--sql',
        'CREATE TABLE t (id int); INSERT INTO t VALUES (7)',
      ],
      {
        cwd: dir,
        env: { ...process.env, TMPDIR: base },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s))
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s))
    const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)))
    try {
      await waitFor(() => stderr.includes('Ctrl-C') || child.exitCode !== null, 60_000, 'the cluster started')
      expect(stderr).toContain('Ctrl-C')
      const url = /^export DATABASE_URL='(postgres:\/\/[^']+)'$/m.exec(stdout)?.[1]
      expect(url, stdout).toBeDefined()
      expect(stdout).toMatch(/^export REPLICA_URLS=''$/m)
      expect(stderr).toContain('2 SQL statements run')
      const pg = (await import('pg')).default
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      expect((await client.query('SELECT id FROM t')).rows).toEqual([{ id: 7 }])
      await client.end()
      expect(readdirSync(base).length).toBeGreaterThan(0)
      child.kill('SIGINT')
      expect(await exited).toBe(0)
      expect(readdirSync(base)).toEqual([]) // the cluster's data is gone
    } finally {
      child.kill('SIGKILL')
      rmSync(base, { recursive: true, force: true })
    }
  })

  it('a failing statement: exit 1 naming it, the cluster stopped, the command never run', () => {
    const base = tmpBase()
    try {
      const r = spawnSync(
        process.execPath,
        [MAIN, 'cluster', '--replicas', '0', '--sql', 'SELEC 1', '--', 'node', '-e', 'console.log("ran")'],
        { cwd: dir, env: { ...process.env, TMPDIR: base }, encoding: 'utf8', timeout: 120_000 },
      )
      expect(r.status, r.stderr).toBe(1)
      expect(r.stderr).toContain('✗ --sql "SELEC 1": syntax error')
      expect(r.stdout).not.toContain('ran')
      expect(readdirSync(base)).toEqual([])
    } finally {
      rmSync(base, { recursive: true, force: true })
    }
  })
})

/** A fresh TMPDIR for a cluster's data dir, traversable by the servers' OS user. */
function tmpBase(): string {
  const base = mkdtempSync(join(tmpdir(), 'routemate-cluster-cmd-'))
  chmodSync(base, 0o755)
  return base
}

describe('routemate check: a bad port', () => {
  it('is named as a bad port, not as a wrong scheme (both drivers)', async () => {
    writeFileSync(join(dir, 'port.yaml'), 'driver: pg\nprimary: postgres://h:99999/db\n')
    writeFileSync(join(dir, 'port-my.yaml'), 'driver: mysql2\nprimary: mysql://app:pw@h:99999/db\n')
    expect((await run(['check', 'port.yaml'])).stderr).toBe(
      '✗ port.yaml:2:10 primary: bad port "99999" in "postgres://h:99999/db": expected a number from 0 to 65535\n',
    )
    expect((await run(['check', 'port-my.yaml'])).stderr).toBe(
      '✗ port-my.yaml:2:10 primary: bad port "99999" in "mysql://***@h:99999/db": expected a number from 0 to 65535\n',
    )
  })
})
