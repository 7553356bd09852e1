/**
 * The README's errors table and the package's exports cannot drift apart: every `RoutemateError`
 * subclass exported from `routemate` is a row of the table, and every row names a class exported
 * from `routemate` (or from the subpath the row names, such as `routemate/config`).
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import * as configApi from '../config-file/index.js'
import * as api from '../index.js'
import { RoutemateError } from './routemate-error.js'

const README = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'README.md')

/** Subpath entry points whose errors the table may list, by the name a row uses. */
const SUBPATHS: Record<string, Record<string, unknown>> = { 'routemate/config': configApi }

/** The error classes of a module's exports (`RoutemateError` subclasses, the base excluded). */
function errorClasses(mod: Record<string, unknown>): string[] {
  return Object.entries(mod)
    .filter(([, v]) => typeof v === 'function' && v.prototype instanceof RoutemateError)
    .map(([k]) => k)
    .sort()
}

/** The rows of the README's `## Errors` table: the class each row names first, and the row. */
function tableRows(): Array<{ name: string; row: string }> {
  const text = fs.readFileSync(README, 'utf8')
  const at = text.indexOf('\n## Errors\n')
  expect(at, 'README has an "## Errors" section').toBeGreaterThan(0)
  const section = text.slice(at + 1).split(/\n## /)[0] as string
  const rows = section.split('\n').filter((l) => /^\| `/.test(l))
  return rows.map((row) => ({ name: (/^\| `(\w+)`/.exec(row) as RegExpExecArray)[1] as string, row }))
}

describe('the README errors table', () => {
  it('lists every RoutemateError subclass exported from routemate, and only exported classes', () => {
    const rows = tableRows()
    const names = rows.map((r) => r.name)
    expect(new Set(names).size, 'no class listed twice').toBe(names.length)
    const exported = errorClasses(api)
    expect(exported.length).toBeGreaterThanOrEqual(10)
    expect(
      exported.filter((n) => !names.includes(n)),
      'exported but not in the table',
    ).toEqual([])
    const orphans = rows.filter(({ name, row }) => {
      if (exported.includes(name)) return false
      const sub = Object.keys(SUBPATHS).find((s) => row.includes(`\`${s}\``))
      return sub === undefined || !errorClasses(SUBPATHS[sub] as Record<string, unknown>).includes(name)
    })
    expect(
      orphans.map((r) => r.name),
      'in the table but exported neither from routemate nor from the subpath its row names',
    ).toEqual([])
    for (const [sub, mod] of Object.entries(SUBPATHS)) {
      const missing = errorClasses(mod).filter((n) => !names.includes(n))
      expect(missing, `exported from ${sub} but not in the table`).toEqual([])
    }
  })

  it('every exported error class is a RoutemateError with a stable code, named after itself', () => {
    for (const name of errorClasses(api)) {
      const cls = (api as Record<string, unknown>)[name] as { name: string }
      expect(cls.name).toBe(name)
    }
    // The ones the router raises at its edges, constructed as the router does.
    const samples: RoutemateError[] = [
      new api.NodeAbortError('replica1'),
      new api.UnknownNodeError('nope', ['primary']),
      new api.RouterNotReadyError('not ready', 10, { primary: 'down' }),
      new api.PrimaryUnavailableError('default', 'down', { cause: new Error('x') }),
    ]
    for (const e of samples) {
      expect(e).toBeInstanceOf(RoutemateError)
      expect(e.code).toMatch(/^ROUTEMATE_[A-Z_]+$/)
      expect(e.name).toBe(e.constructor.name)
    }
    expect(samples.map((e) => e.code)).toEqual([
      'ROUTEMATE_NODE_ABORTED',
      'ROUTEMATE_UNKNOWN_NODE',
      'ROUTEMATE_NOT_READY',
      'ROUTEMATE_PRIMARY_UNAVAILABLE',
    ])
  })
})
