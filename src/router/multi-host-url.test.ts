import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import { controlOf, leaks, TRICKY_PASSWORDS, writtenForms } from '../util/tricky-passwords.case.js'
import type { Dialect } from './driver.js'
import { parseMultiHostUrl } from './multi-host-url.js'

const enc = encodeURIComponent

/** Good URLs: what each becomes (node names and URLs, target_session_attrs). */
const GOOD: ReadonlyArray<{
  title: string
  url: string
  dialect?: Dialect
  nodes: ReadonlyArray<readonly [name: string, url: string]>
  attrs?: string
}> = [
  {
    title: 'three hosts with ports, target_session_attrs taken out',
    url: 'postgres://app:pw@h1:5432,h2:5432,h3:5432/app?target_session_attrs=read-write',
    nodes: [
      ['h1:5432', 'postgres://app:pw@h1:5432/app'],
      ['h2:5432', 'postgres://app:pw@h2:5432/app'],
      ['h3:5432', 'postgres://app:pw@h3:5432/app'],
    ],
    attrs: 'read-write',
  },
  {
    title: 'missing ports: the default port, in the name and the node URL',
    url: 'postgresql://app@DB1.example.com,db2:6432,db3/app',
    nodes: [
      ['db1.example.com:5432', 'postgresql://app@db1.example.com:5432/app'],
      ['db2:6432', 'postgresql://app@db2:6432/app'],
      ['db3:5432', 'postgresql://app@db3:5432/app'],
    ],
  },
  {
    title: 'an empty port is the default port (libpq)',
    url: 'postgres://h1:,h2/app',
    nodes: [
      ['h1:5432', 'postgres://h1:5432/app'],
      ['h2:5432', 'postgres://h2:5432/app'],
    ],
  },
  {
    title: 'IPv6 in brackets, normalized, with and without a port',
    url: 'postgres://app@[::1]:5433,[2001:DB8:0:0::1],10.0.0.3/app',
    nodes: [
      ['[::1]:5433', 'postgres://app@[::1]:5433/app'],
      ['[2001:db8::1]:5432', 'postgres://app@[2001:db8::1]:5432/app'],
      ['10.0.0.3:5432', 'postgres://app@10.0.0.3:5432/app'],
    ],
  },
  {
    title: 'one port= for every host (libpq)',
    url: 'postgres://app@h1,h2/app?port=6432&sslmode=require',
    nodes: [
      ['h1:6432', 'postgres://app@h1:6432/app?sslmode=require'],
      ['h2:6432', 'postgres://app@h2:6432/app?sslmode=require'],
    ],
  },
  {
    title: 'port= with one port per host, an empty one the default (libpq)',
    url: 'postgres://app@h1,h2,h3/app?port=6432,,6433',
    nodes: [
      ['h1:6432', 'postgres://app@h1:6432/app'],
      ['h2:5432', 'postgres://app@h2:5432/app'],
      ['h3:6433', 'postgres://app@h3:6433/app'],
    ],
  },
  {
    title: 'host= instead of the authority (libpq), IPv6 without brackets',
    url: 'postgres://app:pw@/app?host=h1,::1&port=5433,5434&application_name=x',
    nodes: [
      ['h1:5433', 'postgres://app:pw@h1:5433/app?application_name=x'],
      ['[::1]:5434', 'postgres://app:pw@[::1]:5434/app?application_name=x'],
    ],
  },
  {
    title: 'a single host is one node',
    url: 'postgres://app@db1/app',
    nodes: [['db1:5432', 'postgres://app@db1:5432/app']],
  },
  {
    title: 'other parameters kept as written, in order, for every node; no path',
    url: 'postgres://app@h1,h2?sslmode=verify-full&options=-c%20search_path%3Dx&target_session_attrs=standby',
    nodes: [
      ['h1:5432', 'postgres://app@h1:5432?sslmode=verify-full&options=-c%20search_path%3Dx'],
      ['h2:5432', 'postgres://app@h2:5432?sslmode=verify-full&options=-c%20search_path%3Dx'],
    ],
    attrs: 'standby',
  },
  {
    title: 'the same host on two ports is two servers',
    url: 'postgres://h1:5432,h1:5433/app',
    nodes: [
      ['h1:5432', 'postgres://h1:5432/app'],
      ['h1:5433', 'postgres://h1:5433/app'],
    ],
  },
  {
    title: 'mysql://: default port 3306, target_session_attrs accepted alike',
    url: 'mysql://app:pw@m1,m2:3307/shop?charset=utf8mb4&target_session_attrs=prefer-standby',
    dialect: 'mysql',
    nodes: [
      ['m1:3306', 'mysql://app:pw@m1:3306/shop?charset=utf8mb4'],
      ['m2:3307', 'mysql://app:pw@m2:3307/shop?charset=utf8mb4'],
    ],
    attrs: 'prefer-standby',
  },
  {
    title: 'mariadb://',
    url: 'mariadb://app@m1,m2/shop',
    dialect: 'mysql',
    nodes: [
      ['m1:3306', 'mariadb://app@m1:3306/shop'],
      ['m2:3306', 'mariadb://app@m2:3306/shop'],
    ],
  },
  // Passwords: the user info is everything up to the last "@"; one for every host.
  ...(
    [
      ['encoded "@", ",", "/", ":"', enc('p@ss,w/o:rd')],
      ['an unencoded "@"', 'p@ss'],
      ['an unencoded ","', 'p,ss'],
      ['an unencoded ":"', 'p:ss:x'],
    ] as const
  ).map(([what, pw]) => ({
    title: `a password with ${what}`,
    url: `postgres://app:${pw}@h1:5432,h2/app`,
    nodes: [
      ['h1:5432', `postgres://app:${pw}@h1:5432/app`],
      ['h2:5432', `postgres://app:${pw}@h2:5432/app`],
    ] as const,
  })),
]

