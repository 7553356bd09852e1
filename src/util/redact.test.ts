import { describe, expect, it } from 'vitest'
import { passwordsIn, redactSecrets, redactUrl, redactUrlValue, withoutUserInfo } from './redact.js'
import { controlOf, fragments, leaks, TRICKY_PASSWORDS, writtenForms } from './tricky-passwords.case.js'

/** `postgres://app:<form>@db1.example:5432/shop?sslmode=disable` and friends, for one way of writing the password. */
const urls = (form: string): string[] => [
  `postgres://app:${form}@db1.example:5432/shop?sslmode=disable`,
  `mysql://app:${form}@db1.example/shop`,
  `postgresql://:${form}@[::1]:6432/shop`,
]

/** Each surface of the redaction, as a function of the password. */
const SURFACES: Record<string, (password: string) => string> = {
  'a URL, password as typed': (p) => urls(p).map(redactUrl).join('\n'),
  'a URL, password percent-encoded': (p) => urls(encodeURIComponent(p)).map(redactUrl).join('\n'),
  'a URL in a sentence': (p) =>
    urls(p)
      .map((u) => redactUrl(`connect to ${u} failed (timeout); retrying`))
      .join('\n'),
  'a password parameter': (p) =>
    [
      redactUrl(`postgres://app@db1/shop?password=${p}&sslmode=disable`),
      redactUrl(`postgres://app@db1/shop?sslpassword=${encodeURIComponent(p)}`),
    ].join('\n'),
  'redacted twice': (p) =>
    urls(p)
      .map((u) => redactUrl(redactUrl(u)))
      .join('\n'),
}

describe('redactUrl: no fragment of a password survives', () => {
  for (const [surface, run] of Object.entries(SURFACES)) {
    it(surface, () => {
      const found: string[] = []
      for (const p of TRICKY_PASSWORDS) {
        const out = run(p)
        const bad = leaks(writtenForms(p), out, run(controlOf(p)))
        if (bad.length > 0)
          found.push(`${JSON.stringify(p)} -> ${JSON.stringify(bad)} in ${JSON.stringify(out)}`)
      }
      expect(found).toEqual([])
    })
  }
})

describe('redactUrl: by structure', () => {
  it('keeps the user when it is certain, the host, port, database and query', () => {
    expect(redactUrl('postgres://app:s3cret@db:5432/app?sslmode=require')).toBe(
      'postgres://app:***@db:5432/app?sslmode=require',
    )
    expect(redactUrl('postgres://app@db/app')).toBe('postgres://app@db/app')
    expect(redactUrl('postgres://db/app')).toBe('postgres://db/app')
  })

  it('ends the user info at the last "@", whatever the password holds', () => {
    expect(redactUrl('postgres://app:p@ss/w#rd@db1:5432/app')).toBe('postgres://app:***@db1:5432/app')
    expect(redactUrl('postgres://app:Sec:ret/12@x@db1/app')).toBe('postgres://app:***@db1/app')
    expect(redactUrl('postgres://app:my pass@db1/app')).toBe('postgres://app:***@db1/app')
    expect(redactUrl('postgres://app:a\tb@db1/app')).toBe('postgres://app:***@db1/app')
  })

  it('drops the user too when it is not a plain user name', () => {
    expect(redactUrl('postgres://me@corp:pw@db1/app')).toBe('postgres://***@db1/app')
    expect(redactUrl('postgres://a/b@db1/app')).toBe('postgres://***@db1/app')
  })

  it('redacts password parameters to the next "&name="', () => {
    expect(redactUrl('postgres://app@db/app?password=a b#c&x=1')).toBe(
      'postgres://app@db/app?password=***&x=1',
    )
    expect(redactUrl('mysql://app@db/app?sslpassword=x')).toBe('mysql://app@db/app?sslpassword=***')
    expect(redactUrl('postgres://db/app?password=a&b&c=1')).toBe('postgres://db/app?password=***&c=1')
    expect(redactUrl('postgres://app:Jx;password=Yq@db/app')).toBe('postgres://app:***@db/app')
    expect(redactUrl('postgres://app@db/app?password=p@ss&x=1')).toBe('postgres://***&x=1')
  })

  it('is idempotent and leaves text without URLs alone', () => {
    const once = redactUrl('got "postgres://app:pw@db1/app"')
    expect(redactUrl(once)).toBe(once)
    expect(redactUrl(`Access denied for user 'app'@'localhost' (using password: YES)`)).toBe(
      `Access denied for user 'app'@'localhost' (using password: YES)`,
    )
  })

  it('drops more, never less, after a URL in free text: up to the last "@"', () => {
    expect(redactUrl('postgres://app:pw@db1/app failed, ask dba@example.com')).toBe(
      'postgres://app:***@example.com',
    )
  })
})

