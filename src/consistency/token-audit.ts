/**
 * Why a consistency token, or a part of one, was not used:
 * - `malformed`: not a token of ours (prefix, encoding, JSON, types, more clusters than configured);
 * - `oversized`: longer than a token can be;
 * - `unsigned`: a `tokens.secret` is set and the token has no signature;
 * - `bad-signature`: the signature is not one of an accepted key (altered, or another key);
 * - `future-write`: a write time ahead of the router's clock (beyond one second of skew);
 * - `unknown-cluster`: a position for a cluster (shard) this router does not have;
 * - `bad-position`: a position that is not one the driver understands;
 * - `ahead-of-primary`: a position the primary has not reached.
 * The first four reject the whole token (an empty session); the others drop that part only.
 */
export type TokenRejectionReason =
  | 'malformed'
  | 'oversized'
  | 'unsigned'
  | 'bad-signature'
  | 'future-write'
  | 'unknown-cluster'
  | 'bad-position'
  | 'ahead-of-primary'

/** The reasons, in a fixed order (for stats and reports). */
export const TOKEN_REJECTION_REASONS: readonly TokenRejectionReason[] = Object.freeze([
  'malformed',
  'oversized',
  'unsigned',
  'bad-signature',
  'future-write',
  'unknown-cluster',
  'bad-position',
  'ahead-of-primary',
])

/** Reasons that reject a whole token. */
const WHOLE: ReadonlySet<TokenRejectionReason> = new Set([
  'malformed',
  'oversized',
  'unsigned',
  'bad-signature',
])

/** Consistency tokens seen by a router (cumulative), as `router.stats().tokens` reports them. */
export interface TokenStats {
  /** Tokens a session was resumed from (`withConsistencyToken`, the HTTP integrations); absent ones not counted. */
  readonly received: number
  /** Tokens ignored whole (the session starts empty): malformed, oversized, unsigned, badly signed. */
  readonly rejected: number
  /** Parts of accepted tokens dropped: a future write time, a position of an unknown cluster, unparsable or not reached by the primary. */
  readonly ignored: number
  /** Every rejection and dropped part, by reason. */
  readonly reasons: Readonly<Record<TokenRejectionReason, number>>
}

/** A report of rejected tokens (the `token:rejected` event's payload). */
export interface TokenRejectionReport {
  /** Rejections and dropped parts since the previous report (this one's included). */
  readonly count: number
  /** The same, by reason (only the reasons seen). */
  readonly reasons: Readonly<Partial<Record<TokenRejectionReason, number>>>
}

/** The shortest time between two reports, in ms. */
export const TOKEN_REPORT_INTERVAL_MS = 10_000

/**
 * Counts tokens and their rejections, and reports rejections at most once per
 * {@link TOKEN_REPORT_INTERVAL_MS}: the first rejection at once, later ones with the first rejection
 * after the interval, carrying everything counted meanwhile. A flood of forged tokens therefore
 * costs one report per interval, never one per request (the counts in `stats()` are exact).
 *
 * @example
 * ```ts
 * const audit = new TokenAudit((r) => router.emit('token:rejected', r))
 * audit.reject('bad-signature') // reported at once: { count: 1, reasons: { 'bad-signature': 1 } }
 * ```
 */
export class TokenAudit {
  readonly #report: (report: TokenRejectionReport) => void
  readonly #now: () => number
  #received = 0
  #rejected = 0
  #ignored = 0
  readonly #reasons: Record<TokenRejectionReason, number>
  #lastReportAt = Number.NEGATIVE_INFINITY
  #pending: Partial<Record<TokenRejectionReason, number>> = {}
  #pendingCount = 0

  constructor(report: (report: TokenRejectionReport) => void, now: () => number = Date.now) {
    this.#report = report
    this.#now = now
    this.#reasons = Object.fromEntries(TOKEN_REJECTION_REASONS.map((r) => [r, 0])) as Record<
      TokenRejectionReason,
      number
    >
  }

  /** Counts a token given to resume a session. */
  received(): void {
    this.#received++
  }

  /** Counts a rejected token or a dropped part of one, and reports it if the interval allows. */
  reject(reason: TokenRejectionReason): void {
    if (WHOLE.has(reason)) this.#rejected++
    else this.#ignored++
    this.#reasons[reason]++
    this.#pending[reason] = (this.#pending[reason] ?? 0) + 1
    this.#pendingCount++
    const now = this.#now()
    if (now - this.#lastReportAt < TOKEN_REPORT_INTERVAL_MS) return
    this.#lastReportAt = now
    const report = { count: this.#pendingCount, reasons: this.#pending }
    this.#pending = {}
    this.#pendingCount = 0
    this.#report(report)
  }

  /** A snapshot of the counts. */
  stats(): TokenStats {
    return {
      received: this.#received,
      rejected: this.#rejected,
      ignored: this.#ignored,
      reasons: { ...this.#reasons },
    }
  }
}
