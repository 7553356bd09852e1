/**
 * Password redaction by structure, never by guessing what a password looks like.
 *
 * The user info of `scheme://user:password@host/...` is everything between the `//` and the LAST
 * `@` after it: a password written unencoded may hold `@`, `/`, `?`, `#`, `:`, spaces, anything,
 * but no part of it comes after the last `@`. When that leaves doubt (in free text, a later `@`
 * may belong to something else), more is dropped, never less.
 */

/** The start of a URL: a scheme and `//`. */
const URL_START = /[A-Za-z][A-Za-z0-9+.-]*:\/\//g

/** A scheme at the start of a string: `postgres:`. */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/

/** A scheme and `//` at the start of a string: `postgres://`. */
const URL_AT_START = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//

/** A user name shown as is: RFC 3986 unreserved and sub-delimiter characters, percent escapes (`*` too, so redacting twice changes nothing). */
const PLAIN_USER = /^[A-Za-z0-9._~!$&'()*+,;=%-]*$/

/** A parameter holding a password: `password=`, `sslpassword=`, `pass=`, `pwd=`, after a non-alphanumeric character. */
const PASSWORD_PARAM = /(?<![A-Za-z0-9])[A-Za-z_]*(?:password|passwd|pass|pwd)=/gi

/** Secrets shorter than this are replaced only as whole words, so that `x` never garbles `expected`. */
const WHOLE_WORD_BELOW = 4

/**
 * What the user info `app:s3cret` becomes: `app:***` when the user is a plain user name, the
 * user alone when there is no password (`app`), else `***` (the user is uncertain).
 */
function maskUserInfo(userInfo: string): string {
  const colon = userInfo.indexOf(':')
  if (colon < 0) return PLAIN_USER.test(userInfo) ? userInfo : '***'
  const user = userInfo.slice(0, colon)
  return PLAIN_USER.test(user) ? `${user}:***` : '***'
}

/** A part of a text to replace: `[start, end)` by `with`. */
interface Cut {
  readonly start: number
  readonly end: number
  readonly with: string
}

/** Applies cuts; overlapping ones merge into one `***`. */
function applyCuts(text: string, cuts: Cut[]): string {
  cuts.sort((a, b) => a.start - b.start)
  let out = ''
  let pos = 0
  let i = 0
  while (i < cuts.length) {
    let { start, end, with: replacement } = cuts[i]!
    i++
    while (i < cuts.length && cuts[i]!.start <= end) {
      end = Math.max(end, cuts[i]!.end)
      replacement = '***'
      i++
    }
    out += text.slice(pos, start) + replacement
    pos = end
  }
  return out + text.slice(pos)
}

/**
 * The cuts of `password=` parameters. The value runs to the next `&` that starts another
 * parameter (`&name=`), or to the end: an unencoded `&` in the password is kept in.
 */
function parameterCuts(text: string): Cut[] {
  const cuts: Cut[] = []
  for (const m of text.matchAll(PASSWORD_PARAM)) {
    const start = m.index + m[0].length
    const next = /&(?=[A-Za-z_][\w.-]*=)/g
    next.lastIndex = start
    const end = next.exec(text)?.index ?? text.length
    if (end > start) cuts.push({ start, end, with: '***' })
  }
  return cuts
}

/**
 * Redacts passwords from a text that may contain URLs (a message, a driver error, a URL): the
 * user info after the first `scheme://` (one followed by a space or `)` is prose, as in "a
 * postgres:// URL"), up to the last `@` of the text — any later URL is inside it
 * (`postgres://app:p@ss/w#rd@db:5432/app` → `postgres://app:***@db:5432/app`) — and the values of
 * `password=` parameters, up to the next `&name=`. The user stays when it is a plain user name;
 * otherwise the whole user info becomes `***`. Redacting twice changes nothing. Never throws.
 *
 * @example
 * ```ts
 * redactUrl('postgres://app:s3cret@db:5432/app') // 'postgres://app:***@db:5432/app'
 * ```
 */
export function redactUrl(text: string): string {
  const lastAt = text.lastIndexOf('@')
  for (const m of text.matchAll(URL_START)) {
    const start = m.index + m[0].length
    if (start > lastAt) break // no user info here nor in any later URL
    if (/^[\s)]/.test(text.slice(start, start + 1))) continue // prose: "a postgres:// URL (or postgresql://)"
    // The user info runs to the last "@": later URLs are inside it.
    return applyCuts(text, cutsWithUserInfo(text, start, lastAt))
  }
  return applyCuts(text, parameterCuts(text))
}

