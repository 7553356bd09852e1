// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts with ${ENV} references
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from './run-cli.js'

const SECRET = 'Sup3r-s3cret'
const dir = mkdtempSync(join(tmpdir(), 'routemate-cli-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function file(name: string, text: string): string {
  writeFileSync(join(dir, name), text)
  return name
}

/** Runs the CLI in-process, capturing its output. */
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
  return { code, stdout, stderr }
}

const ESC = '\u001b['

describe('runCli', () => {
  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
    expect(await run(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' })
    expect((await run(['-v'])).stdout).toBe(`${version}\n`)
  })

  it('--help and <cmd> --help print help; no command is a usage error', async () => {
    const main = await run(['--help'])
    expect(main.code).toBe(0)
    expect(main.stdout).toContain('Usage: routemate <command> [options]')
    expect(main.stdout).toMatch(/\n {2}help \[command\] +show help/)
    expect(await run(['help'])).toEqual(main)
    for (const cmd of ['check', 'status', 'cluster', 'demo']) {
      const r = await run([cmd, '--help'])
      expect(r.code).toBe(0)
      expect(r.stdout).toContain(`Usage: routemate ${cmd}`)
      expect((await run(['help', cmd])).stdout).toBe(r.stdout)
    }
    // The default probe deadline is the config's: min(500, intervalMs / 2) when not set.
    expect((await run(['status', '--help'])).stdout).toContain(
      "file's healthCheck.timeoutMs, else 500 or half the file's\n                  healthCheck.intervalMs if that is smaller",
    )
    const none = await run([])
    expect(none).toEqual({
      code: 2,
      stdout: '',
      stderr: 'routemate: missing command\nRun "routemate --help" for usage.\n',
    })
  })

  it('usage errors exit 2 and point at the help', async () => {
    expect(await run(['stauts'])).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'routemate: unknown command "stauts" (did you mean "status"?); commands: check, status, cluster, demo\nRun "routemate --help" for usage.\n',
    })
    const badOption = await run(['status', '--jsn'])
    expect(badOption.code).toBe(2)
    expect(badOption.stderr).toBe(
      'routemate: Unknown option \'--jsn\'\nRun "routemate status --help" for usage.\n',
    )
    const two = await run(['check', 'a.yaml', 'b.yaml'])
    expect([two.code, two.stderr.split('\n')[0]]).toEqual([2, 'routemate: unexpected argument: b.yaml'])
    const timeout = await run(['status', '--timeout', 'soon'])
    expect([timeout.code, timeout.stderr.split('\n')[0]]).toEqual([
      2,
      'routemate: --timeout: expected whole milliseconds from 1 to 600000, got "soon"',
    ])
    expect((await run(['demo', '--seconds', '1'])).code).toBe(2)
    // cluster: nothing is started for a bad command line.
    const usage = async (argv: string[]) => (await run(argv)).stderr.split('\n')[0]
    expect(await usage(['cluster', 'mysql'])).toBe('routemate: expected pg or mariadb, got "mysql"')
    expect(await usage(['cluster', '--replicas', 'two'])).toBe(
      'routemate: --replicas: expected a whole number, got "two"',
    )
    expect(await usage(['cluster', 'pg', '--'])).toBe('routemate: expected a command after "--"')
    expect(await usage(['cluster', 'pg', 'mariadb'])).toBe('routemate: unexpected argument: mariadb')
    expect((await run(['cluster', '--sql'])).code).toBe(2)
  })

  it('check: a valid file', async () => {
    file(
      'sharded.yaml',
      [
        'driver: pg',
        'shards:',
        '  s0: { primary: "postgres://app:${PW}@h0/app", replicas: ["postgres://app:${PW}@h1/app", "postgres://app:${PW}@h2/app"] }',
        '  s1: { primary: "postgres://app:${PW}@h3/app", replicas: ["postgres://app:${PW}@h4/app", "postgres://app:${PW}@h5/app"] }',
        'sharding: { strategy: java-hashcode }',
      ].join('\n'),
    )
    expect(await run(['check', 'sharded.yaml'], { env: { PW: SECRET } })).toEqual({
      code: 0,
      stdout: '✓ sharded.yaml is valid: 2 shards, 6 nodes (postgres)\n',
      stderr: '',
    })
    file(
      'routemate.config.json',
      '{"driver": "mysql2", "primary": "mysql://app@h0/app", "replicas": ["mysql://app@h1/app"]}',
    )
    expect((await run(['check'])).stdout).toBe(
      '✓ routemate.config.json is valid: 1 primary, 1 replica (mysql)\n',
    )
  })

  it('check: an invalid file exits 1 with one redacted message', async () => {
    file(
      'bad.yaml',
      `driver: pg\nprimary: postgres://app:${SECRET}@h0/app\nreplicas: ["postgres://app:\${PW}@h0/app"]\n`,
    )
    const r = await run(['check', 'bad.yaml'], { env: { PW: SECRET } })
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr:
        '✗ bad.yaml:3:12 replicas[0]: same server as primary (h0:5432/app); each node must be a distinct server\n',
    })
  })

  it('check: every error of a file, one line each in file order, then a count', async () => {
    file(
      'many.yaml',
      [
        'driver: pg',
        `primary: postgres://app:${SECRET}@h0/app`,
        'replicas:',
        '  - postgres://app:${PW}@h1/app',
        '  - { url: "postgres://app@h2/app", wieght: 2 }',
        'healthCheck: { intervalMs: 1 }',
        'pool: &p { max: 1, again: *p }',
      ].join('\n'),
    )
    const r = await run(['check', 'many.yaml'])
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: [
        '✗ many.yaml:4:20 replicas[0]: environment variable PW is not set (use ${PW:-default} for a default)',
        '✗ many.yaml:7:27 alias *p is inside the node &p it refers to: a cycle',
        'many.yaml: 2 errors',
        '',
      ].join('\n'),
    })
    file('many.yaml', readFileSync(join(dir, 'many.yaml'), 'utf8').replace(', again: *p', ''))
    const r2 = await run(['check', 'many.yaml'], { isTTY: true })
    expect(r2.code).toBe(1)
    expect(r2.stderr.split('\n')).toEqual([
      `${ESC}31m✗${ESC}39m many.yaml:4:20 replicas[0]: environment variable PW is not set (use \${PW:-default} for a default)`,
      `${ESC}31m✗${ESC}39m many.yaml:5:37 replicas[1].wieght: unknown option "wieght" (did you mean "weight"?); expected one of: name, url, weight, pool, queryTimeoutMs, connectTimeoutMs`,
      `${ESC}31m✗${ESC}39m many.yaml:6:28 healthCheck.intervalMs: expected an integer >= 2, got 1`,
      'many.yaml: 3 errors',
      '',
    ])
    const json = await run(['status', 'many.yaml', '--json'])
    expect(json.code).toBe(1)
    const body = JSON.parse(json.stdout) as { ok: boolean; error: string; errors: string[] }
    expect(body.ok).toBe(false)
    expect(body.error.split('\n')[0]).toBe('many.yaml: 3 errors')
    expect(body.errors).toEqual([
      'many.yaml:4:20 replicas[0]: environment variable PW is not set (use ${PW:-default} for a default)',
      'many.yaml:5:37 replicas[1].wieght: unknown option "wieght" (did you mean "weight"?); expected one of: name, url, weight, pool, queryTimeoutMs, connectTimeoutMs',
      'many.yaml:6:28 healthCheck.intervalMs: expected an integer >= 2, got 1',
    ])
    for (const out of [r, r2, json]) expect(`${out.stdout}${out.stderr}`).not.toContain(SECRET)
  })

  it('colours only on a TTY without NO_COLOR; FORCE_COLOR forces them', async () => {
    file('ok.yaml', 'driver: pg\nprimary: postgres://app@h0/app\n')
    expect((await run(['check', 'ok.yaml'])).stdout).not.toContain(ESC)
    expect((await run(['check', 'ok.yaml'], { isTTY: true })).stdout).toBe(
      `${ESC}32m✓${ESC}39m ok.yaml is valid: 1 primary, 0 replicas (postgres)\n`,
    )
    expect((await run(['check', 'ok.yaml'], { isTTY: true, env: { NO_COLOR: '1' } })).stdout).not.toContain(
      ESC,
    )
    expect((await run(['check', 'ok.yaml'], { env: { FORCE_COLOR: '1' } })).stdout).toContain(ESC)
    expect((await run(['check', 'ok.yaml'], { isTTY: true, env: { FORCE_COLOR: '0' } })).stdout).toContain(
      ESC,
    )
  })

  it('status: an unreachable primary exits 1; --json is parseable; no password anywhere', async () => {
    file(
      'down.yaml',
      `driver: pg\nprimary: postgres://app:\${PW}@127.0.0.1:1/app\nhealthCheck: { intervalMs: 1000 }\n`,
    )
    const text = await run(['status', 'down.yaml', '--timeout', '300'], { env: { PW: SECRET } })
    expect(text.code).toBe(1)
    expect(text.stdout).toMatch(
      /^down\.yaml: 1 cluster, 1 node \(postgres\)\n\nSHARD +NODE +EXPECTED +ACTUAL +STATE/,
    )
    expect(text.stdout).toMatch(/\ndefault +primary +primary +unknown +down +\d+ +- +\S/)
    expect(text.stdout).toContain('✗ primary "primary" is down: ')
    const json = await run(['status', 'down.yaml', '--json', '--timeout', '300'], { env: { PW: SECRET } })
    expect(json.code).toBe(1)
    const report = JSON.parse(json.stdout)
    expect(report).toMatchObject({
      version: 1,
      config: 'down.yaml',
      dialect: 'postgres',
      ok: false,
      clusters: [
        { name: 'default', primary: 'primary', primaryOk: false, fallingBack: false, candidates: [] },
      ],
      nodes: [
        {
          cluster: 'default',
          name: 'primary',
          url: 'postgres://app:***@127.0.0.1:1/app',
          expectedRole: 'primary',
          actualRole: 'unknown',
          state: 'down',
          usable: false,
          unusableReason: 'down',
          lagMs: null,
        },
      ],
      warnings: [],
    })
    expect(report.errors).toHaveLength(1)
    for (const out of [text, json]) expect(`${out.stdout}${out.stderr}`).not.toContain(SECRET)
  })

  it('status --json on a bad file prints a JSON error', async () => {
    const r = await run(['status', 'missing.yaml', '--json'])
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stdout)).toEqual({
      version: 1,
      ok: false,
      error: 'config file not found: missing.yaml',
    })
  })
})
