/**
 * The unit of read-your-writes (usually one HTTP request or one user). It remembers when it last
 * wrote and, in `position` mode, the primary's position after its last write in each cluster (its
 * consistency token).
 */
export class Session {
  /** Time of the session's last write (ms since epoch), 0 if none. */
  lastWriteAt = 0
  /** Primary position after the session's last write, per cluster (`position` mode). */
  readonly positions = new Map<string, string>()

  /** Serializes the session as an opaque, URL-safe token (for a cookie or a header). */
  toToken(): string {
    const p: Record<string, string> = {}
    for (const [k, v] of this.positions) p[k] = v
    return `rm1.${Buffer.from(JSON.stringify({ w: this.lastWriteAt, p })).toString('base64url')}`
  }

  /**
   * Restores a session from a token made by `toToken` (possibly by another process). A token
   * that is not one (tampered, truncated, from another app) yields an empty session: it can only
   * make reads less fresh, never route a write.
   */
  static fromToken(token: unknown): Session {
    const s = new Session()
    if (typeof token !== 'string' || !token.startsWith('rm1.') || token.length > 8192) return s
    try {
      const data = JSON.parse(Buffer.from(token.slice(4), 'base64url').toString('utf8')) as unknown
      if (typeof data !== 'object' || data === null) return s
      const { w, p } = data as { w?: unknown; p?: unknown }
      if (typeof w === 'number' && Number.isFinite(w) && w >= 0) s.lastWriteAt = w
      if (typeof p === 'object' && p !== null) {
        for (const [k, v] of Object.entries(p))
          if (typeof v === 'string' && v.length < 4096) s.positions.set(k, v)
      }
    } catch {
      // not a token of ours: an empty session
    }
    return s
  }
}
