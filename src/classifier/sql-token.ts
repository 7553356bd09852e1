/**
 * What a `SqlLexer` token is. Keywords are not told apart from identifiers here: both are a
 * `Word`, matched by the caller (see `sql-keywords.ts`).
 *
 * @example
 * ```ts
 * lexer.next() === TokenKind.Word
 * ```
 */
export const TokenKind = {
  /** The end of the text. */
  End: 0,
  /** An unquoted identifier or keyword. */
  Word: 1,
  /** A quoted identifier: `"x"` (pg), `` `x` `` (mysql), or a mysql `"x"` (a string or, with ANSI_QUOTES, a name). */
  Quoted: 2,
  /** A string literal: `'x'`, `E'x'`, `$$x$$`, `$tag$x$tag$`. */
  String: 3,
  /** A numeric literal (digits, one dot, an exponent; letters after it start a new token). */
  Number: 4,
  /** A parameter: `$1` (pg) or `?`. */
  Param: 5,
  /** Any other single character, in `SqlLexer.char`. */
  Punct: 6,
  /** A string, quoted identifier or block comment that never ends. */
  Unterminated: 7,
  /** A mysql executable comment (`/*!...*\/`, `/*M!...*\/`): code the lexer does not look into. */
  Opaque: 8,
} as const

/** One of the {@link TokenKind} values, e.g. `TokenKind.Word`. */
export type TokenKind = (typeof TokenKind)[keyof typeof TokenKind]

/** ASCII character classes, by code: bit 1 starts an identifier, bit 2 continues one, bit 4 a digit. */
const CHAR_CLASS = new Uint8Array(128)
for (let c = 0; c < 128; c++) {
  const letter = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95
  const digit = c >= 48 && c <= 57
  CHAR_CLASS[c] = (letter ? 3 : 0) | (digit ? 6 : 0) | (c === 36 ? 2 : 0)
}

/**
 * Whether a character code may start an unquoted name: a letter, `_`, or any non-ASCII character
 * (both servers accept those in names). `NaN` (read past the end) may not.
 *
 * @example
 * ```ts
 * isIdentStart('é'.charCodeAt(0)) // true
 * ```
 */
export function isIdentStart(c: number): boolean {
  return c < 128 ? (CHAR_CLASS[c]! & 1) !== 0 : c >= 128 // NaN (past the end) is neither
}

/**
 * Whether a character code may continue an unquoted name: as {@link isIdentStart}, plus digits and `$`.
 *
 * @example
 * ```ts
 * isIdentPart('$'.charCodeAt(0)) // true: `a$b` is one name
 * ```
 */
export function isIdentPart(c: number): boolean {
  return c < 128 ? (CHAR_CLASS[c]! & 2) !== 0 : c >= 128
}

/**
 * Whether a character code is an ASCII digit.
 *
 * @example
 * ```ts
 * isDigit('7'.charCodeAt(0)) // true
 * ```
 */
export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57
}
