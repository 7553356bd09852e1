/**
 * The unit of read-your-writes (usually one HTTP request or one user). It remembers when it last
 * wrote and, in `position` mode, the primary's position after that write (its consistency token).
 */
export class Session {
  /** Time of the session's last write (ms since epoch), 0 if none. */
  lastWriteAt = 0
  /** Primary position after the session's last write (`position` mode), if any. */
  token: string | undefined

  constructor(token?: string) {
    this.token = token
  }
}
