/** One inclusive interval of transaction numbers of a MySQL GTID set. */
type Interval = readonly [start: bigint, end: bigint]

/** A parsed MariaDB GTID position: replication domain id -> highest sequence number (server ids dropped). */
type MariaDbPosition = ReadonlyMap<number, bigint>

/** A parsed MySQL GTID set: `uuid` or `uuid:tag` (lowercase) -> sorted, merged intervals. */
type MysqlGtidSet = ReadonlyMap<string, readonly Interval[]>

/** Which server family wrote a GTID position. */
export type GtidFormat = 'mariadb' | 'mysql'

const MARIADB_GTID = /^(\d{1,10})-(\d{1,10})-(\d{1,20})$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const INTERVAL = /^(\d{1,19})(?:-(\d{1,19}))?$/
const TAG = /^[a-z_][a-z0-9_]{0,31}$/
const WHITESPACE = /\s+/g

/**
 * Tells the format of a GTID position from its text: MySQL GTID sets contain `:`
 * (`uuid:1-5`), MariaDB positions do not (`0-1-42`). `undefined` for an empty position.
 *
 * @example
 * ```ts
 * gtidFormat('0-1-42') // 'mariadb'
 * gtidFormat('3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5') // 'mysql'
 * ```
 */
export function gtidFormat(position: string): GtidFormat | undefined {
  const s = position.replace(WHITESPACE, '')
  if (s === '') return undefined
  return s.includes(':') ? 'mysql' : 'mariadb'
}

/**
 * Parses a MariaDB GTID position (`@@gtid_binlog_pos`, `@@gtid_slave_pos`): a comma-separated list
 * of `domain-server-seq`. Whitespace is ignored. Returns domain -> sequence number (the highest one
 * when a domain repeats), or `undefined` when the text is not a MariaDB position. `''` is the empty
 * position.
 *
 * @example
 * ```ts
 * parseMariaDbPosition('0-1-42,1-2-7') // Map { 0 => 42n, 1 => 7n }
 * ```
 */
export function parseMariaDbPosition(position: string): MariaDbPosition | undefined {
  const s = position.replace(WHITESPACE, '')
  const out = new Map<number, bigint>()
  if (s === '') return out
  for (const part of s.split(',')) {
    const m = MARIADB_GTID.exec(part)
    if (m === null) return undefined
    const domain = Number(m[1])
    const seq = BigInt(m[3] as string)
    const prev = out.get(domain)
    if (prev === undefined || seq > prev) out.set(domain, seq)
  }
  return out
}

/**
 * Parses a MySQL GTID set (`@@gtid_executed`): `uuid:1-5:7,uuid2:1-3`, with MySQL 8.3 tags
 * (`uuid:1-5:tag:1-2`). UUIDs and tags are compared lowercase; whitespace (MySQL prints a newline
 * after each comma) is ignored; intervals are sorted and merged. `undefined` when the text is not a
 * GTID set; `''` is the empty set.
 *
 * @example
 * ```ts
 * parseMysqlGtidSet('3E11FA47-71CA-11E1-9E33-C80AA9429562:1-3:4-5')
 * // Map { '3e11fa47-71ca-11e1-9e33-c80aa9429562' => [[1n, 5n]] }
 * ```
 */
export function parseMysqlGtidSet(set: string): MysqlGtidSet | undefined {
  const s = set.replace(WHITESPACE, '').toLowerCase()
  const raw = new Map<string, Interval[]>()
  if (s === '') return raw
  for (const entry of s.split(',')) {
    const parts = entry.split(':')
    const uuid = parts[0] as string
    if (!UUID.test(uuid) || parts.length < 2) return undefined
    let key = uuid
    for (let i = 1; i < parts.length; i++) {
      const p = parts[i] as string
      const m = INTERVAL.exec(p)
      if (m === null) {
        if (!TAG.test(p)) return undefined
        key = `${uuid}:${p}`
        continue
      }
      const start = BigInt(m[1] as string)
      const end = m[2] === undefined ? start : BigInt(m[2])
      if (start < 1n || end < start) return undefined
      const list = raw.get(key)
      if (list === undefined) raw.set(key, [[start, end]])
      else list.push([start, end])
    }
  }
  const out = new Map<string, readonly Interval[]>()
  for (const [key, list] of raw) out.set(key, mergeIntervals(list))
  return out
}

