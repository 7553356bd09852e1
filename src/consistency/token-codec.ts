import { randomBytes } from 'node:crypto'
import type { PrimaryPosition } from './primary-position.js'
import { Session } from './session.js'
import type { TokenAudit, TokenRejectionReason } from './token-audit.js'
import { TokenSigner } from './token-signer.js'

/** Longest token accepted, in characters (a session token of a few shards is well under 1 KiB). */
export const MAX_TOKEN_CHARS = 8192

/** Longest position accepted in a token. */
const MAX_POSITION_CHARS = 4096

/** How far ahead of the router's clock a token's write time may be (clock skew between instances). */
export const MAX_CLOCK_SKEW_MS = 1000

/**
 * A session's position after a write whose position is not known yet (PostgreSQL: it is read
 * lazily, see `PrimaryPosition.afterWrite`), or could not be read (its reads then go to the primary).
 */
export const UNKNOWN_POSITION = 'unknown'

const PREFIX = 'rm1.'

/** What a codec needs to know of the router. */
export interface TokenCodecOptions {
  /** Which parts of a token route reads: `window` uses the write time, `position` the positions, `off` nothing. */
  readonly mode: 'off' | 'window' | 'position'
  /** `tokens.secret`: the keys (the first signs, all verify); empty = unsigned tokens. */
  readonly keys: readonly string[]
  /** Each cluster's knowledge of its primary's position, by cluster name. */
  readonly clusters: ReadonlyMap<string, PrimaryPosition>
  /** The driver's `positionReached`. */
  readonly reached: (replay: string, target: string) => boolean
  /** Counts tokens and rejections. */
  readonly audit: TokenAudit
  /** Wall clock in ms (write times). Default: `Date.now`. */
  readonly now?: () => number
  /** Monotonic clock in ms, the one the clusters' `PrimaryPosition`s use. Default: `performance.now`. */
  readonly clock?: () => number
}

/**
 * Turns sessions into consistency tokens and back, never trusting a token: a token can make a
 * session's reads fresher, never send them to the primary for longer than the primary really
 * needs, and never misroute a write.
 *
 * Format: `rm1.<base64url JSON {w, p}>`, and with `tokens.secret` `.<key id>.<HMAC-SHA256>`.
 * Decoding:
 * - with a secret, a token without a valid signature of an accepted key is ignored whole;
 * - bounded: at most {@link MAX_TOKEN_CHARS} characters and one position per configured cluster;
 * - the write time `w` is clamped to now; one further ahead than {@link MAX_CLOCK_SKEW_MS} is
 *   dropped (a forged `1e300` would otherwise hold a `window` session on the primary forever);
 * - positions of unknown clusters, and positions the driver cannot parse, are dropped;
 * - a position the primary is known to have reached (probes, own writes) is kept; any other one
 *   (unless signed) is checked before the session's first read of that cluster against a sample
 *   of the primary taken after the token arrived, and dropped if the primary has not reached it;
 * - an `unknown` position (the writer had not read it yet) becomes the primary's position read by
 *   a sample that started after the write finished: the token's write stamp `s` tells which
 *   samples of this router qualify when the token comes back to the router that made it (`i`, a
 *   random id per router; usually the sample is done by then: no wait, no query); from another
 *   router, a sample taken after the token arrived (the write had finished before the token was
 *   sent). Samples are shared and spaced (`PrimaryPosition`), so forged stamps cost the primary
 *   at most one sample at a time. Until it is known, and if it cannot be read, reads go to the
 *   primary.
 * Every rejection is counted (`TokenAudit`).
 *
 * Encoding: a position still to be read after a write (`Session.pendingWrites`) goes into the
 * token as the position of the last finished sample if that one started after the write;
 * otherwise as `unknown` with the write's stamp, and a (shared, spaced) sample is started so that
 * it is known when the token comes back.
 *
 * @example
 * ```ts
 * const token = codec.encode(session)   // 'rm1.eyJ3IjoxNzAwMDAwMDAwMDAwLCJwIjp7...'
 * const resumed = codec.decode(token)   // validated; an empty session for garbage
 * ```
 */
export class TokenCodec {
  readonly #mode: TokenCodecOptions['mode']
  readonly #signer: TokenSigner | undefined
  readonly #clusters: ReadonlyMap<string, PrimaryPosition>
  readonly #reached: (replay: string, target: string) => boolean
  readonly #audit: TokenAudit
  readonly #now: () => number
  readonly #clock: () => number
  /** The token of a session that never wrote (computed once). */
  readonly #empty: string
  /** This codec's id in tokens (`i`): write stamps in a token are this router's only when it matches. */
  readonly #id = randomBytes(9).toString('base64url')

  constructor(options: TokenCodecOptions) {
    this.#mode = options.mode
    this.#signer = options.keys.length > 0 ? new TokenSigner(options.keys) : undefined
    this.#clusters = options.clusters
    this.#reached = options.reached
    this.#audit = options.audit
    this.#now = options.now ?? Date.now
    this.#clock = options.clock ?? (() => performance.now())
    this.#empty = this.#serialize(0, new Map())
  }

