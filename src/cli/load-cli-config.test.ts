// biome-ignore-all lint/suspicious/noTemplateCurlyInString: URLs with ${ENV} references
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import { loadCliConfig } from './load-cli-config.js'
import { runCli } from './run-cli.js'

const SECRET = 'Sup3r-s3cret'

/** Runs the CLI in-process, capturing its output. */
async function run(argv: string[], env: Record<string, string> = {}) {
  let out = ''
  const code = await runCli(argv, {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (out += s) },
    isTTY: false,
    env,
  })
  return { code, out }
}

describe('loadCliConfig: a URL for the config file', () => {
  it('a multi-host URL becomes { driver, url }, its password redacted from the display name', async () => {
    const url = `postgres://app:${SECRET}@db1:5432,db2/app?target_session_attrs=read-only`
    const loaded = await loadCliConfig(url, { env: {} })
    expect(loaded.options.url).toBe(url)
    expect(loaded.options.driver.name).toBe('pg')
    expect(loaded.resolved.clusters[0]?.replicas.map((n) => n.name)).toEqual(['db1:5432', 'db2:5432'])
    expect(loaded.resolved.targetSessionAttrs).toBe('read-only')
    expect(loaded.file.displayName).toBe('postgres://app:***@db1:5432,db2/app?target_session_attrs=read-only')
    expect(loaded.secrets).toContain(SECRET)
  })

  it('mysql:// and mariadb:// take the mysql2 driver', async () => {
    for (const scheme of ['mysql', 'mariadb']) {
      const loaded = await loadCliConfig(`${scheme}://app@m1,m2/shop`, { env: {} })
      expect(loaded.options.driver.name).toBe('mysql2')
      expect(loaded.resolved.clusters[0]?.replicas).toHaveLength(2)
    }
  })

  it('${VAR} reads the environment (a single-quoted URL keeps the password out of the process list)', async () => {
    const loaded = await loadCliConfig('postgres://app:${DB_PASSWORD}@db1,db2/app', {
      env: { DB_PASSWORD: SECRET },
    })
    expect(loaded.options.url).toBe(`postgres://app:${SECRET}@db1,db2/app`)
    expect(loaded.file.displayName).toBe('postgres://app:***@db1,db2/app')
    await expect(loadCliConfig('postgres://app:${DB_PASSWORD}@db1/app', { env: {} })).rejects.toThrow(
      'url: environment variable DB_PASSWORD is not set (use ${DB_PASSWORD:-default} for a default)',
    )
  })

  it('an unknown scheme is a ConfigError naming the accepted ones', async () => {
    const err = await loadCliConfig(`http://app:${SECRET}@db1/app`, { env: {} }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ConfigError)
    expect((err as ConfigError).message).toBe(
      'url: expected a postgres://, postgresql://, mysql:// or mariadb:// URL (or a config file), got "http://app:***@db1/app"',
    )
  })
})

describe('routemate check with a URL', () => {
  it('a valid multi-host URL: exit 0, nodes counted, no password', async () => {
    const { code, out } = await run(['check', `postgres://app:${SECRET}@db1,db2,db3/app`])
    expect({ code, out }).toEqual({
      code: 0,
      out: '✓ postgres://app:***@db1,db2,db3/app is valid: 3 nodes, roles discovered (postgres)\n',
    })
  })

  it('a bad multi-host URL: exit 1, the problem named, no password', async () => {
    const { code, out } = await run(['check', `postgres://app:${SECRET}@db1,db1:5432/app`])
    expect(code).toBe(1)
    expect(out).toBe(
      '✗ url: host 2 ("db1:5432") is listed twice (also host 1): each host must be a distinct server; a multi-host URL reads postgres://user@host1:5432,host2:5432/database\n',
    )
  })
})
