import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import { controlOf, leaks, TRICKY_PASSWORDS, writtenForms } from '../util/tricky-passwords.case.js'
import { resolveConfig } from './config.js'
import { configDriver as fakeDriver } from './config-driver.test-kit.js'

const pg = fakeDriver('postgres')
const my = fakeDriver('mysql')

/** Everything a caller can see of an error: message, stack, JSON, and `inspect` with its causes. */
function seen(fn: () => unknown): string {
  try {
    fn()
  } catch (err) {
    // Frame locations (`file.ts:82:21`) are code positions, not data: left out, so a line number
    // that happens to match a fragment of an encoded password is not taken for a leak.
    return [
      String(err),
      (err as Error).stack,
      JSON.stringify(err),
      inspect(err, { depth: 10, showHidden: true }),
    ]
      .join('\n')
      .replace(/:\d+:\d+\)?$/gm, '')
  }
  return '(no error)'
}

const enc = encodeURIComponent

/** The config errors a password can reach, as a function of the password. */
const SURFACES: Record<string, (p: string) => string> = {
  'primary as typed': (p) =>
    seen(() => resolveConfig({ driver: pg, primary: `postgres://app:${p}@db1:5432/shop` })),
  'node object, mysql, as typed': (p) =>
    seen(() => resolveConfig({ driver: my, primary: { url: `mysql://app:${p}@db1:3306/shop` } })),
  'primary and replica as typed, other hosts': (p) =>
    seen(() =>
      resolveConfig({
        driver: pg,
        primary: `postgres://app:${p}@db1:5432/shop`,
        replicas: [`postgres://app:${p}@db2:5432/shop`],
      }),
    ),
  'same server twice (encoded)': (p) =>
    seen(() =>
      resolveConfig({
        driver: pg,
        primary: `postgres://app:${enc(p)}@db1:5432/shop`,
        replicas: [`postgres://app:${enc(p)}@DB1/shop`],
      }),
    ),
  'a bad port': (p) =>
    [':54x2', ':99999', ':']
      .map((port) =>
        seen(() => resolveConfig({ driver: pg, primary: `postgres://app:${enc(p)}@db1${port}/shop` })),
      )
      .join('\n'),
  'a bad port, as typed': (p) =>
    seen(() => resolveConfig({ driver: pg, primary: `postgres://app:${p}@db1:54x2/shop` })),
  'the other dialect': (p) =>
    seen(() => resolveConfig({ driver: pg, primary: `mysql://app:${enc(p)}@db1/shop` })),
  'no host': (p) => seen(() => resolveConfig({ driver: pg, primary: `postgres://app:${enc(p)}@/shop` })),
  'a bad host, as typed': (p) =>
    seen(() => resolveConfig({ driver: pg, primary: `postgres://app:${p}@db 1/shop` })),
  'no "@" (user:password taken for host:port)': (p) =>
    seen(() => resolveConfig({ driver: pg, primary: `postgres://app:${enc(p)}/shop` })),
  'a URL given as a weight': (p) =>
    seen(() =>
      resolveConfig({
        driver: pg,
        primary: 'postgres://db1/shop',
        replicas: [{ url: 'postgres://db2/shop', weight: `postgres://app:${p}@db3/shop` }],
      }),
    ),
  'a URL given as a name': (p) =>
    seen(() => resolveConfig({ driver: pg, primary: { url: 'postgres://db1/shop', name: `app:${p}@db1` } })),
}

describe('ConfigError: no fragment of a password, on every path', () => {
  for (const [surface, run] of Object.entries(SURFACES)) {
    it(surface, () => {
      const found: string[] = []
      for (const p of TRICKY_PASSWORDS) {
        const out = run(p)
        const bad = leaks(writtenForms(p), out, run(controlOf(p)))
        if (bad.length > 0)
          found.push(
            `${JSON.stringify(p)} -> ${JSON.stringify(bad)} in ${JSON.stringify(out.split('\n')[0])}`,
          )
      }
      expect(found).toEqual([])
    })
  }
})

