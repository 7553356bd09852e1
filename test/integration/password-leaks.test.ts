/**
 * No fragment of a password, anywhere: for each tricky password (URL-reserved characters written
 * unencoded, spaces, tabs, unicode, percent signs, 1–2 characters), on both dialects, every
 * surface a password could reach — ConfigError (including the duplicate-server check),
 * ConfigFileError, runtime errors (message, stack, cause, JSON, inspect), events, logger output,
 * stats(), the CLI (`check`, `status` text and `--json`, in-process and the built executable),
 * Prometheus text and OpenTelemetry attributes, multi-host URLs (`url`: ConfigError, config files,
 * the CLI given a URL, stats, events and errors of its discovered nodes) — is compared with the same scenario run with the
 * password's control (same structure, other letters): a fragment of length >= 2 of the password
 * found more often than in the control is a leak. Real servers: the primary's port with a wrong
 * password (authentication fails), and a closed port (connection refused).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { inspect } from 'node:util'
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/run-cli.js'
import { loadConfigFile } from '../../src/config-file/index.js'
import { ConfigError, createRouter, type Router, type RouterOptions } from '../../src/index.js'
import { attachLogger, type Logger } from '../../src/logging/index.js'
import type { RouterEventName } from '../../src/router/events.js'
import { instrumentRouter } from '../../src/telemetry/opentelemetry.js'
import { ManualReader } from '../../src/telemetry/otel-test-kit.js'
import { prometheusMetrics } from '../../src/telemetry/prometheus.js'
import { freePorts } from '../../src/testing/process-control/ports.js'

const freePort = async (): Promise<number> => (await freePorts(1))[0] as number

import { controlOf, leaks, TRICKY_PASSWORDS, writtenForms } from '../../src/util/tricky-passwords.case.js'
import { type DialectCase, dialects, type TestCluster, waitFor } from './support/dialects.js'

const EVENTS: readonly RouterEventName[] = [
  'node:up',
  'node:suspect',
  'node:down',
  'node:role-mismatch',
  'node:role-ok',
  'node:lagging',
  'node:caught-up',
  'fallback',
  'fallback:end',
  'primary:changed',
  'node:added',
  'node:drained',
  'node:removed',
  'retry',
  'error',
]

const MAIN = resolve(__dirname, '../../dist/cli/main.js')
const dir = mkdtempSync(join(tmpdir(), 'routemate-leaks-it-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Figures for the report: surfaces checked and leaks found, per dialect. */
const figures: Array<{ dialect: string; password: string; surfaces: number; leaking: string[] }> = []
afterAll(() => {
  const checks = figures.reduce((n, f) => n + f.surfaces, 0)
  const leaking = figures.reduce((n, f) => n + f.leaking.length, 0)
  console.log(
    `password leaks: ${figures.length} password runs, ${checks} password x surface checks, ${leaking} leaking`,
  )
})

/**
 * Everything a caller can see of an error: text, stack, JSON, `inspect` with hidden properties and
 * causes. Stack frames (code locations, which differ between the runs compared) are left out.
 */
function errorText(err: unknown): string {
  if (err === undefined) return '(no error)'
  const text = [
    String(err),
    (err as Error)?.stack,
    JSON.stringify(err),
    inspect(err, { depth: 10, showHidden: true }),
  ].join('\n')
  return text
    .split('\n')
    .filter((line) => !/^\s*'?\s*at .*:\d+:\d+\)?/.test(line))
    .join('\n')
}

/** Marks a text whose lines vary from run to run: compared by presence of fragments, not counts. */
const VARIES = '(varies)\n'

/** Runtime texts vary in timings and counts: digits made 0, lines deduplicated and sorted, marked. */
function settled(text: string): string {
  return VARIES + [...new Set(text.replace(/\d+/g, '0').split('\n'))].sort().join('\n')
}

async function cli(argv: string[]): Promise<string> {
  let out = ''
  const code = await runCli(argv, {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (out += s) },
    isTTY: false,
    env: {},
    cwd: dir,
  })
  return `exit ${code}\n${out}`
}

function builtCli(argv: string[]): string {
  const r = spawnSync(process.execPath, [MAIN, ...argv], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '' },
    encoding: 'utf8',
    timeout: 60_000,
  })
  return `exit ${r.status}\n${r.stdout}${r.stderr}`
}

function capture(): { logger: Logger; lines: string[] } {
  const lines: string[] = []
  const fn =
    (level: string) =>
    (a: unknown, b?: unknown): void => {
      lines.push(JSON.stringify({ level, a, b }))
    }
  return { logger: { debug: fn('debug'), info: fn('info'), warn: fn('warn'), error: fn('error') }, lines }
}

