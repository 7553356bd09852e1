import type pg from 'pg'
import { ReadOnlyViolationError } from '../errors/read-only-violation-error.js'
import { onParameterStatus, transactionStatus } from './pg-internals.js'

/**
 * The read-only session of a pg connection in a node's read-only pool (the pool every read of a
 * `readOnly` scope uses, on replicas and on the primary alike). Such a connection starts with
 * `default_transaction_read_only=on` (in its startup `options`), and routemate proves it stays so:
 * PostgreSQL 14+ reports every change of that setting to the client (a ParameterStatus message),
 * which is recorded here as it arrives; the connection is verified once connected and is never
 * pooled again once the setting changed (by `SET`, `set_config()`, a function...) or a transaction
 * was left open on it. Servers before 14 do not report the setting: it is checked with `SHOW` once
 * per connection, and later changes are refused by the statement guard only.
 */
export interface ReadOnlySessionClient {
  /** The last reported `default_transaction_read_only` (`'on'` / `'off'`), undefined until reported. */
  rmSessionReadOnly?: string
  /** Whether the server reports changes of the setting (PostgreSQL 14+). */
  rmTracked?: boolean
}

const SETTING = 'default_transaction_read_only'

/** Records the server's reports of `default_transaction_read_only` on `client` (call before connecting). */
export function trackReadOnlySetting(client: pg.Client): void {
  const c = client as pg.Client & ReadOnlySessionClient
  onParameterStatus(client, (name, value) => {
    if (name !== SETTING) return
    c.rmSessionReadOnly = value
    c.rmTracked = true
  })
}

/**
 * Verifies a newly connected read-only client: its session must default to read-only, else it is
 * refused with a `ReadOnlyViolationError` (a connection option or a role/database setting
 * overrode routemate's, so reads there could write). Calls `done` once.
 */
export function verifyReadOnlySession(client: pg.Client, node: string, done: (err?: unknown) => void): void {
  const c = client as pg.Client & ReadOnlySessionClient
  const refuse = (value: string | undefined) =>
    done(
      new ReadOnlyViolationError(
        `node "${node}": a read-only connection reports ${SETTING}=${value ?? 'unknown'}; ` +
          "a connection option or server setting overrides routemate's read-only session, so it is not used",
      ),
    )
  if (c.rmTracked === true) {
    if (c.rmSessionReadOnly === 'on') done()
    else refuse(c.rmSessionReadOnly)
    return
  }
  client.query(`SHOW ${SETTING}`).then(
    (res) => {
      const value = (res.rows[0] as Record<string, string> | undefined)?.[SETTING]
      c.rmSessionReadOnly = value
      if (value === 'on') done()
      else refuse(value)
    },
    (err: unknown) => done(err),
  )
}

/** Whether a read-only client may go back to its pool: still read-only by default, and no transaction open. */
export function readOnlySessionIntact(client: pg.Client): boolean {
  const c = client as pg.Client & ReadOnlySessionClient
  if (c.rmSessionReadOnly !== 'on') return false
  const status = transactionStatus(client)
  return status === 'I' || status === undefined
}
