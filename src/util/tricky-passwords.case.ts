/**
 * Test data shared by the unit and integration leak tests: passwords that break naive redaction
 * (URL-reserved characters written unencoded, spaces, tabs, unicode, percent signs, 1–2
 * characters), and the leak check itself.
 *
 * A leak is measured against a control: the same scenario run with {@link controlOf} the password
 * (same reserved characters in the same places, every letter, digit and non-ASCII character
 * replaced), so a URL parses (or fails to) the same way and every message has the same shape. A
 * fragment (substring of length >= 2) of the password, or of the form it was written in the URL,
 * that occurs more often in the output than in the control's output is a leak. Legitimate words
 * ("pass", "address", "rd" in "password") occur equally often in both and are not counted.
 */

/** The passwords: each one broke at least one surface before structural redaction, or guards a rule. */
export const TRICKY_PASSWORDS: readonly string[] = Object.freeze([
  'p@ss/w#rd', // the example: "@", "/" and "#"
  'Sec:ret/12@x', // ":" then "/" then "@"
  'Jq@Sup3rS3cret', // an "@" inside, nothing else reserved
  'my pass', // a space
  'tab\there', // a tab (URL parsers drop it silently)
  'line\nbreak', // a newline
  '50%off', // a "%" that is no percent-encoding
  '%41%q9', // one valid-looking escape and one invalid
  'x', // 1 character
  '@', // 1 reserved character
  '%', // 1 percent sign
  'Q#', // 2 characters, one reserved
  'ж@', // 2 characters, unicode and reserved
  'Kö/ñé€', // unicode and "/"
  '😀🔑Xy', // astral characters
  'a?b=c&d', // query characters
  '[::1]:Rq', // brackets and colons
  'Jk\\back"quote\'', // backslash and quotes
  '  lead and trail  ', // leading and trailing spaces
  'Wv//@@##??', // repeated reserved characters
  'Jx;password=Yq', // looks like a parameter
  'Qr:Xt', // a colon only
  'pa55-Wörd_~.!*()', // unreserved characters and sub-delimiters
  'Gh://Kq@h', // looks like a URL
  'app', // the same as the user name
])

/**
 * The control of a password: ASCII punctuation, spaces and control characters kept, hex letters
 * (a–f) replaced by `E` (so a `%xx` escape stays valid or invalid), other letters and non-ASCII
 * characters by `Z`, digits by `7`. None of `E`, `Z`, `7` occurs in {@link TRICKY_PASSWORDS}.
 */
export function controlOf(password: string): string {
  let out = ''
  for (const ch of password) {
    if (/[0-9]/.test(ch)) out += '7'
    else if (/[a-fA-F]/.test(ch)) out += 'E'
    else if (ch.charCodeAt(0) < 0x80 && !/[A-Za-z]/.test(ch)) out += ch
    else out += 'Z'
  }
  return out
}

/** Every distinct substring of `text` of at least `min` characters (UTF-16 units, so halves of an emoji count too). */
export function fragments(text: string, min = 2): string[] {
  const out = new Set<string>()
  for (let i = 0; i < text.length; i++) for (let j = i + min; j <= text.length; j++) out.add(text.slice(i, j))
  return [...out]
}

function count(haystack: string, needle: string): number {
  let n = 0
  for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + 1)) n++
  return n
}

/**
 * The fragments of `secrets` (a password and the forms it was written in) that occur more often
 * in `output` than in `control` (the same scenario run with the control password); with
 * `presence`, for outputs whose lines vary from run to run (timings, retries), those that occur in
 * `output` and not at all in `control`. Only fragments that differ from the control's (that
 * contain a replaced character) can be told apart, so they alone are checked. Empty when nothing
 * leaked.
 */
export function leaks(
  secrets: readonly string[],
  output: string,
  control: string,
  presence = false,
): string[] {
  const found = new Set<string>()
  for (const secret of secrets) {
    const replaced = controlOf(secret)
    for (const f of fragments(secret)) {
      const i = secret.indexOf(f)
      if (replaced.slice(i, i + f.length) === f) continue // made of kept characters only
      const leaked = presence
        ? output.includes(f) && !control.includes(f)
        : count(output, f) > count(control, f)
      if (leaked) found.add(f)
    }
  }
  return [...found].sort((a, b) => b.length - a.length)
}

/** The forms a password takes in a URL: as typed, and percent-encoded. */
export function writtenForms(password: string): string[] {
  const encoded = encodeURIComponent(password)
  return encoded === password ? [password] : [password, encoded]
}