function configError(fn: () => unknown): ConfigError {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return err as ConfigError
  }
  throw new Error('expected a ConfigError, nothing was thrown')
}

describe('node URLs: the message names the real problem', () => {
  it('an unencoded "/", "?" or "#" in a password: percent-encode it (encodeURIComponent), user info dropped', () => {
    for (const p of ['p@ss/w#rd', 'Sec:ret/12@x', 'Q#', 'a?b=c&d']) {
      const err = configError(() =>
        resolveConfig({
          driver: pg,
          primary: 'postgres://db0/shop',
          replicas: [`postgres://app:${p}@db2:5432/shop`],
        }),
      )
      expect(err.path).toBe('replicas[0]')
      expect(err.message).toContain('got "postgres://***@db2:5432/shop"')
      expect(err.message).toContain('percent-encoded')
      expect(err.message).toContain('encodeURIComponent(password)')
      expect(err.message).not.toContain('same server')
      expect(err.cause).toBeUndefined()
    }
  })

  it('the same password percent-encoded is accepted, and its secrets are the whole password', () => {
    const config = resolveConfig({ driver: pg, primary: `postgres://app:${enc('p@ss/w#rd')}@db1/shop` })
    expect(config.secrets).toEqual(['p@ss/w#rd', 'p%40ss%2Fw%23rd'])
    expect(config.clusters[0]?.primary?.url).toBe('postgres://app:p%40ss%2Fw%23rd@db1/shop')
  })

  it('a tab or newline (dropped silently by URL parsers) is refused', () => {
    for (const p of ['tab\there', 'line\nbreak']) {
      const err = configError(() => resolveConfig({ driver: pg, primary: `postgres://app:${p}@db1/shop` }))
      expect(err.message).toMatch(/tab, newline or other control character/)
      expect(err.message).toContain('got "postgres://***@db1/shop"')
    }
  })

  it('a "%" that starts no percent-encoding in the user info is refused', () => {
    const err = configError(() => resolveConfig({ driver: my, primary: 'mysql://app:50%off@db1/shop' }))
    expect(err.message).toContain('"%" %25')
    expect(err.message).toContain('got "mysql://***@db1/shop"')
  })

  it('"@", ":", spaces, brackets and unicode need no encoding', () => {
    for (const p of ['Jq@Sup3rS3cret', 'Qr:Xt', 'my pass', '[::1]:Rq', 'Kö€']) {
      const config = resolveConfig({ driver: pg, primary: `postgres://app:${p}@db1/shop` })
      expect(config.secrets).toContain(p)
    }
  })

  it('a bad port is named as such', () => {
    expect(
      configError(() => resolveConfig({ driver: pg, primary: 'postgres://app:pw@db1:54x2/shop' })).message,
    ).toBe('primary: bad port "54x2" in "postgres://***@db1:54x2/shop": expected a number from 0 to 65535')
    expect(
      configError(() => resolveConfig({ driver: pg, primary: 'postgres://db1:99999/shop' })).message,
    ).toBe('primary: bad port "99999" in "postgres://db1:99999/shop": expected a number from 0 to 65535')
    // Without an "@", what looks like a port may be a password: not shown.
    expect(
      configError(() => resolveConfig({ driver: pg, primary: 'postgres://app:s3cret/shop' })).message,
    ).toBe(
      'primary: bad port (expected a number from 0 to 65535; or is it user:password with the "@" before the host missing?) in "postgres://app:***/shop"',
    )
  })

  it('duplicate servers are still found, with paths intact', () => {
    const url = `postgres://app:${enc('p@ss/w#rd')}@db1:5432/w`
    const err = configError(() => resolveConfig({ driver: pg, primary: url, replicas: [url] }))
    expect(err.message).toBe(
      'replicas[0]: same server as primary (db1:5432/w); each node must be a distinct server',
    )
  })
})