  /**
   * The session's token. Until the session writes, the token it was resumed from (so a request
   * that only reads sends nothing new); a new session that never wrote has a constant token.
   */
  encode(session: Session): string {
    if (session.writes === 0) {
      if (session.origin !== undefined) return session.origin
      if (session.lastWriteAt === 0 && session.positions.size === 0) return this.#empty
    }
    let p = session.positions
    let stamps: Record<string, number> | undefined
    for (const [cluster, stamp] of session.pendingWrites) {
      if (session.positions.get(cluster) !== UNKNOWN_POSITION) continue
      const known = this.#clusters.get(cluster)
      if (known === undefined) continue
      const sampled = known.positionAfter(stamp)
      if (p === session.positions) p = new Map(p)
      if (sampled !== undefined) {
        p.set(cluster, sampled)
        continue
      }
      if (stamps === undefined) stamps = {}
      stamps[cluster] = stamp
      void known.afterWrite(stamp, false) // known by the time the token comes back (never rejects)
    }
    return this.#serialize(session.lastWriteAt, p, stamps)
  }

  /**
   * A session resumed from `token` (an empty one when there is none, or when it is rejected).
   * Never throws.
   */
  decode(token: unknown): Session {
    const session = new Session()
    if (token === undefined || token === null || token === '') return session
    this.#audit.received()
    const data = this.#verify(token)
    if (typeof data === 'string') {
      this.#audit.reject(data)
      return session
    }
    session.origin = token as string
    if (this.#mode === 'off') return session
    const { w, p, s } = data
    if (typeof w === 'number' && Number.isFinite(w) && w > 0) {
      const now = this.#now()
      if (w > now + MAX_CLOCK_SKEW_MS) this.#audit.reject('future-write')
      else session.lastWriteAt = Math.min(w, now)
    }
    if (this.#mode !== 'position' || typeof p !== 'object' || p === null) return session
    const since = this.#clock()
    const stamps =
      data.i === this.#id && typeof s === 'object' && s !== null ? (s as Record<string, unknown>) : {}
    for (const [cluster, position] of Object.entries(p)) {
      this.#restorePosition(session, cluster, position, data.signed, since, stamps[cluster])
    }
    return session
  }

  /** The payload of a token, or why it is rejected whole. */
  #verify(
    token: unknown,
  ): { w?: unknown; p?: unknown; s?: unknown; i?: unknown; signed: boolean } | TokenRejectionReason {
    if (typeof token !== 'string') return 'malformed'
    if (token.length > MAX_TOKEN_CHARS) return 'oversized'
    if (!token.startsWith(PREFIX)) return 'malformed'
    const parts = token.split('.')
    if (parts.length !== 2 && parts.length !== 4) return 'malformed'
    const payload = parts[1] as string
    const signed = parts.length === 4
    if (this.#signer !== undefined) {
      if (!signed) return 'unsigned'
      const kid = parts[2] as string
      if (!this.#signer.verify(`${PREFIX}${payload}`, kid, parts[3] as string)) return 'bad-signature'
    }
    let data: unknown
    try {
      data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    } catch {
      return 'malformed'
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return 'malformed'
    const { w, p, s, i } = data as { w?: unknown; p?: unknown; s?: unknown; i?: unknown }
    if (p !== undefined && (typeof p !== 'object' || p === null || Array.isArray(p))) return 'malformed'
    if (p !== undefined && Object.keys(p).length > this.#clusters.size) return 'malformed'
    return { w, p, s, i, signed: signed && this.#signer !== undefined }
  }

  /** Puts one position of a token into `session`, if it is sound (see the class comment). */
  #restorePosition(
    session: Session,
    cluster: string,
    position: unknown,
    signed: boolean,
    since: number,
    stamp: unknown,
  ) {
    const known = this.#clusters.get(cluster)
    if (known === undefined) {
      this.#audit.reject('unknown-cluster')
      return
    }
    if (typeof position !== 'string' || position.length > MAX_POSITION_CHARS) {
      this.#audit.reject('bad-position')
      return
    }
    if (position === UNKNOWN_POSITION) {
      // The writer had not read its position yet: any sample of the primary that started after
      // the write finished has it. A stamp of this router's (a write it stamped) says which ones
      // do; else one taken after the token arrived (the write had finished before it was sent).
      const own =
        typeof stamp === 'number' && Number.isInteger(stamp) && stamp > 0 && stamp <= known.writesStamped
          ? stamp
          : undefined
      const sampled = own === undefined ? undefined : known.positionAfter(own)
      if (sampled !== undefined) {
        session.positions.set(cluster, sampled)
        return
      }
      session.positions.set(cluster, UNKNOWN_POSITION)
      session.addCheck(cluster, async () => {
        const sample = await (own === undefined ? known.sampleAfter(since) : known.afterWrite(own, false))
        // (Not after a write of this session: its own position, or its own `unknown`, is newer.)
        if (sample !== undefined && session.writes === 0) session.positions.set(cluster, sample)
      })
      return
    }
    if (!this.#reached(position, position)) {
      this.#audit.reject('bad-position') // not a position of this driver's dialect
      return
    }
    session.positions.set(cluster, position)
    if (signed || known.covers(position)) return
    session.addCheck(cluster, async () => {
      const sample = await known.sampleAfter(since)
      // No sample (primary unavailable): the position cannot be disproved; it stays (safe for reads).
      if (sample === undefined || this.#reached(sample, position)) return
      if (session.positions.get(cluster) === position) session.positions.delete(cluster)
      this.#audit.reject('ahead-of-primary')
    })
  }

  #serialize(w: number, positions: ReadonlyMap<string, string>, s?: Record<string, number>): string {
    const p: Record<string, string> = {}
    for (const [k, v] of positions) p[k] = v
    const data = s === undefined ? { w, p } : { w, p, s, i: this.#id }
    const body = `${PREFIX}${Buffer.from(JSON.stringify(data)).toString('base64url')}`
    return this.#signer === undefined ? body : `${body}.${this.#signer.sign(body)}`
  }
}