function mergeIntervals(list: Interval[]): Interval[] {
  list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  const out: [bigint, bigint][] = []
  for (const [start, end] of list) {
    const last = out[out.length - 1]
    if (last !== undefined && start <= last[1] + 1n) {
      if (end > last[1]) last[1] = end
    } else {
      out.push([start, end])
    }
  }
  return out
}

// Positions repeat a lot (a replica's position between probes, a session token across reads):
// parse each distinct text once. Bounded; cleared when full.
const CACHE_LIMIT = 512
const mariaCache = new Map<string, MariaDbPosition | null>()
const mysqlCache = new Map<string, MysqlGtidSet | null>()

function cached<T>(cache: Map<string, T | null>, text: string, parse: (t: string) => T | undefined) {
  let v = cache.get(text)
  if (v === undefined) {
    if (cache.size >= CACHE_LIMIT) cache.clear()
    v = parse(text) ?? null
    cache.set(text, v)
  }
  return v
}

function mariaDbReached(replay: MariaDbPosition, target: MariaDbPosition): boolean {
  for (const [domain, seq] of target) {
    const have = replay.get(domain)
    if (have === undefined || have < seq) return false
  }
  return true
}

function mysqlReached(replay: MysqlGtidSet, target: MysqlGtidSet): boolean {
  for (const [key, wanted] of target) {
    const have = replay.get(key)
    if (have === undefined) return false
    // Both lists are sorted and merged: one forward pass.
    let j = 0
    for (const [start, end] of wanted) {
      while (j < have.length && (have[j] as Interval)[1] < start) j++
      const h = have[j]
      if (h === undefined || h[0] > start || h[1] < end) return false
    }
  }
  return true
}

/**
 * Whether replica position `replay` has reached primary position `target`, for both GTID formats
 * (detected from the text):
 * - MariaDB (`domain-server-seq,...`): every domain of `target` is in `replay` with a sequence
 *   number at least as high. Server ids are ignored (a failover keeps numbering within a domain).
 * - MySQL (`uuid:1-5:7-9,...`, tags included): the `target` set is a subset of the `replay` set.
 *
 * An empty `target` is never reached: the router stores `''` as the token of a session whose
 * position is unknown (`positionAfterWrite` failed, or the server has no GTIDs: MySQL with
 * `gtid_mode=OFF`, MariaDB without a binary log), and such a session must read from the primary.
 * (The probe reports no position for a primary whose GTID position is empty, so an empty position
 * never becomes a lag sample.) Unparsable input, or two different formats, never counts as reached
 * either. Whitespace and UUID case do not matter.
 *
 * @example
 * ```ts
 * gtidReached('0-1-10,1-1-5', '0-2-9') // true
 * gtidReached('3e11fa47-71ca-11e1-9e33-c80aa9429562:1-9', '3E11FA47-71CA-11E1-9E33-C80AA9429562:3-5') // true
 * ```
 */
export function gtidReached(replay: string, target: string): boolean {
  // Fast path (per write and per read in position mode): two single, canonical MariaDB GTIDs.
  const targetDashes = singleGtidDashes(target)
  if (targetDashes >= 0) {
    const replayDashes = singleGtidDashes(replay)
    if (replayDashes >= 0) return singleGtidReached(replay, replayDashes, target, targetDashes)
  }
  const format = gtidFormat(target)
  if (format === undefined) return false
  if (format === 'mariadb') {
    if (replay.includes(':')) return false
    const t = cached(mariaCache, target, parseMariaDbPosition)
    const r = cached(mariaCache, replay, parseMariaDbPosition)
    return t !== null && r !== null && mariaDbReached(r, t)
  }
  const t = cached(mysqlCache, target, parseMysqlGtidSet)
  if (t === null) return false
  if (gtidFormat(replay) === 'mariadb') return false
  const r = cached(mysqlCache, replay, parseMysqlGtidSet)
  return r !== null && mysqlReached(r, t)
}

/**
 * For one canonical MariaDB GTID (`domain-server-seq`: digits only, domain and sequence number
 * without leading zeros, within the lengths `parseMariaDbPosition` takes), its two dashes' indices
 * as `first * 64 + second`; else -1 (anything else goes through the general parse).
 */
