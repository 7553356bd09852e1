import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigFileError } from './config-file-error.js'
import { loadConfigFile } from './load-config.js'

const dir = mkdtempSync(join(tmpdir(), 'routemate-config-redaction-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0

async function fileError(text: string): Promise<ConfigFileError> {
  const name = `c${n++}.yaml`
  writeFileSync(join(dir, name), text)
  const err = await loadConfigFile(name, { env: {}, cwd: dir }).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(ConfigFileError)
  return err as ConfigFileError
}

describe('config files: passwords redacted by structure, messages intact', () => {
  it('an unencoded "p@ss/w#rd": the real cause, paths not garbled, no fragment', async () => {
    const err = await fileError(
      'driver: pg\nprimary: postgres://app:p@ss/w#rd@db1:5432/app\nreplicas:\n  - postgres://app:p@ss/w#rd@db2:5432/app\n',
    )
    // Both URLs are reported (every error of a file in one run); the first is the primary's.
    expect(err.errors).toHaveLength(2)
    expect(err.errors[0]?.message).toBe(
      'c0.yaml:2:10 primary: expected a postgres:// URL (or postgresql://), but an "@" follows a "/", "?" or "#", ' +
        'so the user info cannot be told from the host: reserved characters in a password must be percent-encoded, ' +
        'e.g. with encodeURIComponent(password) ("@" is %40, ":" %3A, "/" %2F, "?" %3F, "#" %23, "%" %25, a space %20); ' +
        'got "postgres://***@db1:5432/app"',
    )
    expect(err.message).not.toMatch(/ss\/|w#|#rd|same server/)
  })

  it('a one-letter password does not garble option paths', async () => {
    const err = await fileError(
      'driver: pg\nprimary: postgres://app:p@db1:5432/app\nreplicas:\n  - postgres://app:p@DB1/app\n',
    )
    expect(err.message).toBe(
      'c1.yaml:4:5 replicas[0]: same server as primary (db1:5432/app); each node must be a distinct server',
    )
  })

  it('a password with "@" and ":" (no encoding needed) is redacted whole in every message', async () => {
    const err = await fileError(
      'driver: pg\nprimary: postgres://app:Sec:r@t@db1:5432/app\nreplicas:\n  - url: postgres://app:Sec:r@t@db2/app\n    wieght: 2\n',
    )
    expect(err.message).toContain('replicas[0].wieght: unknown option "wieght"')
    expect(err.message).not.toMatch(/Sec|r@t/)
  })
})
