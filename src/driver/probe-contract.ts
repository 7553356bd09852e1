// The part of the driver contract that health checks use: a node's connection options, what a
// probe reports, a kept-connection prober. Types only, importing nothing, so that `src/health/`
// depends on it rather than on the router (`router/driver.ts` re-exports all of it).

/** The role a node is configured with, or reports in a probe. */
export type NodeRole = 'primary' | 'replica'

/** What the driver needs to open connections to one node. */
export interface DriverNodeOptions {
  /** Node name, unique within the router. */
  readonly name: string
  /** Connection URL (contains credentials: never print it unredacted). */
  readonly url: string
  /** Extra client/pool options passed through to the driver's pool (e.g. `max` for `pg`). */
  readonly pool: Readonly<Record<string, unknown>>
  /** Hard deadline for opening one connection, in ms. */
  readonly connectTimeoutMs: number
  /**
   * The node's `queryTimeoutMs` (`0` = none). Informative: the core times statements itself and
   * calls `Driver.cancel`; a driver should not set a client-side timeout of its own from it.
   */
  readonly queryTimeoutMs: number
  /**
   * When true, every connection of this pool runs its transactions read-only
   * (PostgreSQL `default_transaction_read_only`, MySQL `SET SESSION TRANSACTION READ ONLY`).
   * Used for `readOnly` scopes that fall back to the primary.
   */
  readonly readOnly: boolean
}

/** Result of one health probe of one node. */
export interface ProbeResult {
  /** The role the server reports (`pg_is_in_recovery()`, `@@read_only`). */
  readonly role: NodeRole
  /**
   * Replication position: on a primary its current write position (WAL LSN / GTID set), on a
   * replica its replay (applied) position. Opaque to the core; compared with `Driver.positionReached`.
   */
  readonly position?: string
  /** For a replica: whether replication is running (receiver / IO+SQL threads). */
  readonly replicating?: boolean
  /** For a replica: the server's own lag estimate in ms, when it has one (MySQL `Seconds_Behind_Master`). */
  readonly reportedLagMs?: number
}

/** A node's prober that may keep a connection between probes (see `Driver.createProber`). */
export interface DriverProber {
  /** Probes the node once; gives up, closing its connection, when `signal` aborts. */
  probe(signal: AbortSignal): Promise<ProbeResult>
  /** Closes the kept connection, if any. Idempotent. */
  close(): void
}
