/** One host of a multi-host URL, as {@link parseHostList} reads it. */
export interface UrlHost {
  /** The host as a URL writes it, lower-cased: `db1.example.com`, `10.0.0.1`, `[::1]` (IPv6 normalized). */
  readonly host: string
  /** The port written with the host; `undefined` when none (or an empty one: `h1:`). */
  readonly port: number | undefined
}

/** Reports a problem of the host list (the caller makes it a `ConfigError`). */
export type Fail = (reason: string) => never

/** A registered name or an IPv4 address, RFC 3986 `reg-name` without `,` (which separates hosts). */
const REG_NAME = /^(?:[A-Za-z0-9._~!$&'()*+;=-]|%[0-9A-Fa-f]{2})+$/

/**
 * Reads the host list of a multi-host URL's authority (`h1:5432,[::1]:5433,h3`): hosts separated
 * by commas, each with an optional `:port`, IPv6 addresses in brackets. `masked` (the URL has no
 * user info, so a `user:password` missing its `@` would look like a host and a port) keeps what
 * follows a colon out of messages unless it is a number.
 *
 * @example
 * ```ts
 * parseHostList('db1:5432,[::1],DB3:5433', 'postgres:', false, fail)
 * // [{ host: 'db1', port: 5432 }, { host: '[::1]', port: undefined }, { host: 'db3', port: 5433 }]
 * ```
 */
export function parseHostList(authority: string, scheme: string, masked: boolean, fail: Fail): UrlHost[] {
  const entries = authority.split(',')
  return entries.map((entry, i) => {
    const which = entries.length === 1 ? 'the host' : `host ${i + 1} of ${entries.length}`
    if (entry === '') {
      fail(
        entries.length === 1
          ? 'no host'
          : `${which} is empty (two commas in a row, or a comma at the start or end of the host list)`,
      )
    }
    const shown = display(entry, masked)
    let host: string
    let port: string | undefined
    if (entry.startsWith('[')) {
      const m = /^\[([^\]]*)\](?::(.*))?$/.exec(entry)
      if (m === null) {
        fail(`${which} (${shown}): an IPv6 address in brackets must be followed by ":port", "," or the end`)
      }
      host = ipv6(m[1] as string, scheme, () => fail(`${which} (${shown}) is not a valid IPv6 address`))
      port = m[2]
    } else {
      const colon = entry.indexOf(':')
      host = colon < 0 ? entry : entry.slice(0, colon)
      port = colon < 0 ? undefined : entry.slice(colon + 1)
      if (port?.includes(':') && !masked) {
        fail(`${which} (${shown}): an IPv6 address must be written in brackets, e.g. "[::1]:5432"`)
      }
      if (host === '') fail(`${which} (${shown}) has a port but no host name`)
      checkHostName(host, `${which} (${shown})`, fail)
      host = host.toLowerCase()
    }
    return { host, port: parsePort(port, `${which} (${shown})`, masked, fail) }
  })
}

/**
 * Reads libpq's `host=` parameter (already percent-decoded): a comma-separated list of host names
 * or IP addresses, IPv6 with or without brackets. Unix-domain socket directories are refused.
 *
 * @example
 * ```ts
 * parseHostParameter('db1,::1', 'postgres:', fail) // [{ host: 'db1', port: undefined }, { host: '[::1]', port: undefined }]
 * ```
 */
export function parseHostParameter(list: string, scheme: string, fail: Fail): UrlHost[] {
  const entries = list.split(',')
  return entries.map((entry, i) => {
    const which = `host ${i + 1} of ${entries.length} in host=`
    const shown = JSON.stringify(entry)
    if (entry === '') fail(`${which} is empty`)
    if (entry.startsWith('/') || entry.startsWith('@')) {
      fail(`${which} (${shown}) is a Unix-domain socket, which a multi-host URL cannot use; give TCP hosts`)
    }
    const bare = /^\[(.*)\]$/.exec(entry)?.[1] ?? entry
    if (bare.includes(':')) {
      return {
        host: ipv6(bare, scheme, () => fail(`${which} (${shown}) is not a valid IPv6 address`)),
        port: undefined,
      }
    }
    checkHostName(bare, `${which} (${shown})`, fail)
    return { host: bare.toLowerCase(), port: undefined }
  })
}

/**
 * Reads libpq's `port=` parameter (already percent-decoded) for `count` hosts: one port for every
 * host, or one per host; an empty entry is the default port (`undefined`).
 *
 * @example
 * ```ts
 * parsePortParameter('5432,,5433', 3, fail) // [5432, undefined, 5433]
 * parsePortParameter('5433', 2, fail)       // [5433, 5433]
 * ```
 */
export function parsePortParameter(list: string, count: number, fail: Fail): Array<number | undefined> {
  const entries = list.split(',')
  if (entries.length !== 1 && entries.length !== count) {
    fail(
      `port= gives ${entries.length} ports for ${count} hosts: give one port for every host, or one per host in the same order`,
    )
  }
  const ports = entries.map((p, i) =>
    parsePort(p, entries.length === 1 ? 'port=' : `port ${i + 1} of port=`, false, fail),
  )
  return entries.length === 1 ? Array.from({ length: count }, () => ports[0]) : ports
}

/** A port (`undefined` or `''`: none), checked: 1 to 65535. */
function parsePort(port: string | undefined, what: string, masked: boolean, fail: Fail): number | undefined {
  if (port === undefined || port === '') return undefined
  if (/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535) return Number(port)
  if (masked && !/^\d+$/.test(port)) {
    fail(
      `bad port in ${what} (expected a number from 1 to 65535; or is it user:password with the "@" before the host missing?)`,
    )
  }
  fail(`bad port ${JSON.stringify(port)} in ${what}: expected a number from 1 to 65535`)
}

function checkHostName(host: string, what: string, fail: Fail): void {
  if (!REG_NAME.test(host)) {
    fail(
      `${what}: expected a host name or an IP address (letters, digits, ".", "-"; IPv6 in brackets; reserved characters percent-encoded)`,
    )
  }
}

/** An IPv6 address as the URL parser normalizes it, in brackets (`[::1]`); `bad()` when it is none. */
function ipv6(address: string, scheme: string, bad: () => never): string {
  if (address === '' || !/^[0-9A-Fa-f:.]+$/.test(address)) bad()
  try {
    return new URL(`${scheme}//[${address}]/`).hostname.toLowerCase()
  } catch {
    return bad()
  }
}

/** A host entry for a message: quoted; without user info in the URL, what follows its colon unless it is a number. */
function display(entry: string, masked: boolean): string {
  if (!masked) return JSON.stringify(entry)
  const close = entry.startsWith('[') ? entry.indexOf(']') : -1
  const colon = entry.indexOf(':', close + 1)
  if (colon < 0 || /^\d*$/.test(entry.slice(colon + 1))) return JSON.stringify(entry)
  return JSON.stringify(`${entry.slice(0, colon + 1)}***`)
}
