import { ConfigError } from '../errors/config-error.js'
import { didYouMean } from './config-checks.js'
import type { Scope } from './scope.js'

/**
 * libpq's `target_session_attrs` values, as a multi-host `url` may give them
 * (`?target_session_attrs=read-only`). In routemate they set the default scope of `router.pool()`:
 * see {@link poolDefaultScope}.
 */
export type TargetSessionAttrs = 'any' | 'read-write' | 'primary' | 'read-only' | 'standby' | 'prefer-standby'

/** Every `target_session_attrs` value, in libpq's documentation order. */
export const TARGET_SESSION_ATTRS: readonly TargetSessionAttrs[] = Object.freeze([
  'any',
  'read-write',
  'read-only',
  'primary',
  'standby',
  'prefer-standby',
])

/** Spellings seen in other drivers (JDBC's `targetServerType`, underscores) and the value they mean. */
const ALIASES: Readonly<Record<string, TargetSessionAttrs>> = {
  master: 'primary',
  secondary: 'standby',
  slave: 'standby',
  prefersecondary: 'prefer-standby',
  preferslave: 'prefer-standby',
  preferstandby: 'prefer-standby',
  readwrite: 'read-write',
  readonly: 'read-only',
}

/**
 * Checks a `target_session_attrs` value (exact, lower-case, as libpq compares it); a `ConfigError`
 * at `path` naming the accepted values, with a "did you mean" for a near miss.
 *
 * @example
 * ```ts
 * checkTargetSessionAttrs('prefer-standby', 'url') // 'prefer-standby'
 * checkTargetSessionAttrs('read_only', 'url')      // ConfigError: ... (did you mean "read-only"?)
 * ```
 */
export function checkTargetSessionAttrs(value: string, path: string): TargetSessionAttrs {
  if ((TARGET_SESSION_ATTRS as readonly string[]).includes(value)) return value as TargetSessionAttrs
  const hint =
    ALIASES[value.toLowerCase().replace(/[^a-z]/g, '')] ??
    didYouMean(value.replace(/_/g, '-'), TARGET_SESSION_ATTRS)
  const names = TARGET_SESSION_ATTRS.map((n) => `"${n}"`).join(', ')
  const shown = JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)
  throw new ConfigError(
    path,
    `target_session_attrs: expected one of ${names}, got ${shown}${hint ? ` (did you mean "${hint}"?)` : ''}`,
  )
}

/**
 * The default scope of `router.pool()` under a `target_session_attrs` value: a function from the
 * caller's scope to the scope its facade statements and checkouts run in — `undefined` where the
 * caller's scope routes them (`readOnly`, `primary`, a transaction), else a read scope (writes
 * refused with `ReadOnlyViolationError`; the caller's shard and session kept) whose `fallback`
 * says whether the primary may serve its reads when no replica is usable. `undefined` (no default
 * scope: unscoped statements go to the primary) for `any`, `read-write`, `primary` and no value.
 *
 * | value | unscoped `router.pool()` statements |
 * | --- | --- |
 * | `any`, `read-write`, `primary` | the primary |
 * | `read-only` | replicas; the primary (read-only) when none is usable and `fallbackToPrimary` (default) |
 * | `prefer-standby` | replicas; the primary (read-only) when none is usable, whatever `fallbackToPrimary` says |
 * | `standby` | replicas only: `NoHealthyReplicaError` when none is usable |
 *
 * @example
 * ```ts
 * poolDefaultScope('standby')?.(undefined)       // { mode: 'read', fallback: false, ... }
 * poolDefaultScope('standby')?.(primaryScope)    // undefined: router.primary() wins
 * poolDefaultScope('read-write')                 // undefined
 * ```
 */
export function poolDefaultScope(
  attrs: TargetSessionAttrs | undefined,
): ((caller: Scope | undefined) => Scope | undefined) | undefined {
  const fallback = attrs === 'standby' ? false : attrs === 'prefer-standby' ? true : undefined
  if (attrs !== 'read-only' && attrs !== 'prefer-standby' && attrs !== 'standby') return undefined
  const bare = readScope(undefined, fallback)
  return (caller) => {
    if (caller === undefined) return bare
    // A session or shard scope alone (mode `write`, no transaction) routes nothing.
    if (caller.mode !== 'write' || caller.tx !== undefined) return undefined
    return readScope(caller, fallback)
  }
}

/** A read scope with the caller's shard and session. */
function readScope(caller: Scope | undefined, fallback: boolean | undefined): Scope {
  return Object.freeze({
    mode: 'read',
    tx: undefined,
    cluster: caller?.cluster,
    session: caller?.session,
    fallback,
  })
}
