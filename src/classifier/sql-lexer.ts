import { isDigit, isIdentPart, isIdentStart, TokenKind } from './sql-token.js'

/**
 * A single-pass SQL tokenizer for PostgreSQL and MySQL/MariaDB, reused from statement to statement
 * (it allocates nothing but the tag of a dollar quote): `reset(sql)`, then `next()` until `TokenKind.End`. Whitespace and
 * comments are skipped; a token is its kind and its `[start, end)` range in the text.
 *
 * Dialects: pg has nested block comments, dollar quotes, `E'...'` strings and `$1` parameters; mysql
 * has `#` comments, `-- ` comments only with a space after the dashes, flat block comments,
 * backticks, backslash escapes in `'...'` and `"..."`, and executable comments (`Opaque`).
 *
 * Caveat: whether a backslash escapes a quote depends on server settings (pg
 * `standard_conforming_strings`, mysql `NO_BACKSLASH_ESCAPES`). The lexer follows the default and
 * sets {@link ambiguous} when a string holds a backslash, so the caller can lex the text again with
 * `reset(sql, true)` (the other setting) and keep the more careful answer.
 *
 * @example
 * ```ts
 * const lx = new SqlLexer('postgres')
 * lx.reset("SELECT 'a' FROM t")
 * while (lx.next() !== TokenKind.End) console.log(lx.kind, lx.start, lx.end)
 * ```
 */
export class SqlLexer {
  readonly #mysql: boolean
  #sql = ''
  #pos = 0
  #otherEscapes = false
  #kind: TokenKind = TokenKind.End
  #start = 0
  #backslash = false
  #ambiguous = false

  constructor(dialect: 'postgres' | 'mysql') {
    this.#mysql = dialect === 'mysql'
  }

  /** Kind of the current token. */
  get kind(): TokenKind {
    return this.#kind
  }
  /** Start offset of the current token (its opening quote included). */
  get start(): number {
    return this.#start
  }
  /** End offset (exclusive) of the current token. */
  get end(): number {
    return this.#pos // the cursor rests right after the current token
  }
  /** Character code of the current `Punct` token. */
  get char(): number {
    return this.#sql.charCodeAt(this.#start)
  }
  /** Whether the current `Quoted` token holds a backslash (a pg `U&"..."` escape may hide its name). */
  get backslash(): boolean {
    return this.#backslash
  }
  /** Whether a string read so far holds a backslash, so its extent depends on server settings. */
  get ambiguous(): boolean {
    return this.#ambiguous
  }

  /** Starts over on `sql`. `otherEscapes` flips the backslash rule of plain strings (see the class doc). */
  reset(sql: string, otherEscapes = false): void {
    this.#sql = sql
    this.#pos = 0
    this.#otherEscapes = otherEscapes
    this.#kind = TokenKind.End
    this.#start = 0
    this.#ambiguous = false
  }