/**
 * The user info `[start, end)` as a cut, with the parameter cuts. A `password=` inside a user info
 * free of `/`, `?` and `#` is part of the password, already cut: its own cut would run past the
 * host. Inside one that holds them, it may start a query whose value runs past the last `@`: kept.
 */
function cutsWithUserInfo(text: string, start: number, end: number): Cut[] {
  const userInfo = text.slice(start, end)
  const plain = !/[/?#]/.test(userInfo)
  const cuts = parameterCuts(text).filter((c) => !(plain && c.start >= start && c.start < end))
  cuts.push({ start, end, with: maskUserInfo(userInfo) })
  return cuts
}

/**
 * Redacts a string that is (or was given as) one URL, such as a config value or a node's URL:
 * its user info runs from after a leading `scheme://` (from the start, without one) to its last
 * `@` (`postgres:// app:pw@db1/app` → `postgres://***@db1/app`, `app:pw@db1/app` →
 * `app:***@db1/app`); `password=` parameters as in {@link redactUrl}.
 */
export function redactUrlValue(text: string): string {
  const at = text.lastIndexOf('@')
  const start = URL_AT_START.exec(text)?.[0].length ?? 0
  return applyCuts(text, at >= start ? cutsWithUserInfo(text, start, at) : parameterCuts(text))
}

/**
 * A URL with its whole user info replaced by `***`, for a URL that does not parse (where even the
 * user is uncertain): `postgres://app:p@ss/w#rd@db1/app` → `postgres://***@db1/app`. Password
 * parameters are redacted too.
 */
export function withoutUserInfo(url: string): string {
  const m = URL_AT_START.exec(url)
  const start = m === null ? (SCHEME.exec(url)?.[0].length ?? 0) : m[0].length
  const at = url.lastIndexOf('@')
  const cuts = parameterCuts(url)
  if (at >= start) cuts.push({ start, end: at, with: '***' })
  return applyCuts(url, cuts)
}

/**
 * The user info of a URL by structure: from after `scheme://` to the last `@`; `undefined` when
 * the string has no `scheme://` or no `@` after it.
 */
export function userInfoOf(url: string): { readonly start: number; readonly end: number } | undefined {
  const m = URL_AT_START.exec(url)
  if (m === null) return undefined
  const end = url.lastIndexOf('@')
  return end < m[0].length ? undefined : { start: m[0].length, end }
}

/**
 * The passwords written in a text (a config file), by structure: in each line, for each
 * `scheme://`, what follows the first `:` of the user info (up to the line's last `@`), and the
 * values of `password=` parameters. For {@link redactSecrets}.
 */
export function passwordsIn(text: string): string[] {
  const found = new Set<string>()
  for (const line of text.split(/\r?\n/)) {
    const lastAt = line.lastIndexOf('@')
    for (const m of line.matchAll(URL_START)) {
      const start = m.index + m[0].length
      if (start > lastAt) break
      const userInfo = line.slice(start, lastAt)
      const colon = userInfo.indexOf(':')
      if (colon >= 0 && colon < userInfo.length - 1) found.add(userInfo.slice(colon + 1))
      break
    }
    for (const m of line.matchAll(PASSWORD_PARAM)) {
      const value = /^[^&\s"']*/.exec(line.slice(m.index + m[0].length))?.[0] ?? ''
      if (value !== '') found.add(value)
    }
  }
  return [...found]
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * Replaces known secrets (passwords taken from the configured URLs, secret environment values)
 * in a free text, such as a driver error message, longest first. A secret of 4 characters or
 * more is replaced wherever it occurs; a shorter one only as a whole word (not next to a letter
 * or digit), so that a password `x` never turns `expected` into `e***pected`. Empty secrets are
 * ignored.
 *
 * @example
 * ```ts
 * redactSecrets('auth failed for hunter2', ['hunter2']) // 'auth failed for ***'
 * ```
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text
  for (const s of [...secrets].sort((a, b) => b.length - a.length)) {
    if (s.length === 0) continue
    if ([...s].length >= WHOLE_WORD_BELOW) out = out.split(s).join('***')
    else out = out.replace(new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(s)}(?![\\p{L}\\p{N}])`, 'gu'), '***')
  }
  return out
}
