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

/** A session's position after a write whose position could not be read: its reads go to the primary. */
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
 * - an `unknown` position (the writer could not read it) becomes such a sample of the primary.
 * Every rejection is counted (`TokenAudit`).
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
    return this.#serialize(session.lastWriteAt, session.positions)
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
    const { w, p } = data
    if (typeof w === 'number' && Number.isFinite(w) && w > 0) {
      const now = this.#now()
      if (w > now + MAX_CLOCK_SKEW_MS) this.#audit.reject('future-write')
      else session.lastWriteAt = Math.min(w, now)
    }
    if (this.#mode !== 'position' || typeof p !== 'object' || p === null) return session
    const since = this.#clock()
    for (const [cluster, position] of Object.entries(p)) {
      this.#restorePosition(session, cluster, position, data.signed, since)
    }
    return session
  }

  /** The payload of a token, or why it is rejected whole. */
  #verify(token: unknown): { w?: unknown; p?: unknown; signed: boolean } | TokenRejectionReason {
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
    const { w, p } = data as { w?: unknown; p?: unknown }
    if (p !== undefined && (typeof p !== 'object' || p === null || Array.isArray(p))) return 'malformed'
    if (p !== undefined && Object.keys(p).length > this.#clusters.size) return 'malformed'
    return { w, p, signed: signed && this.#signer !== undefined }
  }

  /** Puts one position of a token into `session`, if it is sound (see the class comment). */
  #restorePosition(session: Session, cluster: string, position: unknown, signed: boolean, since: number) {
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
      // The writer did not know its position: this session's reads of the cluster go to the
      // primary. (Resolving it from a shared sample of the primary taken after the token arrived
      // served stale replica reads through the Fastify plugin in 2–51 of 100 requests; until that
      // is understood, the primary is the only safe answer.)
      session.positions.set(cluster, UNKNOWN_POSITION)
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

  #serialize(w: number, positions: ReadonlyMap<string, string>): string {
    const p: Record<string, string> = {}
    for (const [k, v] of positions) p[k] = v
    const body = `${PREFIX}${Buffer.from(JSON.stringify({ w, p })).toString('base64url')}`
    return this.#signer === undefined ? body : `${body}.${this.#signer.sign(body)}`
  }
}
