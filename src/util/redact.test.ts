import { describe, expect, it } from 'vitest'
import { redactSecrets, redactUrl } from './redact.js'
import { controlOf, leaks, TRICKY_PASSWORDS, writtenForms } from './tricky-passwords.case.js'

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
