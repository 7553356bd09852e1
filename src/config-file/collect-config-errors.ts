import { ConfigError } from '../errors/config-error.js'
import { resolveConfig } from '../router/config.js'
import { isPlainObject, type PlainObject } from '../router/config-checks.js'
import type { Dialect, Driver } from '../router/driver.js'
import type { ResolvedConfig } from '../router/resolved-config.js'
import type { ConfigFileContext } from './config-file-context.js'
import { CONFIG_FILE_LIMITS } from './config-file-limits.js'

/** One step of a path into the data: a key of an object or an index of an array. */
interface Step {
  readonly container: PlainObject | unknown[]
  readonly key: string | number
}

/** How far a path goes into the data, and the path with the file's array indices. */
interface Walk {
  readonly steps: readonly Step[]
  /** What of the path is not in the data (`''` when all of it is). */
  readonly rest: string
  /** The path as the file has it (array indices from before any item was taken out). */
  readonly original: string
}

/**
 * Validates a file's options exactly as `createRouter` does, recording every error rather than
 * the first (`resolveConfig` stops at the first): after each error the offending value is taken
 * out of a working copy of the data and the check runs again, until it passes or nothing more can
 * be taken out. Taking out means deleting the option (an optional one then gets its default), an
 * array item (the paths of later items keep the file's indices), or, for a required node URL, a
 * placeholder in its place. An error that follows from one already reported (the same option or
 * one around or inside it, or a message naming it, such as a timeout checked against a removed
 * interval) is not reported again. `reported` are the paths other checks reported already (taken
 * out first). Returns the resolved config when there was no error at all.
 *
 * @example
 * ```ts
 * collectConfigErrors(ctx, { primary: 'mysql://h/app', maxReplicationLagMs: -1 }, pgDriver(), []) // 2 problems recorded
 * ```
 */
export function collectConfigErrors(
  ctx: ConfigFileContext,
  data: PlainObject,
  driver: Driver,
  reported: readonly string[],
): ResolvedConfig | undefined {
  const work = new WorkingCopy(data, driver)
  const seen = reported.filter((p) => p !== '' && p !== 'driver')
  for (const path of seen) work.takeOut(work.walk(path, 'original'))
  let clean = seen.length === 0
  for (let run = 0; run < CONFIG_FILE_LIMITS.maxErrors * 4; run++) {
    let err: unknown
    try {
      const resolved = resolveConfig(work.root)
      return clean ? resolved : undefined
    } catch (e) {
      err = e
    }
    clean = false
    if (!(err instanceof ConfigError)) {
      const message = err instanceof Error ? err.message : String(err)
      ctx.report('', `unexpected error while checking the options: ${message}`, 'none', err)
      return undefined
    }
    const walk = work.walk(err.path, 'working')
    const reason = err.path === '' ? err.message : err.message.slice(err.path.length + 2)
    if (!seen.some((s) => related(walk.original, s) || mentions(reason, s))) {
      const where = reason.startsWith('unknown option') ? 'key' : 'value'
      if (!ctx.report(walk.original, reason, where)) return undefined
      seen.push(walk.original)
    }
    if (err.path === '' || !work.takeOut(walk)) return undefined
  }
  return undefined
}

/** Whether one path is the other or inside it. */
function related(a: string, b: string): boolean {
  return a === b || inside(a, b) || inside(b, a)
}

function inside(inner: string, outer: string): boolean {
  if (outer === '' || !inner.startsWith(outer)) return false
  const next = inner.charAt(outer.length)
  return next === '.' || next === '['
}

/** Whether a message names a (nested) path, e.g. `below healthCheck.intervalMs (1000, the default)`. */
function mentions(reason: string, path: string): boolean {
  if (!/[.[]/.test(path)) return false
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`(^|[^\\w.\\[\\]])${escaped}(?![\\w.\\[])`).test(reason)
}

/** The data being checked, copied so values can be taken out; remembers the file's array indices. */
class WorkingCopy {
  readonly root: PlainObject
  readonly #dialect: Dialect
  /** For each array, the file's index of each item it still has. */
  readonly #indices = new WeakMap<unknown[], number[]>()
  readonly #placeholders = new Set<unknown>()

  constructor(data: PlainObject, driver: Driver) {
    this.root = this.#copy(data) as PlainObject
    this.root.driver = driver
    this.#dialect = driver.dialect
  }