describe('redactSecrets', () => {
  const sentence =
    'replicas[0].url: same server as primary (db1.example:5432/shop); expected a postgres:// URL'

  it('never garbles a message with a short password: short ones only as whole words', () => {
    for (const p of TRICKY_PASSWORDS) {
      if (sentence.includes(p)) continue
      expect(redactSecrets(sentence, [p, encodeURIComponent(p)])).toBe(sentence)
    }
    expect(redactSecrets('primary: user x is x', ['x'])).toBe('primary: user *** is ***')
    expect(redactSecrets('primary: wrong password', ['pass'])).toBe('primary: wrong ***word')
  })

  it('replaces every occurrence of a secret, longest first', () => {
    expect(redactSecrets('a hunter2 b hunter22', ['hunter2', 'hunter22'])).toBe('a *** b ***')
  })
})

describe('redactUrlValue, withoutUserInfo, passwordsIn', () => {
  it('redactUrlValue: a value without "//" has its user info before the last "@"', () => {
    expect(redactUrlValue('app:pw@db1/app')).toBe('app:***@db1/app')
    expect(redactUrlValue('app:Wv//@@##??@db1')).toBe('app:***@db1')
    expect(redactUrlValue('postgres:// app:pw@db1/app')).toBe('postgres://***@db1/app')
    expect(redactUrlValue('replica-1')).toBe('replica-1')
  })

  it('withoutUserInfo drops the user too', () => {
    expect(withoutUserInfo('postgres://app:p@ss/w#rd@db1:5432/app')).toBe('postgres://***@db1:5432/app')
    expect(withoutUserInfo('postgres://db1/app')).toBe('postgres://db1/app')
  })

  it('passwordsIn: the whole password of each URL line, and password parameters', () => {
    const text = [
      'primary: postgres://app:p@ss/w#rd@db1:5432/app',
      'replicas:',
      '  - "mysql://app:Sec:ret@db2/app"',
      '  - postgres://app@db3/app?sslmode=require&password=q1',
      '  - postgres://db4/app',
    ].join('\n')
    expect(passwordsIn(text)).toEqual(['p@ss/w#rd', 'Sec:ret', 'q1'])
  })
})

describe('the leak check', () => {
  it('has at least 20 passwords: reserved characters, spaces, a tab, unicode, "%", 1 and 2 characters', () => {
    expect(TRICKY_PASSWORDS.length).toBeGreaterThanOrEqual(20)
    for (const re of [/[@/#?:]/, / /, /\t/, /[^ -~\t\n]/, /%/])
      expect(TRICKY_PASSWORDS.some((p) => re.test(p))).toBe(true)
    expect(TRICKY_PASSWORDS.some((p) => p.length === 1)).toBe(true)
    expect(TRICKY_PASSWORDS.some((p) => [...p].length === 2)).toBe(true)
  })

  it('catches the leaks of the issue, and not the words a control run shows too', () => {
    const p = 'p@ss/w#rd'
    const control = controlOf(p)
    expect(control).toBe('Z@ZZ/Z#ZE')
    const old = 're***licas[0].url: same server as ***rimary (ss:5432/w)'
    const oldControl = 'replicas[0].url: same server as primary (ZZ:5432/Z)'
    expect(leaks([p], old, oldControl)).toEqual(expect.arrayContaining(['ss', '/w']))
    expect(leaks(['Sup3rS3cret'], 'app:***@Sup3rS3cret@db1', 'app:***@ZZZ7ZZ7ZEZEZ@db1')).toContain(
      'Sup3rS3cret',
    )
    const fine = 'wrong password for "app"; see the docs'
    expect(leaks([p], fine, fine)).toEqual([])
    expect(fragments('abc')).toEqual(['ab', 'abc', 'bc'])
  })

  it('by presence, for outputs whose lines vary', () => {
    expect(leaks(['Qx'], 'a\nQx', 'a\nZZ', true)).toEqual(['Qx'])
    expect(leaks(['read'], 'read\nread', 'read', true)).toEqual([])
  })
})