/** Bad URLs: the one message each must give (path `url`). */
const BAD: ReadonlyArray<{ title: string; url: unknown; dialect?: Dialect; message: RegExp | string }> = [
  {
    title: 'not a string',
    url: 42,
    message: /^url: expected a postgres:\/\/ URL .* listing one or more hosts: .*, got 42$/,
  },
  {
    title: 'the other dialect',
    url: 'mysql://app:secret@h1,h2/app',
    message: /got "mysql:\/\/app:\*\*\*@h1,h2\/app" \(the driver speaks postgres, not mysql\)$/,
  },
  {
    title: 'no scheme',
    url: 'h1,h2/app',
    message: /^url: expected a postgres:\/\/ URL .*, got "h1,h2\/app"$/,
  },
  { title: 'no host', url: 'postgres://app@/app', message: /^url: no host; a multi-host URL reads / },
  {
    title: 'an empty host (two commas)',
    url: 'postgres://h1,,h2/app',
    message:
      /^url: host 2 of 3 is empty \(two commas in a row, or a comma at the start or end of the host list\)/,
  },
  { title: 'a trailing comma', url: 'postgres://h1,h2,/app', message: /^url: host 3 of 3 is empty/ },
  {
    title: 'a bad port',
    url: 'postgres://app:pw@h1:5432,h2:54x2/app',
    message:
      'url: bad port "54x2" in host 2 of 2 ("h2:54x2"): expected a number from 1 to 65535; a multi-host URL reads postgres://user@host1:5432,host2:5432/database',
  },
  {
    title: 'port out of range',
    url: 'postgres://h1:65536/app',
    message: /bad port "65536" in the host \("h1:65536"\)/,
  },
  { title: 'port 0', url: 'postgres://h1:0,h2/app', message: /bad port "0" in host 1 of 2/ },
  {
    title: 'unbracketed IPv6',
    url: 'postgres://app@::1,h2/app',
    message: /host 1 of 2 \("::1"\) has a port but no host name|an IPv6 address must be written in brackets/,
  },
  {
    title: 'unbracketed IPv6 with a host part',
    url: 'postgres://app@fe80::1,h2/app',
    message:
      /^url: host 1 of 2 \("fe80::1"\): an IPv6 address must be written in brackets, e\.g\. "\[::1\]:5432"/,
  },
  {
    title: 'an unterminated bracket',
    url: 'postgres://app@[::1,h2/app',
    message:
      /host 1 of 2 \("\[::1"\): an IPv6 address in brackets must be followed by ":port", "," or the end/,
  },
  {
    title: 'not an IPv6 address',
    url: 'postgres://app@[db1]/app',
    message: /the host \("\[db1\]"\) is not a valid IPv6 address/,
  },
  {
    title: 'a space in a host',
    url: 'postgres://app@h1,d b/app',
    message: /host 2 of 2 \("d b"\): expected a host name or an IP address/,
  },
  {
    title: 'duplicate hosts (case and default port do not hide them)',
    url: 'postgres://app:pw@h1:5432,h2,H1/app',
    message:
      /^url: host 3 \("h1:5432"\) is listed twice \(also host 1\): each host must be a distinct server/,
  },
  {
    title: 'duplicate IPv6 hosts in two spellings',
    url: 'postgres://[::1],[0:0::1]:5432/app',
    message: /host 2 \("\[::1\]:5432"\) is listed twice \(also host 1\)/,
  },
  {
    title: 'ports both in the list and in port=',
    url: 'postgres://h1:5433,h2/app?port=5432',
    message: /^url: ports are given both in the host list and in port=: give them in one place/,
  },
  {
    title: 'port= with the wrong count',
    url: 'postgres://h1,h2,h3/app?port=5432,5433',
    message: /port= gives 2 ports for 3 hosts: give one port for every host, or one per host/,
  },
  {
    title: 'a bad port in port=',
    url: 'postgres://h1,h2/app?port=5432,x',
    message: /bad port "x" in port 2 of port=/,
  },
  {
    title: 'hosts in the authority and in host=',
    url: 'postgres://h1/app?host=h2',
    message: /hosts are given both before the path and in host=/,
  },
  {
    title: 'a Unix-domain socket in host=',
    url: 'postgres://app@/app?host=%2Fvar%2Frun%2Fpostgresql,h2',
    message: /host 1 of 2 in host= \("\/var\/run\/postgresql"\) is a Unix-domain socket/,
  },
  {
    title: 'hostaddr=',
    url: 'postgres://h1,h2/app?hostaddr=10.0.0.1,10.0.0.2',
    message: /hostaddr= is not supported/,
  },
  {
    title: 'target_session_attrs twice',
    url: 'postgres://h1,h2/app?target_session_attrs=any&target_session_attrs=standby',
    message: /target_session_attrs= is given more than once/,
  },
  {
    title: 'an unknown target_session_attrs, with did-you-mean',
    url: 'postgres://h1,h2/app?target_session_attrs=read_only',
    message:
      'url: target_session_attrs: expected one of "any", "read-write", "read-only", "primary", "standby", "prefer-standby", got "read_only" (did you mean "read-only"?)',
  },
  {
    title: "JDBC's names mapped in the hint",
    url: 'postgres://h1,h2/app?target_session_attrs=preferSecondary',
    message: /got "preferSecondary" \(did you mean "prefer-standby"\?\)$/,
  },
  {
    title: 'target_session_attrs is exact (lower-case, as libpq)',
    url: 'postgres://h1,h2/app?target_session_attrs=STANDBY',
    message: /got "STANDBY" \(did you mean "standby"\?\)$/,
  },
  {
    title: 'per-host credentials (node-postgres#2781): refused, password not shown',
    url: 'postgres://app:pw@h1:5432,app:pw@h2:5432/app',
    message:
      /^url: expected .* with one user info before the host list .*per-host credentials are not supported.*; got "postgres:\/\/\*\*\*@h2:5432\/app"$/,
  },
  {
    title: 'an unencoded "/" in the password',
    url: 'postgres://app:p/ss@h1,h2/app',
    message: /an "@" follows a "\/", "\?" or "#".*got "postgres:\/\/\*\*\*@h1,h2\/app"$/,
  },
  {
    title: 'a missing "@": the password taken for a port is not shown',
    url: 'postgres://app:s3cret,h2/app',
    message:
      /^url: bad port in host 1 of 2 \("app:\*\*\*"\) \(expected a number from 1 to 65535; or is it user:password with the "@" before the host missing\?\)/,
  },
]

