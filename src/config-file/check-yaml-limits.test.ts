import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import * as yaml from 'yaml'
import { RoutemateError } from '../errors/routemate-error.js'
import { CONFIG_FILE_LIMITS, ConfigFileError, loadConfig, loadConfigFile } from './index.js'

const root = mkdtempSync(join(tmpdir(), 'routemate-limits-'))
let n = 0
afterAll(() => rmSync(root, { recursive: true, force: true }))
afterEach(() => {
  vi.restoreAllMocks()
})

const HEAD = 'driver: pg\nprimary: postgres://app@db1/app\n'

/** A fresh directory holding `routemate.config.<ext>` with the given text. */
function dirWith(text: string, ext = 'yaml'): string {
  const dir = join(root, String(n++))
  mkdirSync(dir)
  writeFileSync(join(dir, `routemate.config.${ext}`), text)
  return dir
}

async function failure(cwd: string): Promise<ConfigFileError> {
  const err = await loadConfig(undefined, { env: {}, cwd }).then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!(err instanceof ConfigFileError)) throw new Error(`expected a ConfigFileError, got ${String(err)}`)
  expect(err).toBeInstanceOf(RoutemateError)
  expect(err.code).toBe('ROUTEMATE_CONFIG')
  return err
}

/** A billion-laughs file: each level lists the previous one nine times (9^7 values once expanded). */
function aliasBomb(): string {
  const lines = [HEAD.trimEnd(), 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
  for (const [name, prev] of [
    ['b', 'a'],
    ['c', 'b'],
    ['d', 'c'],
    ['e', 'd'],
    ['f', 'e'],
    ['g', 'f'],
  ]) {
    lines.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`)
  }
  return `${lines.join('\n')}\n`
}

describe('config files under attack', () => {
  it('an alias bomb fails at the alias that crosses the limit, before any data is built', async () => {
    const toJS = vi.spyOn(yaml.Document.prototype, 'toJS')
    const err = await failure(dirWith(aliasBomb()))
    expect(err.message).toBe(
      'routemate.config.yaml:8:8 alias *e takes the file past 100000 values once aliases are expanded (an alias bomb?)',
    )
    expect([err.line, err.column, err.errors.length]).toEqual([8, 8, 1])
    expect(err.cause).toBeUndefined()
    expect(toJS).not.toHaveBeenCalled()
  })

  it('a self-referencing merge key is a located cycle, not a stack overflow', async () => {
    const err = await failure(dirWith('driver: pg\nprimary: &h\n  url: postgres://app@db1/app\n  <<: *h\n'))
    expect(err.message).toBe('routemate.config.yaml:4:7 alias *h is inside the node &h it refers to: a cycle')
  })

  it('a self-referencing alias (no merge key) and an alias without an anchor are reported together', async () => {
    const err = await failure(dirWith(`${HEAD}pool: &p\n  max: 4\n  again: *p\nreplicas: [*nope]\n`))
    expect(err.errors.map((p) => p.message)).toEqual([
      'routemate.config.yaml:5:10 alias *p is inside the node &p it refers to: a cycle',
      'routemate.config.yaml:6:12 alias *nope has no anchor &nope before it',
    ])
    expect(err.message).toBe(
      [
        'routemate.config.yaml: 2 errors',
        '  routemate.config.yaml:5:10 alias *p is inside the node &p it refers to: a cycle',
        '  routemate.config.yaml:6:12 alias *nope has no anchor &nope before it',
      ].join('\n'),
    )
  })

  it('a merge key of a scalar is located', async () => {
    const err = await failure(dirWith(`${HEAD}replicas:\n  - { <<: 5, url: "postgres://app@db3/app" }\n`))
    expect(err.message).toBe(
      'routemate.config.yaml:4:11 a merge key (<<) takes a mapping, an alias of one, or a list of those',
    )
  })

  it('merge keys work, and an anchor may be used more than 100 times', async () => {
    const replicas = Array.from({ length: 150 }, (_, i) => `  - { <<: *r, url: "postgres://app@r${i}/app" }`)
    const good = `driver: pg\nprimary: &r { url: "postgres://app@db1/app", weight: 3, pool: { max: 2 } }\nreplicas:\n${replicas.join('\n')}\n`
    const loaded = await loadConfigFile(undefined, { env: {}, cwd: dirWith(good) })
    expect(loaded.resolved.clusters[0]?.replicas).toHaveLength(150)
    expect(loaded.resolved.clusters[0]?.replicas[149]).toMatchObject({
      url: 'postgres://app@r149/app',
      weight: 3,
      pool: { max: 2 },
    })
  })

  it('flow nesting deeper than the limit is refused from the tokens, before parsing', async () => {
    const parse = vi.spyOn(yaml.Parser.prototype, 'parse')
    const depth = 400_000
    const err = await failure(dirWith(`${HEAD}x: ${'['.repeat(depth)}${']'.repeat(depth)}\n`))
    expect(err.message).toBe('routemate.config.yaml:3:68 nested deeper than 64 levels')
    expect(parse).not.toHaveBeenCalled()
  })

  it('block nesting deeper than the limit is located at the first level too deep', async () => {
    const lines = Array.from({ length: 70 }, (_, i) => `${' '.repeat(i)}k${i}:`)
    const err = await failure(dirWith(`${HEAD}${lines.join('\n')} 1\n`))
    expect(err.message).toBe('routemate.config.yaml:67:65 nested deeper than 64 levels')
  })

  it('nesting made deep by aliases is refused at the alias', async () => {
    const level = (inner: string) => `${'['.repeat(20)}${inner}${']'.repeat(20)}`
    const text = `${HEAD}a0: &a0 ${level('1')}\na1: &a1 ${level('*a0')}\na2: &a2 ${level('*a1')}\na3: &a3 ${level('*a2')}\n`
    const err = await failure(dirWith(text))
    expect(err.message).toBe('routemate.config.yaml:6:29 alias *a2 nests values deeper than 64 levels')
  })

  it('more values than the limit are refused from the tokens, before parsing', async () => {
    const parse = vi.spyOn(yaml.Parser.prototype, 'parse')
    const count = CONFIG_FILE_LIMITS.maxExpandedValues + 10
    const err = await failure(dirWith(`${HEAD}x: [${Array(count).fill('1').join(',')}]\n`))
    expect(err.message).toMatch(/^routemate\.config\.yaml:3:\d+ the file has more than 100000 values$/)
    expect(parse).not.toHaveBeenCalled()
  })

  it('a file over 1 MiB is refused unread, with its size', async () => {
    const text = `${HEAD}${'# padding\n'.repeat(120_000)}`
    expect(text.length).toBeGreaterThan(CONFIG_FILE_LIMITS.maxBytes)
    const err = await failure(dirWith(text))
    expect(err.message).toBe('routemate.config.yaml: the file is 1.1 MiB; a config file may be at most 1 MiB')
  })

  it('a file of exactly 1 MiB is read', async () => {
    const text = `${HEAD}#`.padEnd(CONFIG_FILE_LIMITS.maxBytes - 1, '#').concat('\n')
    expect(Buffer.byteLength(text)).toBe(CONFIG_FILE_LIMITS.maxBytes)
    expect((await loadConfig(undefined, { env: {}, cwd: dirWith(text) })).primary).toBe(
      'postgres://app@db1/app',
    )
  })

  it('a file one byte over 1 MiB is "larger than 1 MiB", not "1.0 MiB"', async () => {
    const text = `${HEAD}#`.padEnd(CONFIG_FILE_LIMITS.maxBytes, '#').concat('\n')
    const err = await failure(dirWith(text))
    expect(err.message).toBe(
      'routemate.config.yaml: the file is larger than 1 MiB; a config file may be at most 1 MiB',
    )
  })

  it('an endless file (a link to /dev/zero) is read only up to the limit', async () => {
    const dir = join(root, String(n++))
    mkdirSync(dir)
    symlinkSync('/dev/zero', join(dir, 'routemate.config.yaml'))
    const err = await failure(dir)
    expect(err.message).toBe(
      'routemate.config.yaml: the file is larger than 1 MiB; a config file may be at most 1 MiB',
    )
  })

  it('a JSON file is held to the same limits', async () => {
    const err = await failure(dirWith(`{"driver": "pg", "x": ${'['.repeat(100)}${']'.repeat(100)}}`, 'json'))
    // the `{` is the first level
    expect(err.message).toBe('routemate.config.json:1:86 nested deeper than 64 levels')
  })

  it('an unexpected parser exception becomes a ConfigFileError with the cause kept', async () => {
    const boom = new RangeError('Maximum call stack size exceeded')
    vi.spyOn(yaml.Document.prototype, 'toJS').mockImplementation(() => {
      throw boom
    })
    const err = await failure(dirWith(HEAD))
    expect(err.message).toBe(
      'routemate.config.yaml: cannot turn the YAML into data: Maximum call stack size exceeded',
    )
    expect(err.cause).toBe(boom)
  })

  it('an unknown tag is an error, not silently a string', async () => {
    const err = await failure(dirWith(`${HEAD}maxReplicationLagMs: !env LAG\n`))
    expect(err.message).toMatch(/^routemate\.config\.yaml:3:22 YAML error: Unresolved tag: !env/)
  })
})
