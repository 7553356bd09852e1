// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts with ${ENV} references
import { describe, expect, it } from 'vitest'
import { interpolate } from './interpolate.js'

describe('interpolate', () => {
  const env = { HOST: 'db1', EMPTY: '', PW: 'p@ss' }

  it.each([
    ['no references', 'postgres://db/app', 'postgres://db/app'],
    ['a whole reference', '${HOST}', 'db1'],
    ['partial references', 'postgres://app:${PW}@${HOST}:5432/app', 'postgres://app:p@ss@db1:5432/app'],
    ['a default for an unset variable', '${PORT:-5432}', '5432'],
    ['a default for an empty variable', '${EMPTY:-x}', 'x'],
    ['an empty variable without default', 'a${EMPTY}b', 'ab'],
    ['an empty default', '${PORT:-}', ''],
    ['an escaped reference', '$${HOST} is ${HOST}', '${HOST} is db1'],
    ['a lone dollar', 'costs $5 or $', 'costs $5 or $'],
    ['a default with colons and slashes', '${URL:-postgres://a:b@h/db}', 'postgres://a:b@h/db'],
  ])('%s', (_title, text, value) => {
    const r = interpolate(text, env)
    expect(r.ok && r.value).toBe(value)
  })

  it('reports the names and the environment values used', () => {
    expect(interpolate('${HOST}/${PORT:-1}/${PW}', env)).toEqual({
      ok: true,
      value: 'db1/1/p@ss',
      names: ['HOST', 'PORT', 'PW'],
      values: ['db1', 'p@ss'],
    })
  })

  it.each([
    [
      'an unset variable',
      'x ${NOPE}',
      2,
      'environment variable NOPE is not set (use ${NOPE:-default} for a default)',
    ],
    ['an unterminated reference', 'a${HOST', 1, 'unterminated "${": expected ${NAME} or ${NAME:-default}'],
    [
      'a bad name',
      '${1X}',
      0,
      'expected ${NAME} or ${NAME:-default} (NAME: letters, digits and _, not starting with a digit), got "${1X}"',
    ],
    ['a nested reference', '${A:-${B}}', 0, '${A:-...}: a default cannot contain another reference'],
  ])('rejects %s', (_title, text, index, message) => {
    expect(interpolate(text, env)).toEqual({ ok: false, index, message })
  })
})