function configError(fn: () => unknown): ConfigError {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return err as ConfigError
  }
  throw new Error('expected a ConfigError, nothing was thrown')
}

describe('parseMultiHostUrl', () => {
  it.each(GOOD.map((g) => [g.title, g]))('%s', (_title, g) => {
    const parsed = parseMultiHostUrl(g.url, 'url', g.dialect ?? 'postgres')
    expect(parsed.nodes.map((n) => [n.name, n.url])).toEqual(g.nodes)
    expect(parsed.targetSessionAttrs).toBe(g.attrs)
    expect(Object.isFrozen(parsed.nodes)).toBe(true)
  })

  it.each(BAD.map((b) => [b.title, b]))('refuses %s', (_title, b) => {
    const err = configError(() => parseMultiHostUrl(b.url, 'url', b.dialect ?? 'postgres'))
    expect(err.path).toBe('url')
    if (typeof b.message === 'string') expect(err.message).toBe(b.message)
    else expect(err.message).toMatch(b.message)
  })

  it('every target_session_attrs value is accepted', () => {
    for (const v of ['any', 'read-write', 'primary', 'read-only', 'standby', 'prefer-standby']) {
      expect(
        parseMultiHostUrl(`postgres://h1,h2/app?target_session_attrs=${v}`, 'url', 'postgres')
          .targetSessionAttrs,
      ).toBe(v)
    }
  })

  it('node names never hold credentials; node URLs hold the user info as written', () => {
    const p = enc('p@ss,w/o:rd')
    const { nodes } = parseMultiHostUrl(`postgres://app:${p}@h1,h2/app?password=x`, 'url', 'postgres')
    for (const n of nodes) {
      expect(n.name).not.toMatch(/app|ss|password/)
      expect(n.url).toContain(`app:${p}@`)
    }
  })
})

