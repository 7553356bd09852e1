const WRITE_VERBS = new Set([
  'INSERT',
  'UPDATE',
  'DELETE',
  'MERGE',
  'UPSERT',
  'REPLACE',
  'CREATE',
  'ALTER',
  'DROP',
  'TRUNCATE',
  'RENAME',
  'GRANT',
  'REVOKE',
  'COMMENT',
  'VACUUM',
  'REINDEX',
  'CLUSTER',
  'REFRESH',
  'LOCK',
  'LOAD',
  'IMPORT',
  'OPTIMIZE',
  'REPAIR',
  'ANALYZE',
  'SECURITY',
  'REASSIGN',
])

function isWordChar(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95
}

/**
 * The statement's leading keyword, upper-cased, after whitespace, comments (`--`, `#`, nested
 * block comments) and opening parentheses; `''` when there is none. Allocates only the keyword.
 *
 * @example
 * ```ts
 * leadingKeyword('/* hi *\/ (select 1)') // 'SELECT'
 * ```
 */
export function leadingKeyword(sql: string): string {
  const i = keywordStart(sql)
  let j = i
  while (j < sql.length && isWordChar(sql.charCodeAt(j))) j++
  return sql.slice(i, j).toUpperCase()
}

/** Whether the block comment at `i` is a MySQL/MariaDB executable comment (`/*!`, `/*M!`). */
function isExecutableComment(sql: string, i: number): boolean {
  const c = sql.charCodeAt(i + 2)
  return c === 33 /* ! */ || ((c === 77 || c === 109) /* M */ && sql.charCodeAt(i + 3) === 33)
}

/** Index of the first keyword character, after whitespace, comments and opening parentheses. */
export function keywordStart(sql: string): number {
  const n = sql.length
  let i = 0
  while (i < n) {
    const c = sql.charCodeAt(i)
    if (c === 32 || c === 9 || c === 10 || c === 13 || c === 40 /* ( */ || c === 12) {
      i++
    } else if (c === 45 /* - */ && sql.charCodeAt(i + 1) === 45) {
      while (i < n && sql.charCodeAt(i) !== 10) i++
    } else if (c === 35 /* # */) {
      while (i < n && sql.charCodeAt(i) !== 10) i++
    } else if (c === 47 /* / */ && sql.charCodeAt(i + 1) === 42 /* * */) {
      if (isExecutableComment(sql, i)) {
        // MySQL/MariaDB run the text of `/*! ... */` and `/*M! ... */`: it is code, not a comment.
        i += sql.charCodeAt(i + 2) === 33 ? 3 : 4
        while (i < n && sql.charCodeAt(i) >= 48 && sql.charCodeAt(i) <= 57) i++
        continue
      }
      let depth = 1
      i += 2
      while (i < n && depth > 0) {
        if (sql.charCodeAt(i) === 47 && sql.charCodeAt(i + 1) === 42) {
          depth++
          i += 2
        } else if (sql.charCodeAt(i) === 42 && sql.charCodeAt(i + 1) === 47) {
          depth--
          i += 2
        } else i++
      }
    } else break
  }
  return i
}

/**
 * Upper-case keywords (letters only) by length and first letter (`length * 32 + (letter & 31)`),
 * for an allocation-free, case-insensitive match (see {@link matchKeyword}).
 */
export type KeywordTable = ReadonlyArray<readonly string[] | undefined>

/**
 * Builds a {@link KeywordTable} from upper-case keywords made of letters.
 *
 * @example
 * ```ts
 * const table = keywordTable(['CALL', 'DO'])
 * matchKeyword('call p()', 0, 4, table) // 'CALL'
 * ```
 */
export function keywordTable(words: Iterable<string>): KeywordTable {
  const table: Array<string[] | undefined> = []
  for (const w of words) {
    const key = w.length * 32 + (w.charCodeAt(0) & 31)
    const list = table[key] ?? []
    list.push(w)
    table[key] = list
  }
  return table
}