function singleGtidDashes(s: string): number {
  const n = s.length
  if (n < 5 || n > 42) return -1
  let first = -1
  let second = -1
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i)
    if (c === 45) {
      if (first < 0) first = i
      else if (second < 0) second = i
      else return -1
    } else if (c < 48 || c > 57) return -1
  }
  if (second < 0) return -1
  const domainLen = first
  const serverLen = second - first - 1
  const seqLen = n - second - 1
  if (domainLen < 1 || domainLen > 10 || serverLen < 1 || serverLen > 10 || seqLen < 1 || seqLen > 20)
    return -1
  if (domainLen > 1 && s.charCodeAt(0) === 48) return -1
  if (seqLen > 1 && s.charCodeAt(second + 1) === 48) return -1
  return first * 64 + second
}

/** `gtidReached` for two canonical single GTIDs (see {@link singleGtidDashes}): same domain, sequence number at least as high. */
function singleGtidReached(replay: string, r: number, target: string, t: number): boolean {
  const first = r >> 6
  if (first !== t >> 6) return false
  for (let i = 0; i < first; i++) if (replay.charCodeAt(i) !== target.charCodeAt(i)) return false
  const rSeq = (r & 63) + 1
  const tSeq = (t & 63) + 1
  const rLen = replay.length - rSeq
  const tLen = target.length - tSeq
  if (rLen !== tLen) return rLen > tLen
  for (let i = 0; i < rLen; i++) {
    const a = replay.charCodeAt(rSeq + i)
    const b = target.charCodeAt(tSeq + i)
    if (a !== b) return a > b
  }
  return true
}

/** One MariaDB GTID as text parts: the server id is kept for printing, only domain and seq compare. */
interface MariaDbGtid {
  readonly server: string
  readonly seq: bigint
}

function parseMariaDbGtids(position: string): Map<number, MariaDbGtid> | undefined {
  const s = position.replace(WHITESPACE, '')
  const out = new Map<number, MariaDbGtid>()
  if (s === '') return out
  for (const part of s.split(',')) {
    const m = MARIADB_GTID.exec(part)
    if (m === null) return undefined
    const domain = Number(m[1])
    const seq = BigInt(m[3] as string)
    const prev = out.get(domain)
    if (prev === undefined || seq > prev.seq) out.set(domain, { server: m[2] as string, seq })
  }
  return out
}

function formatMysqlGtidSet(set: MysqlGtidSet): string {
  const parts: string[] = []
  for (const [key, intervals] of set) {
    let text = key
    for (const [start, end] of intervals) text += start === end ? `:${start}` : `:${start}-${end}`
    parts.push(text)
  }
  return parts.join(',')
}

/**
 * Merges two GTID positions of one primary into the smallest one that is reached exactly when
 * both are: MariaDB, per replication domain the higher sequence number (`0-1-5` + `1-1-3` =
 * `0-1-5,1-1-3`; `0-1-5` + `0-1-9` = `0-1-9`); MySQL, the union of the two GTID sets. Used to
 * gather a session's own GTIDs (as the server reports them with each write's reply) into one
 * read-your-writes position. `undefined` when either is not a position, or they are of two formats.
 *
 * @example
 * ```ts
 * mergeGtidPositions('0-1-5,1-2-7', '0-1-9') // '0-1-9,1-2-7'
 * mergeGtidPositions('3e11fa47-71ca-11e1-9e33-c80aa9429562:1-3', '3e11fa47-71ca-11e1-9e33-c80aa9429562:5')
 * // '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-3:5'
 * ```
 */
export function mergeGtidPositions(a: string, b: string): string | undefined {
  const fa = gtidFormat(a)
  const fb = gtidFormat(b)
  if (fa === undefined) return fb === undefined ? undefined : b.replace(WHITESPACE, '')
  if (fb === undefined) return a.replace(WHITESPACE, '')
  if (fa !== fb) return undefined
  if (fa === 'mariadb') {
    const pa = parseMariaDbGtids(a)
    const pb = parseMariaDbGtids(b)
    if (pa === undefined || pb === undefined) return undefined
    for (const [domain, g] of pb) {
      const have = pa.get(domain)
      if (have === undefined || g.seq > have.seq) pa.set(domain, g)
    }
    return [...pa].map(([domain, g]) => `${domain}-${g.server}-${g.seq}`).join(',')
  }
  const sa = parseMysqlGtidSet(a)
  const sb = parseMysqlGtidSet(b)
  if (sa === undefined || sb === undefined) return undefined
  const out = new Map<string, readonly Interval[]>()
  for (const [key, list] of sa) out.set(key, list)
  for (const [key, list] of sb) out.set(key, mergeIntervals([...(out.get(key) ?? []), ...list]))
  return formatMysqlGtidSet(out)
}