/** Everything a caller can see of an error (frame locations left out, see node-url.test.ts). */
function seen(fn: () => unknown): string {
  try {
    fn()
  } catch (err) {
    return [
      String(err),
      (err as Error).stack,
      JSON.stringify(err),
      inspect(err, { depth: 10, showHidden: true }),
    ]
      .join('\n')
      .replace(/:\d+:\d+\)?/g, '') // every frame location, in the stack and in inspect's quoted one
  }
  return '(no error)'
}

const parse =
  (url: string, dialect: Dialect = 'postgres') =>
  () =>
    parseMultiHostUrl(url, 'url', dialect)

/** The errors of a multi-host URL a password can reach, as a function of the password. */
const SURFACES: Record<string, (p: string) => string> = {
  'as typed, two hosts': (p) => seen(parse(`postgres://app:${p}@h1:5432,h2:5432/shop`)),
  'as typed, mysql': (p) => seen(parse(`mysql://app:${p}@h1,h2/shop`, 'mysql')),
  'a bad port in host 2': (p) => seen(parse(`postgres://app:${enc(p)}@h1,h2:54x2/shop`)),
  'a bad port in host 2, as typed': (p) => seen(parse(`postgres://app:${p}@h1,h2:54x2/shop`)),
  'a duplicate host': (p) => seen(parse(`postgres://app:${enc(p)}@h1,h2,h1:5432/shop`)),
  'the other dialect': (p) => seen(parse(`mysql://app:${enc(p)}@h1,h2/shop`)),
  'a bad target_session_attrs': (p) =>
    seen(parse(`postgres://app:${enc(p)}@h1,h2/shop?target_session_attrs=rw`)),
  'no "@" (user:password taken for host:port)': (p) => seen(parse(`postgres://app:${enc(p)},h2/shop`)),
  'per-host credentials': (p) => seen(parse(`postgres://app:${enc(p)}@h1,app:${enc(p)}@h2/shop`)),
  'an empty host': (p) => seen(parse(`postgres://app:${p}@h1,,h2/shop`)),
}

describe('multi-host URL errors: no fragment of a password, on every path', () => {
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