  #copy(value: unknown): unknown {
    if (Array.isArray(value)) {
      const items = value.map((v) => this.#copy(v))
      this.#indices.set(
        items,
        items.map((_, i) => i),
      )
      return items
    }
    if (!isPlainObject(value)) return value
    const out: PlainObject = {}
    for (const [k, v] of Object.entries(value)) {
      // defineProperty: a `__proto__` key stays an own property
      Object.defineProperty(out, k, {
        value: this.#copy(v),
        enumerable: true,
        writable: true,
        configurable: true,
      })
    }
    return out
  }

  /** Follows a path (as `ConfigError` names it: `shards.eu.1.replicas[0].url`, `pool["a b"]`) as far as the data goes. */
  walk(path: string, indices: 'working' | 'original'): Walk {
    const steps: Step[] = []
    let node: unknown = this.root
    let rest = path
    let original = ''
    while (rest !== '') {
      let dot = ''
      if (rest.startsWith('.') && steps.length > 0) {
        dot = '.'
        rest = rest.slice(1)
      }
      if (Array.isArray(node)) {
        const m = /^\[(\d+)\]/.exec(rest)
        const files = this.#indices.get(node) ?? []
        const given = m === null ? -1 : Number(m[1])
        const i = indices === 'working' ? given : files.indexOf(given)
        if (m === null || i < 0 || i >= node.length) {
          rest = dot + rest
          break
        }
        original += `[${files[i] ?? i}]`
        rest = rest.slice(m[0].length)
        steps.push({ container: node, key: i })
        node = node[i]
      } else if (isPlainObject(node)) {
        const match = matchKey(Object.keys(node), rest)
        if (match === undefined) {
          rest = dot + rest
          break
        }
        original += dot + rest.slice(0, match.length)
        rest = rest.slice(match.length)
        steps.push({ container: node, key: match.key })
        node = node[match.key]
      } else {
        rest = dot + rest
        break
      }
    }
    return { steps, rest, original: original + rest }
  }

  /** Takes the value a walk reached out of the data; false when it cannot (the checks cannot go on). */
  takeOut(walk: Walk): boolean {
    if (walk.rest !== '') {
      // A required option that is missing: give a placeholder, or take out what holds it.
      const key = walk.rest.replace(/^\./, '')
      const last = walk.steps.at(-1)
      const holder = last === undefined ? this.root : (last.container as PlainObject)[last.key as string]
      if (isPlainObject(holder) && (key === 'primary' || key === 'url')) {
        holder[key] = this.#placeholder(this.#url())
        return true
      }
      if (holder === this.root && key === 'sharding') {
        this.root.sharding = this.#placeholder({ strategy: 'hash' })
        return true
      }
      return walk.steps.length > 0 && this.#remove(walk.steps)
    }
    return this.#remove(walk.steps)
  }

  #remove(steps: readonly Step[]): boolean {
    const last = steps.at(-1)
    if (last === undefined) return false
    const { container, key } = last
    const current = (container as Record<string | number, unknown>)[key]
    if (this.#placeholders.has(current)) return false
    const inShards = steps.length === 2 && steps[0]!.key === 'shards' && steps[0]!.container === this.root
    if (container === this.root && key === 'shards') return false
    if (inShards) {
      ;(container as PlainObject)[key as string] = this.#placeholder({ primary: this.#url() })
    } else if (key === 'nodes' && isPlainObject(container)) {
      container[key] = this.#placeholder([this.#url()])
    } else if (container === this.root && key === 'url' && this.root.shards === undefined) {
      // The cluster's only node list: a placeholder keeps "primary: required" from following.
      container.url = this.#url()
    } else if (container === this.root && key === 'sharding' && this.root.shards !== undefined) {
      this.root.sharding = this.#placeholder({ strategy: 'hash' })
    } else if (Array.isArray(container)) {
      container.splice(key as number, 1)
      this.#indices.get(container)?.splice(key as number, 1)
    } else {
      delete container[key as string]
    }
    return true
  }

  #placeholder<T>(value: T): T {
    this.#placeholders.add(value)
    return value
  }

  /** A URL of the dialect naming a server no other node names. */
  #url(): string {
    const scheme = this.#dialect === 'postgres' ? 'postgres' : 'mysql'
    return this.#placeholder(
      `${scheme}://routemate-placeholder-${this.#placeholders.size}.invalid/placeholder`,
    )
  }
}

/** The key a path continues with: `["odd key"]`, or the longest key followed by `.`, `[` or the end (shard names may hold dots). */
function matchKey(keys: readonly string[], rest: string): { key: string; length: number } | undefined {
  const quoted = /^\[("(?:[^"\\]|\\.)*")\]/.exec(rest)
  if (quoted !== null) {
    const key = JSON.parse(quoted[1]!) as string
    return keys.includes(key) ? { key, length: quoted[0].length } : undefined
  }
  let best: { key: string; length: number } | undefined
  for (const key of keys) {
    if (!rest.startsWith(key)) continue
    const after = rest.charAt(key.length)
    if (after !== '' && after !== '.' && after !== '[') continue
    if (best === undefined || key.length > best.length) best = { key, length: key.length }
  }
  return best
}