  /** Reads the next token and returns its kind; `End` (again and again) at the end of the text. */
  next(): TokenKind {
    const s = this.#sql
    const n = s.length
    let i = this.#pos
    let c = s.charCodeAt(i)
    while (c === 32) c = s.charCodeAt(++i)
    if ((c >= 9 && c <= 13) || c === 45 || c === 47 || c === 35) {
      i = this.#skipTrivia(i)
      if (i < 0) return this.#emit(TokenKind.Unterminated, n, n)
      c = s.charCodeAt(i)
    }
    const start = i
    this.#backslash = false
    if (isIdentStart(c) || (c === 36 && this.#mysql)) {
      while (++i < n && isIdentPart(s.charCodeAt(i)));
      if (i === start + 1 && (c | 32) === 101 /* e */ && s.charCodeAt(i) === 39 && !this.#mysql) {
        return this.#quoted(i, 39, true, false, TokenKind.String) // E'...': always backslash escapes
      }
      return this.#emit(TokenKind.Word, start, i)
    }
    return this.#other(c, start)
  }

  /** Every token but a word, at `start` (after trivia), whose first character is `c`. */
  #other(c: number, start: number): TokenKind {
    const s = this.#sql
    const n = s.length
    const i = start
    if (i >= n) return this.#emit(TokenKind.End, n, n)
    if (isDigit(c) || (c === 46 /* . */ && isDigit(s.charCodeAt(i + 1)))) return this.#number(start)
    switch (c) {
      case 39 /* ' */:
        return this.#quoted(start, 39, this.#mysql !== this.#otherEscapes, true, TokenKind.String)
      case 34 /* " */:
        if (this.#mysql) return this.#quoted(start, 34, !this.#otherEscapes, true, TokenKind.Quoted)
        return this.#quoted(start, 34, false, false, TokenKind.Quoted)
      case 96 /* ` */:
        if (this.#mysql) return this.#quoted(start, 96, false, false, TokenKind.Quoted)
        break
      case 36 /* $ */:
        return this.#dollar(start) // pg: in mysql `$` starts a word
      case 63 /* ? */:
        return this.#emit(TokenKind.Param, start, start + 1)
      case 47 /* / */:
        if (this.#mysql && s.charCodeAt(i + 1) === 42) return this.#emit(TokenKind.Opaque, i, n) // `/*!`, `/*M!`
        break
    }
    return this.#emit(TokenKind.Punct, start, start + 1)
  }

  #emit(kind: TokenKind, start: number, end: number): TokenKind {
    this.#kind = kind
    this.#start = start
    this.#pos = end
    return kind
  }

  /**
   * A run quoted by `q`, where `qq` stands for one `q`; with `bs`, a backslash escapes the next
   * character. `settingDependent`: a backslash in it makes the text {@link ambiguous}.
   */
  #quoted(start: number, q: number, bs: boolean, settingDependent: boolean, kind: TokenKind): TokenKind {
    const s = this.#sql
    const n = s.length
    let i = start + 1
    while (i < n) {
      const c = s.charCodeAt(i)
      if (c === q) {
        if (s.charCodeAt(i + 1) !== q) return this.#emit(kind, start, i + 1)
        i += 2
      } else if (c === 92 /* \\ */) {
        this.#backslash = true
        if (settingDependent) this.#ambiguous = true
        i += bs ? 2 : 1
      } else i++
    }
    return this.#emit(TokenKind.Unterminated, start, n)
  }

  /** pg: `$1` parameter, `$$...$$` or `$tag$...$tag$` string, else a lone `$`. */
  #dollar(start: number): TokenKind {
    const s = this.#sql
    let i = start + 1
    if (isDigit(s.charCodeAt(i))) {
      while (isDigit(s.charCodeAt(i))) i++
      return this.#emit(TokenKind.Param, start, i)
    }
    if (isIdentStart(s.charCodeAt(i))) {
      i++
      while (i < s.length && isIdentPart(s.charCodeAt(i)) && s.charCodeAt(i) !== 36) i++
    }
    if (s.charCodeAt(i) !== 36) return this.#emit(TokenKind.Punct, start, start + 1)
    const tag = s.slice(start, i + 1) // a small word: `$$` or `$tag$`
    const close = s.indexOf(tag, i + 1)
    if (close < 0) return this.#emit(TokenKind.Unterminated, start, s.length)
    return this.#emit(TokenKind.String, start, close + tag.length)
  }

  /** Digits, an optional fraction and exponent; anything after them starts the next token. */
  #number(start: number): TokenKind {
    const s = this.#sql
    let i = start
    while (isDigit(s.charCodeAt(i))) i++
    if (s.charCodeAt(i) === 46) {
      i++
      while (isDigit(s.charCodeAt(i))) i++
    }
    if ((s.charCodeAt(i) | 32) === 101) {
      const sign = s.charCodeAt(i + 1)
      const d = sign === 43 || sign === 45 ? i + 2 : i + 1
      if (isDigit(s.charCodeAt(d))) {
        i = d
        while (isDigit(s.charCodeAt(i))) i++
      }
    }
    return this.#emit(TokenKind.Number, start, i)
  }

  /**
   * Index of the next token after whitespace and comments; -1 for an unterminated block comment.
   * Stops before a mysql executable comment. Line comments end at `\n` or `\r`, which is never later
   * than the server ends them.
   */
  #skipTrivia(from: number): number {
    const s = this.#sql
    const n = s.length
    let i = from
    while (i < n) {
      const c = s.charCodeAt(i)
      if (c === 32 || (c >= 9 && c <= 13)) {
        i++
      } else if (
        (c === 45 && s.charCodeAt(i + 1) === 45 && (!this.#mysql || !(s.charCodeAt(i + 2) > 32))) ||
        (c === 35 /* # */ && this.#mysql)
      ) {
        while (i < n && s.charCodeAt(i) !== 10 && s.charCodeAt(i) !== 13) i++
      } else if (c === 47 && s.charCodeAt(i + 1) === 42) {
        if (this.#mysql) {
          const d = s.charCodeAt(i + 2)
          if (d === 33 /* ! */ || (d === 77 /* M */ && s.charCodeAt(i + 3) === 33)) return i
          const close = s.indexOf('*/', i + 2)
          if (close < 0) return -1
          i = close + 2
        } else {
          i = this.#skipNestedComment(i)
          if (i < 0) return -1
        }
      } else break
    }
    return i
  }

  /** pg block comments nest; returns the index after the outermost `*\/`, or -1. */
  #skipNestedComment(from: number): number {
    const s = this.#sql
    const n = s.length
    let depth = 1
    let i = from + 2
    while (i < n) {
      const c = s.charCodeAt(i)
      if (c === 47 && s.charCodeAt(i + 1) === 42) {
        depth++
        i += 2
      } else if (c === 42 && s.charCodeAt(i + 1) === 47) {
        i += 2
        if (--depth === 0) return i
      } else i++
    }
    return -1
  }
}