function listenAll(router: Router): string[] {
  const seen: string[] = []
  for (const name of EVENTS) {
    router.on(name, (e: unknown) =>
      seen.push(`${name} ${JSON.stringify(e)} ${inspect(e, { depth: 10, showHidden: true })}`),
    )
  }
  return seen
}

function createOrError(options: RouterOptions): { router?: Router; error?: unknown } {
  try {
    return { router: createRouter(options) }
  } catch (error) {
    return { error }
  }
}

/** Where the URLs point: the real primary (wrong password) and a closed port. */
interface Target {
  readonly scheme: string
  readonly user: string
  readonly host: string
  readonly port: number
  readonly deadPort: number
  readonly db: string
  readonly driverName: 'pg' | 'mysql2'
}

/** All surfaces of one password (or its control), by surface name. */
async function surfaces(d: DialectCase, t: Target, password: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  const url = (form: string, port: number, db = t.db) =>
    `${t.scheme}//${t.user}:${form}@${t.host}:${port}/${db}`
  const raw = url(password, t.port)
  const encoded = url(encodeURIComponent(password), t.port)
  // The password as typed, if the router takes it that way; else percent-encoded.
  const rawTaken = createOrError({ driver: d.driver(), primary: raw, healthCheck: false })
  await rawTaken.router?.close()
  const form = rawTaken.router !== undefined ? password : encodeURIComponent(password)
  out.accepted = rawTaken.router !== undefined ? 'as typed' : 'percent-encoded'

  // ConfigError: as typed; two nodes as typed on other ports; the same server twice (encoded).
  out['ConfigError, as typed'] = errorText(rawTaken.error)
  const two = createOrError({
    driver: d.driver(),
    primary: raw,
    replicas: [url(password, t.deadPort)],
    healthCheck: false,
  })
  await two.router?.close()
  out['ConfigError, two nodes as typed'] = errorText(two.error)
  const dup = createOrError({ driver: d.driver(), primary: encoded, replicas: [encoded] })
  await dup.router?.close()
  out['ConfigError, same server twice'] = errorText(dup.error)
  expect(dup.error).toBeInstanceOf(ConfigError)
  expect((dup.error as ConfigError).message).toMatch(/^replicas\[0\]: same server as primary /)
  const badPort = createOrError({
    driver: d.driver(),
    primary: `${t.scheme}//${t.user}:${form}@${t.host}:5x/db`,
  })
  out['ConfigError, bad port'] = errorText(badPort.error)
  expect((badPort.error as ConfigError).message).toContain('bad port "5x"')

  // Multi-host URLs (`url`): as typed; a host twice; a bad port in host 2; beside primary; a bad
  // target_session_attrs; per-host credentials.
  const multi = (pw: string, hosts: string, query = '') =>
    `${t.scheme}//${t.user}:${pw}@${hosts}/${t.db}${query}`
  const hosts = `${t.host}:${t.port},${t.host}:${t.deadPort}`
  const multiUrls: Record<string, string> = {
    'as typed': multi(password, hosts),
    'a host twice': multi(form, `${t.host}:${t.port},${t.host}:${t.port}`),
    'a bad port in host 2': multi(form, `${t.host}:${t.port},${t.host}:5x`),
    'a bad target_session_attrs': multi(form, hosts, '?target_session_attrs=rw'),
    'per-host credentials': multi(form, `${t.host}:${t.port},${t.user}:${form}@${t.host}:${t.deadPort}`),
  }
  for (const [what, u] of Object.entries(multiUrls)) {
    const made = createOrError({ driver: d.driver(), url: u })
    await made.router?.close()
    if (what !== 'as typed') expect(made.error).toBeInstanceOf(ConfigError)
    out[`ConfigError, multi-host url, ${what}`] = errorText(made.error)
  }
  const beside = createOrError({ driver: d.driver(), url: multi(form, hosts), primary: url(form, t.port) })
  expect(beside.error).toBeInstanceOf(ConfigError)
  out['ConfigError, multi-host url beside primary'] = errorText(beside.error)

  // Config files: the URL as typed; the same server twice; an unknown option; a YAML syntax error.
  const files: Record<string, string> = {
    'as typed': `primary: ${JSON.stringify(raw)}\nreplicas: [${JSON.stringify(url(password, t.deadPort))}]\n`,
    'same server twice': `primary: ${JSON.stringify(encoded)}\nreplicas:\n  - ${JSON.stringify(encoded)}\n`,
    'an unknown option': `primary: ${JSON.stringify(url(form, t.port))}\nreplicas:\n  - url: ${JSON.stringify(url(form, t.deadPort))}\n    wieght: 2\n`,
    'a syntax error': `primary: ${JSON.stringify(url(form, t.port))}\nreplicas:\n  - ${JSON.stringify(url(form, t.deadPort))}\n - oops\n`,
    'a multi-host url as typed': `url: ${JSON.stringify(multi(password, hosts))}\n`,
    'a multi-host url, a host twice': `url: ${JSON.stringify(multiUrls['a host twice'])}\n`,
  }
  for (const [what, body] of Object.entries(files)) {
    const file = `bad-${what.replace(/ /g, '-')}.yaml`
    writeFileSync(join(dir, file), `driver: ${t.driverName}\n${body}`)
    const loaded = await loadConfigFile(file, { env: {}, cwd: dir }).then(
      () => undefined,
      (err: unknown) => err,
    )
    if (!what.endsWith('as typed')) expect(loaded).toBeInstanceOf(ConfigError)
    out[`ConfigFileError, ${what}`] = errorText(loaded)
    out[`CLI check, ${what}`] = await cli(['check', file])
    out[`CLI status, ${what}`] = settled(await cli(['status', file]))
    out[`CLI status --json, ${what}`] = settled(await cli(['status', file, '--json']))
  }

  // The CLI given a multi-host URL instead of a file: as typed, and a host twice.
  for (const [what, u] of [
    ['as typed', multi(password, hosts)],
    ['a host twice', multiUrls['a host twice'] as string],
  ]) {
    out[`CLI check, multi-host url ${what}`] = await cli(['check', u as string])
    out[`CLI status, multi-host url ${what}`] = settled(await cli(['status', u as string]))
    out[`CLI status --json, multi-host url ${what}`] = settled(await cli(['status', u as string, '--json']))
  }

  // Runtime, health checks on: both nodes go down (authentication fails; connection refused).
  const { logger, lines } = capture()
  const reader = new ManualReader()
  const probed = createRouter({
    driver: d.driver(),
    primary: { name: 'primary', url: url(form, t.port) },
    replicas: [{ name: 'replica1', url: url(form, t.deadPort) }],
    healthCheck: { intervalMs: 3000, timeoutMs: 2500, failureThreshold: 1, maxBackoffMs: 6000 },
    connectTimeoutMs: 10_000,
  })
  // The same two servers as one multi-host URL (roles discovered): its nodes go down alike.
  const probedUrl = createRouter({
    driver: d.driver(),
    url: multi(form, hosts, '?target_session_attrs=read-only'),
    healthCheck: { intervalMs: 3000, timeoutMs: 2500, failureThreshold: 1, maxBackoffMs: 6000 },
    connectTimeoutMs: 10_000,
  })
  const events = listenAll(probed)
  const urlEvents = listenAll(probedUrl)
  attachLogger(probedUrl, logger, { level: 'debug' })
  attachLogger(probed, logger, { level: 'debug' })
  const uninstall = instrumentRouter(probed, { meterProvider: new MeterProvider({ readers: [reader] }) })
  const prom = prometheusMetrics(probed)
  try {
    await Promise.all([probed.ready(), probedUrl.ready()])
    await waitFor(
      () =>
        [probed, probedUrl].every((r) =>
          r.stats().nodes.every((n) => n.state === 'down' && n.lastError !== undefined),
        ),
      30_000,
      'both nodes down',
    )
    const urlErrors = await Promise.all([
      probedUrl.query('SELECT 1').then(
        () => undefined,
        (e: unknown) => e,
      ),
      probedUrl
        .pool<{ query(sql: string): Promise<unknown> }>()
        .query('SELECT 1')
        .then(
          () => undefined,
          (e: unknown) => e,
        ),
    ])
    for (const e of urlErrors) expect(e).toBeInstanceOf(Error)
    out['error, multi-host url write and pool read'] = urlErrors.map(errorText).join('\n')
    expect(probedUrl.stats().nodes.map((n) => n.name)).toEqual([
      `${t.host}:${t.port}`,
      `${t.host}:${t.deadPort}`,
    ])
    out['stats(), multi-host url'] = settled(JSON.stringify(probedUrl.stats(), null, 1))
    const write = await probed.query('SELECT 1').then(
      () => undefined,
      (e: unknown) => e,
    )
    const read = await probed
      .readOnly(() => probed.query('SELECT 1'))
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(write).toBeInstanceOf(Error)
    expect(read).toBeInstanceOf(Error)
    out['error, write (health checks)'] = errorText(write)
    out['error, read (health checks)'] = errorText(read)
    const stats = probed.stats()
    expect(stats.nodes.map((n) => n.url)).toEqual([
      expect.stringMatching(/^\w+:\/\/(app:)?\*\*\*@127\.0\.0\.1:\d+\/\w+$/),
      expect.stringMatching(/^\w+:\/\/(app:)?\*\*\*@127\.0\.0\.1:\d+\/\w+$/),
    ])
    out['stats()'] = settled(JSON.stringify(stats, null, 1))
    const prometheus = prom.collect()
    expect(prometheus).toContain('routemate_node_state{')
    out.Prometheus = settled(prometheus)
    const otel = JSON.stringify((await reader.collect()).resourceMetrics.scopeMetrics, null, 1)
    expect(otel).toContain('routemate.node')
    out.OpenTelemetry = settled(otel)
  } finally {
    uninstall()
    prom.uninstall()
    await Promise.all([probed.close(), probedUrl.close()])
  }

  // Runtime, no health checks: the statements reach the driver and fail there (read retried).
  const direct = createRouter({
    driver: d.driver(),
    primary: { name: 'primary', url: url(form, t.port) },
    replicas: [{ name: 'replica1', url: url(form, t.deadPort) }],
    healthCheck: false,
    connectTimeoutMs: 10_000,
  })
  const directEvents = listenAll(direct)
  attachLogger(direct, logger, { level: 'debug' })
  try {
    const write = await direct.query('SELECT 1').then(
      () => undefined,
      (e: unknown) => e,
    )
    const read = await direct
      .readOnly(() => direct.query('SELECT 1'))
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    const tx = await direct
      .transaction(async (q) => q.query('SELECT 1'))
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    for (const e of [write, read, tx]) expect(e).toBeInstanceOf(Error)
    out['error, write (driver)'] = errorText(write)
    out['error, read (driver)'] = errorText(read)
    out['error, transaction (driver)'] = errorText(tx)
    out['stats(), no health checks'] = settled(JSON.stringify(direct.stats(), null, 1))
  } finally {
    await direct.close()
  }
  expect(events.some((e) => e.startsWith('node:down '))).toBe(true)
  out.events = settled([...events, ...directEvents].join('\n'))
  out['events, multi-host url'] = settled(urlEvents.join('\n'))
  expect(lines.length).toBeGreaterThan(0)
  out['logger output'] = settled(lines.join('\n'))

  // The CLI on a valid file: text and --json (nodes down), in-process and the built executable.
  const file = 'runtime.yaml'
  writeFileSync(
    join(dir, file),
    [
      `driver: ${t.driverName}`,
      `primary: ${JSON.stringify(url(form, t.port))}`,
      `replicas: [${JSON.stringify(url(form, t.deadPort))}]`,
      'healthCheck: { intervalMs: 6000, timeoutMs: 5000 }',
      '',
    ].join('\n'),
  )
  out['CLI check'] = await cli(['check', file])
  expect(out['CLI check']).toMatch(/^exit 0\n/)
  const status = await cli(['status', file])
  expect(status).toMatch(/^exit 1\n/)
  out['CLI status'] = settled(status)
  const json = await cli(['status', file, '--json'])
  expect(JSON.parse(json.slice(json.indexOf('\n') + 1)).nodes).toHaveLength(2)
  out['CLI status --json'] = settled(json)
  if (d.name === 'postgres') {
    out['built CLI status --json'] = settled(builtCli(['status', file, '--json']))
    out['built CLI check, as typed'] = builtCli(['check', 'bad-as-typed.yaml'])
  }
  return out
}

