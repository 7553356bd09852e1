// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts with ${ENV} references
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import { RoutemateError } from '../errors/routemate-error.js'
import { CONFIG_FILE_LIMITS, ConfigFileError, loadConfig } from './index.js'

const SECRET = 'Pa55-w0rd-xyz'
const root = mkdtempSync(join(tmpdir(), 'routemate-collect-'))
let n = 0
afterAll(() => rmSync(root, { recursive: true, force: true }))

async function errorsOf(
  lines: readonly string[],
  env: Record<string, string> = {},
  name = 'routemate.config.yaml',
): Promise<ConfigFileError> {
  const dir = join(root, String(n++))
  mkdirSync(dir)
  writeFileSync(join(dir, name), `${lines.join('\n')}\n`)
  const err = await loadConfig(undefined, { env, cwd: dir }).then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!(err instanceof ConfigFileError)) throw new Error(`expected a ConfigFileError, got ${String(err)}`)
  const everything = `${err.message}\n${err.stack}\n${JSON.stringify(err)}`
  expect(everything).not.toContain(SECRET)
  for (const value of Object.values(env)) expect(everything).not.toContain(value)
  return err
}

/** The located lines of an error, without the file name. */
function lines(err: ConfigFileError): string[] {
  return err.errors.map((p) => p.message.replace(/^routemate\.config\.(yaml|json):/, ''))
}

