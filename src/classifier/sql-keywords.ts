/**
 * The keywords the statement classifier acts on, as small integers (`0`: not one of them). Words
 * after `SHOW` that mysql may answer from a replica have ids from {@link SHOW_TARGETS_FROM} on.
 *
 * @example
 * ```ts
 * keywordAt('select 1', 0, 6) === Keyword.SELECT // true
 * ```
 */
export const Keyword = {
  NONE: 0,
  SELECT: 1,
  WITH: 2,
  VALUES: 3,
  TABLE: 4,
  SHOW: 5,
  EXPLAIN: 6,
  DESCRIBE: 7,
  DESC: 8,
  ANALYZE: 9,
  ANALYSE: 10,
  VERBOSE: 11,
  EXTENDED: 12,
  PARTITIONS: 13,
  FORMAT: 14,
  FULL: 15,
  FOR: 16,
  SHARE: 17,
  NO: 18,
  KEY: 19,
  LOCK: 20,
  IN: 21,
  INTO: 22,
  INSERT: 23,
  UPDATE: 24,
  DELETE: 25,
  MERGE: 26,
  NEXT: 27,
  PREVIOUS: 28,
  VALUE: 29,
  AS: 30,
  MATERIALIZED: 31,
  SQL_CALC_FOUND_ROWS: 32,
  UESCAPE: 33,
  // mysql SHOW targets that describe schema objects (same on every node); keep them last.
  TABLES: 100,
  COLUMNS: 101,
  FIELDS: 102,
  INDEX: 103,
  INDEXES: 104,
  KEYS: 105,
  DATABASES: 106,
  SCHEMAS: 107,
  CREATE: 108,
  CHARACTER: 109,
  CHARSET: 110,
  COLLATION: 111,
  ENGINES: 112,
  PLUGINS: 113,
  PRIVILEGES: 114,
  GRANTS: 115,
  TRIGGERS: 116,
  EVENTS: 117,
  FUNCTION: 118,
  PROCEDURE: 119,
} as const

/** One of the {@link Keyword} values. */
export type Keyword = (typeof Keyword)[keyof typeof Keyword]

/**
 * Keyword ids from this one on are mysql `SHOW` targets answered alike by every node (`TABLE` is one
 * too, as in `SHOW TABLE STATUS`).
 *
 * @example
 * ```ts
 * const safe = kw >= SHOW_TARGETS_FROM || kw === Keyword.TABLE
 * ```
 */
export const SHOW_TARGETS_FROM = 100

/**
 * Keywords by slot `length * 32 + (first char & 31)` (the low five bits are the same for a letter
 * in either case): upper-case spellings and, at the same index, their ids. Most words land on an
 * empty slot and cost one load.
 */
const NAMES_BY_SLOT: string[][] = []
const IDS_BY_SLOT: Keyword[][] = []
const MAX_LENGTH = 19
for (const [name, id] of Object.entries(Keyword)) {
  if (id === Keyword.NONE) continue
  const slot = name.length * 32 + (name.charCodeAt(0) & 31)
  const names = NAMES_BY_SLOT[slot] ?? []
  const ids = IDS_BY_SLOT[slot] ?? []
  names.push(name)
  ids.push(id)
  NAMES_BY_SLOT[slot] = names
  IDS_BY_SLOT[slot] = ids
}
for (let slot = 0; slot < (MAX_LENGTH + 1) * 32; slot++) {
  if (NAMES_BY_SLOT[slot] === undefined) NAMES_BY_SLOT[slot] = [] // packed, no holes
}

/**
 * The {@link Keyword} spelled by `sql[start, end)` in any letter case, or `Keyword.NONE`.
 * Allocation-free: compares character codes against the keywords of that length and first letter.
 *
 * @example
 * ```ts
 * keywordAt('x For update', 2, 5) // Keyword.FOR
 * ```
 */
export function keywordAt(sql: string, start: number, end: number): Keyword {
  const len = end - start
  if (len > MAX_LENGTH) return Keyword.NONE
  const slot = len * 32 + (sql.charCodeAt(start) & 31)
  const names = NAMES_BY_SLOT[slot]!
  outer: for (let e = 0; e < names.length; e++) {
    const name = names[e]!
    for (let k = 0; k < len; k++) {
      if (upper(sql.charCodeAt(start + k)) !== name.charCodeAt(k)) continue outer
    }
    return IDS_BY_SLOT[slot]![e]!
  }
  return Keyword.NONE
}

function upper(c: number): number {
  return c >= 97 && c <= 122 ? c - 32 : c
}