for (const d of dialects) {
  describe(`no fragment of a password on any surface (${d.name})`, () => {
    let cluster: TestCluster
    let target: Target

    beforeAll(async () => {
      cluster = await d.start(0)
      const u = new URL(cluster.primary.url)
      target = {
        scheme: u.protocol,
        user: decodeURIComponent(u.username),
        host: '127.0.0.1',
        port: cluster.primary.port,
        deadPort: await freePort(),
        db: u.pathname.slice(1),
        driverName: d.name === 'postgres' ? 'pg' : 'mysql2',
      }
      expect(target.user).toBe('app')
    })

    afterAll(async () => {
      await cluster?.stop()
    })

    it.each(TRICKY_PASSWORDS.map((p) => [JSON.stringify(p), p]))('%s', async (_title, password) => {
      const mine = await surfaces(d, target, password)
      const control = await surfaces(d, target, controlOf(password))
      expect(Object.keys(mine)).toEqual(Object.keys(control))
      expect(mine.accepted).toBe(control.accepted)
      const found: string[] = []
      const names = Object.keys(mine).filter((k) => k !== 'accepted')
      for (const surface of names) {
        const varies = mine[surface]!.startsWith(VARIES)
        const bad = leaks(writtenForms(password), mine[surface]!, control[surface]!, varies)
        if (bad.length > 0) found.push(`${surface}: ${JSON.stringify(bad.slice(0, 5))}`)
        if (bad.length > 0 && process.env.LEAK_DUMP)
          writeFileSync(
            `${process.env.LEAK_DUMP}/${d.name}-${encodeURIComponent(password)}-${surface.replace(/\W+/g, '_')}.txt`,
            `${mine[surface]}\n=====CONTROL=====\n${control[surface]}`,
          )
      }
      figures.push({ dialect: d.name, password, surfaces: names.length, leaking: found })
      expect(found).toEqual([])
    })
  })
}