function matchesAt(sql: string, start: number, verb: string): boolean {
  for (let k = 1; k < verb.length; k++) {
    const c = sql.charCodeAt(start + k) & ~32 // ASCII upper-case
    if (c !== verb.charCodeAt(k)) return false
  }
  return true
}

/**
 * The keyword of `table` that the word `sql[i, j)` is (case-insensitive), or `undefined`. Allocates
 * nothing: most words (SELECT, WITH, SHOW...) are told apart by their length and first letter.
 *
 * @example
 * ```ts
 * matchKeyword('set x = 1', 0, 3, keywordTable(['SET'])) // 'SET'
 * ```
 */
export function matchKeyword(sql: string, i: number, j: number, table: KeywordTable): string | undefined {
  if (j <= i) return undefined
  const candidates = table[(j - i) * 32 + (sql.charCodeAt(i) & 31)]
  if (candidates === undefined) return undefined
  for (let k = 0; k < candidates.length; k++) {
    const word = candidates[k] as string
    if (matchesAt(sql, i, word)) return word
  }
  return undefined
}

/**
 * The end of the word starting at `i` (letters and `_`, as {@link leadingKeyword} reads it).
 *
 * @example
 * ```ts
 * wordEnd('SELECT 1', 0) // 6
 * ```
 */
export function wordEnd(sql: string, i: number): number {
  let j = i
  while (j < sql.length && isWordChar(sql.charCodeAt(j))) j++
  return j
}

/** Write verbs by shape, for {@link isEvidentWriteAt}. */
const VERBS_BY_SHAPE = keywordTable(WRITE_VERBS)

/**
 * Whether a statement is an evident write: its leading keyword is INSERT, UPDATE, DELETE, MERGE,
 * REPLACE, DDL (CREATE/ALTER/DROP/TRUNCATE...), GRANT/REVOKE, VACUUM, LOCK and the like. Such a
 * statement is rejected in a `readOnly` scope before it is sent. A write that is not evident (a
 * data-modifying CTE, a function with side effects) is caught by the server instead: the replica,
 * or the read-only transaction the router opens on the primary.
 *
 * @example
 * ```ts
 * isEvidentWrite('  insert into t values (1)') // true
 * isEvidentWrite('WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x') // false: the server rejects it
 * ```
 */
export function isEvidentWrite(sql: string): boolean {
  return isEvidentWriteAt(sql, keywordStart(sql))
}

/** {@link isEvidentWrite} for a statement whose leading keyword starts at `i` (see `keywordStart`). */
export function isEvidentWriteAt(sql: string, i: number): boolean {
  return matchKeyword(sql, i, wordEnd(sql, i), VERBS_BY_SHAPE) !== undefined
}

/**
 * Whether `sql` holds more than one statement: a `;` followed by anything but whitespace, `;` and
 * comments. Conservative by design: a `;` inside a string literal counts too (pass values as
 * parameters instead), so a second statement is never missed. PostgreSQL's simple query protocol
 * (a statement without parameters) runs every statement of such a text; routemate refuses it in
 * read contexts.
 *
 * @example
 * ```ts
 * hasSecondStatement('SELECT 1;')             // false
 * hasSecondStatement('SELECT 1; COMMIT')      // true
 * hasSecondStatement("SELECT 'a;b'")          // true (conservative)
 * ```
 */
export function hasSecondStatement(sql: string): boolean {
  let i = sql.indexOf(';')
  if (i < 0) return false
  const n = sql.length
  while (i < n) {
    const c = sql.charCodeAt(i)
    if (c === 59 /* ; */ || c === 32 || c === 9 || c === 10 || c === 13 || c === 12) i++
    else if (c === 45 /* - */ && sql.charCodeAt(i + 1) === 45) {
      while (i < n && sql.charCodeAt(i) !== 10) i++
    } else if (c === 47 /* / */ && sql.charCodeAt(i + 1) === 42 && !isExecutableComment(sql, i)) {
      const end = sql.indexOf('*/', i + 2)
      if (end < 0) return true // unterminated: do not guess
      i = end + 2
    } else return true
  }
  return false
}
