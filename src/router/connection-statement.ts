import { keywordStart } from './sql-guard.js'

/**
 * What a statement sent on a driver-module look-alike connection (`routedPg`, `routedMysql2`)
 * means for that connection, which is not one physical connection but routes each statement by
 * its caller's scope:
 * - `begin`: opens a transaction (`BEGIN`, `START TRANSACTION`): the connection pins one physical
 *   connection, chosen by the caller's scope, until the transaction ends;
 * - `set-transaction`: `SET TRANSACTION ...` (MySQL sends it before `START TRANSACTION`): pins too;
 * - `end`: `COMMIT`, `ROLLBACK` (not `ROLLBACK TO`), `END`, `ABORT`: ends the pinned transaction;
 * - `session`: changes session state (`SET`, `RESET`, `DISCARD`, `LISTEN`, `PREPARE`, `USE`,
 *   `LOCK TABLES`...): the connection pins one physical connection for the rest of its life, which
 *   is closed (never pooled again) when it is released;
 * - `setup`: only sets what ORMs set on every new connection and routemate's connections already
 *   have or do not need (`client_min_messages`, `standard_conforming_strings`, the time zone):
 *   answered without being run, see the README;
 * - `other`: routed alone by the caller's scope.
 */
export type ConnectionStatementKind = 'begin' | 'set-transaction' | 'end' | 'session' | 'setup' | 'other'

const SESSION_VERBS = new Set([
  'SET',
  'RESET',
  'DISCARD',
  'LISTEN',
  'UNLISTEN',
  'PREPARE',
  'DEALLOCATE',
  'USE',
  'LOCK',
  'UNLOCK',
  'HANDLER',
  'XA',
])

/** Settings ORMs set on each new connection that a routed connection answers without running. */
const SETUP_SETTINGS = new Set([
  'CLIENT_MIN_MESSAGES',
  'STANDARD_CONFORMING_STRINGS',
  'TIME',
  'TIMEZONE',
  'TIME_ZONE',
])

function isWordChar(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || (c >= 48 && c <= 57)
}

/** The first `count` words of a statement from `start`, upper-cased (stops at anything else). */
function words(sql: string, start: number, count: number): string[] {
  const out: string[] = []
  let i = start
  while (out.length < count && i < sql.length) {
    while (i < sql.length && /\s/.test(sql.charAt(i))) i++
    let j = i
    while (j < sql.length && isWordChar(sql.charCodeAt(j))) j++
    if (j === i) break
    out.push(sql.slice(i, j).toUpperCase())
    i = j
  }
  return out
}

/** Splits a text into its statements at `;` outside quotes (enough for the setup texts ORMs send). */
function statements(sql: string): string[] {
  const out: string[] = []
  let quote = 0
  let from = 0
  for (let i = 0; i < sql.length; i++) {
    const c = sql.charCodeAt(i)
    if (quote !== 0) {
      if (c === quote) quote = 0
    } else if (c === 39 || c === 34 || c === 96) quote = c
    else if (c === 59) {
      out.push(sql.slice(from, i))
      from = i + 1
    }
  }
  out.push(sql.slice(from))
  return out.filter((s) => s.trim() !== '')
}

function kindOfOne(sql: string): ConnectionStatementKind {
  const w = words(sql, keywordStart(sql), 4)
  const verb = w[0] ?? ''
  if (verb === 'BEGIN') return 'begin'
  if (verb === 'START') return w[1] === 'TRANSACTION' ? 'begin' : 'other'
  if (verb === 'COMMIT' || verb === 'END' || verb === 'ABORT') return 'end'
  if (verb === 'ROLLBACK') {
    const next = w[1] === 'WORK' || w[1] === 'TRANSACTION' ? w[2] : w[1]
    return next === 'TO' ? 'other' : 'end'
  }
  if (verb === 'SET') {
    if (w[1] === 'TRANSACTION') return 'set-transaction'
    if (w[1] === 'LOCAL') return 'other' // lasts until the end of the (pinned) transaction
    const name = w[1] === 'SESSION' ? w[2] : w[1]
    if (name !== undefined && SETUP_SETTINGS.has(name)) {
      if (name === 'TIME') return (w[1] === 'SESSION' ? w[3] : w[2]) === 'ZONE' ? 'setup' : 'session'
      return 'setup'
    }
    return 'session'
  }
  if (verb === 'CREATE' && (w[1] === 'TEMP' || w[1] === 'TEMPORARY')) return 'session'
  return SESSION_VERBS.has(verb) ? 'session' : 'other'
}

/**
 * Classifies a statement sent on a driver-module look-alike connection: see
 * {@link ConnectionStatementKind}. A text of several statements is `setup` only when every one is;
 * otherwise its first statement decides, and one that changes session state makes it `session`.
 *
 * @example
 * ```ts
 * connectionStatementKind('START TRANSACTION') // 'begin'
 * connectionStatementKind("SET client_min_messages TO warning;SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE;") // 'setup'
 * connectionStatementKind('SET search_path TO app') // 'session'
 * ```
 */
export function connectionStatementKind(sql: string): ConnectionStatementKind {
  const parts = statements(sql)
  if (parts.length <= 1) return kindOfOne(sql)
  const kinds = parts.map(kindOfOne)
  if (kinds.every((k) => k === 'setup')) return 'setup'
  if (kinds.some((k) => k === 'session' || k === 'setup')) return 'session'
  return kinds[0] as ConnectionStatementKind
}