describe('loadConfig reports every error of a file, in file order', () => {
  it('validation errors all over the file, each with its line, path and reason', async () => {
    const err = await errorsOf([
      'driver: pg',
      `primary: postgres://app:${SECRET}@db1:5432/app`,
      'replicas:',
      `  - postgres://app:${SECRET}@db1:5432/app`,
      '  - url: postgres://app@db3/app',
      '    wieght: 2',
      `  - mysql://app:${SECRET}@db4/app`,
      'healthCheck: { intervalMs: "1000", timeoutMs: 2000 }',
      'maxReplicationLagMs: -5',
      'balancer: round_robin',
      'readYourWrites: { mode: positon }',
      'retryReads: yes',
    ])
    expect(lines(err)).toEqual([
      '4:5 replicas[0]: same server as primary (db1:5432/app); each node must be a distinct server',
      '6:5 replicas[1].wieght: unknown option "wieght" (did you mean "weight"?); expected one of: name, url, weight, pool, queryTimeoutMs, connectTimeoutMs',
      '7:5 replicas[2]: expected a postgres:// URL (or postgresql://), got "mysql://app:***@db4/app" (the driver speaks postgres, not mysql)',
      '8:28 healthCheck.intervalMs: expected an integer >= 2, got "1000"',
      '9:22 maxReplicationLagMs: expected a number >= 0, got -5',
      '10:11 balancer: expected one of "round-robin", "weighted-round-robin", "random", "least-outstanding", a Balancer object or a factory function, got "round_robin" (did you mean "round-robin"?)',
      '11:25 readYourWrites.mode: expected "window" or "position", got "positon" (did you mean "position"?)',
      '12:13 retryReads: expected true or false, got "yes"',
    ])
    // the timeout is not also reported against the default interval that replaced the bad one
    expect(err.message.split('\n')[0]).toBe('routemate.config.yaml: 8 errors')
    expect(err.message.split('\n')[1]).toBe(
      '  routemate.config.yaml:4:5 replicas[0]: same server as primary (db1:5432/app); each node must be a distinct server',
    )
    expect(err.errors[1]).toEqual({
      line: 6,
      column: 5,
      path: 'replicas[1].wieght',
      reason:
        'unknown option "wieght" (did you mean "weight"?); expected one of: name, url, weight, pool, queryTimeoutMs, connectTimeoutMs',
      message:
        'routemate.config.yaml:6:5 replicas[1].wieght: unknown option "wieght" (did you mean "weight"?); expected one of: name, url, weight, pool, queryTimeoutMs, connectTimeoutMs',
    })
    expect([err.line, err.column, err.path]).toEqual([4, 5, 'replicas[0]'])
    expect(err).toBeInstanceOf(ConfigError)
    expect(err).toBeInstanceOf(RoutemateError)
  })

  it('interpolation and validation errors together; a bad reference is not reported twice', async () => {
    const err = await errorsOf(
      [
        'driver: pg',
        'primary:',
        '  url: postgres://app:${DB_PASSWORD}@db1/app',
        'replicas:',
        '  - postgres://app:${DB_PASSWORD}@db2/${DB_NAME}',
        '  - postgres://app:${PW}@db3/app',
        '  - { url: "postgres://app@db4/app", weight: -1 }',
        'maxReplicationLagMs: ${MAX_LAG}',
        'queryTimeoutMs: soon',
      ],
      { PW: SECRET },
    )
    expect(lines(err)).toEqual([
      '3:23 primary.url: environment variable DB_PASSWORD is not set (use ${DB_PASSWORD:-default} for a default)',
      '5:20 replicas[0]: environment variable DB_PASSWORD is not set (use ${DB_PASSWORD:-default} for a default)',
      '5:39 replicas[0]: environment variable DB_NAME is not set (use ${DB_NAME:-default} for a default)',
      '7:46 replicas[2].weight: expected a number >= 0, got -1',
      '8:22 maxReplicationLagMs: environment variable MAX_LAG is not set (use ${MAX_LAG:-default} for a default)',
      '9:17 queryTimeoutMs: expected an integer >= 0, got "soon"',
    ])
  })

  it('YAML syntax errors and bad references together (no validation of a broken file)', async () => {
    const err = await errorsOf([
      'driver: pg',
      'primary: postgres://app:${DB_PASSWORD}@db1/app',
      'healthCheck:',
      '\tintervalMs: 5',
      'replicas:',
      '  - postgres://app@db2/app',
      ' - oops',
      'maxReplicationLagMs: -1',
    ])
    // one syntax error a line: the parser's next ones there follow from the first
    expect(lines(err)).toEqual([
      '2:25 primary: environment variable DB_PASSWORD is not set (use ${DB_PASSWORD:-default} for a default)',
      '4:1 YAML syntax error: Tabs are not allowed as indentation',
      '7:1 YAML syntax error: A block sequence may not be used as an implicit map key',
    ])
  })

  it('duplicate keys do not stop the checks', async () => {
    const err = await errorsOf([
      'driver: pg',
      'primary: postgres://app@db1/app',
      'retryReads: true',
      'retryReads: false',
      'fallbackToPrimary: nope',
    ])
    expect(lines(err)).toEqual([
      '4:1 duplicate key "retryReads"',
      '5:20 fallbackToPrimary: expected true or false, got "nope"',
    ])
  })

  it('a bad primary does not hide the errors after it; items keep the file indices', async () => {
    const err = await errorsOf([
      'driver: pg',
      'primary: mysql://app@db1/app',
      'replicas:',
      '  - not a url',
      '  - postgres://app@db2/app',
      '  - { url: "postgres://app@db3/app", name: "bad name" }',
      '  - { url: "postgres://app@db4/app", pool: 3 }',
      'healthCheck: { failureThreshold: 0 }',
    ])
    expect(lines(err)).toEqual([
      '2:10 primary: expected a postgres:// URL (or postgresql://), got "mysql://app@db1/app" (the driver speaks postgres, not mysql)',
      '4:5 replicas[0]: expected a postgres:// URL (or postgresql://), got "not a url"',
      '6:44 replicas[2].name: expected a name of 1 to 64 characters from [A-Za-z0-9_.:-], got "bad name"',
      '7:44 replicas[3].pool: expected a plain object of driver pool options, e.g. { max: 10 }, got 3',
      '8:34 healthCheck.failureThreshold: expected an integer >= 1, got 0',
    ])
  })

  it('a missing primary and errors of a sharded file', async () => {
    const err = await errorsOf([
      'driver: pg',
      'shards:',
      '  eu.1:',
      '    replicas: ["postgres://app@eu2/app"]',
      '  us:',
      '    primary: postgres://app@us1/app',
      '    maxReplicationLagMs: fast',
      'sharding: { strategy: jumps }',
      'healthCheck: { intervalMs: 1 }',
    ])
    expect(lines(err)).toEqual([
      '4:5 shards.eu.1.primary: required; expected a postgres:// URL (or postgresql://) or a node object { url, ... } (or "nodes" to discover roles)',
      '7:26 shards.us.maxReplicationLagMs: expected a number >= 0, got "fast"',
      '8:23 sharding.strategy: unknown strategy "jumps" (did you mean "jump"?); expected one of "hash", "jump", "range", "java-hashcode"',
      '9:28 healthCheck.intervalMs: expected an integer >= 2, got 1',
    ])
  })

  it('an unknown driver: the rest is checked for the driver it looks like', async () => {
    const err = await errorsOf([
      'driver: postgres',
      'primary: postgres://app@db1/app',
      'replicas: [postgres://app@db1/app]',
    ])
    expect(lines(err)).toEqual([
      '1:9 driver: unknown driver "postgres" (did you mean "pg"?); expected "pg" or "mysql2"',
      '3:12 replicas[0]: same server as primary (db1:5432/app); each node must be a distinct server',
    ])
    const none = await errorsOf(['primary: mysql://app@db1/app', 'maxReplicationLagMs: x'])
    expect(none.errors.map((p) => p.message)).toEqual([
      'routemate.config.yaml: driver: required; expected "pg" or "mysql2"',
      'routemate.config.yaml:2:22 maxReplicationLagMs: expected a number >= 0, got "x"',
    ])
  })

  it('JSON: a bad reference and validation errors together', async () => {
    const err = await errorsOf(
      [
        '{',
        '  "driver": "pg",',
        '  "primary": "postgres://app:${DB_PASSWORD}@db1/app",',
        '  "replicas": ["postgres://app@db2/app", 5],',
        '  "balancer": { "pick": 1 }',
        '}',
      ],
      {},
      'routemate.config.json',
    )
    expect(lines(err)).toEqual([
      '3:30 primary: environment variable DB_PASSWORD is not set (use ${DB_PASSWORD:-default} for a default)',
      '4:42 replicas[1]: expected a postgres:// URL (or postgresql://) or a node object { url, name?, weight?, pool?, ... }, got 5',
      '5:15 balancer: expected one of "round-robin", "weighted-round-robin", "random", "least-outstanding", got an object (a custom balancer cannot come from a config file; pass it to createRouter() in code)',
    ])
  })

  it(`stops at ${CONFIG_FILE_LIMITS.maxErrors} errors and says so`, async () => {
    const keys = Array.from({ length: 150 }, (_, i) => `unknown${i}: 1`)
    const err = await errorsOf(['driver: pg', 'primary: postgres://app@db1/app', ...keys])
    expect(err.errors).toHaveLength(CONFIG_FILE_LIMITS.maxErrors)
    expect(err.message.split('\n')[0]).toBe(
      'routemate.config.yaml: 100 errors (stopped there: more were not reported)',
    )
    expect(err.errors.at(-1)?.path).toBe('unknown99')
  })

  it('a password read from the environment never appears, whichever error shows it', async () => {
    const err = await errorsOf(
      [
        'driver: pg',
        'primary: postgres://app:${DB_PASSWORD}@db1/app',
        'replicas:',
        '  - { url: "postgres://app@db2/app", name: "${DB_PASSWORD}" }',
        '  - "${DB_PASSWORD}"',
        'pool: "${DB_PASSWORD}"',
      ],
      { DB_PASSWORD: `${SECRET} x` },
    )
    expect(lines(err)).toEqual([
      '4:44 replicas[0].name: expected a name of 1 to 64 characters from [A-Za-z0-9_.:-], got "***"',
      '5:5 replicas[1]: expected a postgres:// URL (or postgresql://), got "***"',
      '6:7 pool: expected a plain object of driver pool options, e.g. { max: 10 }, got "***"',
    ])
  })
})
