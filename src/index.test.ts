import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import * as errors from './errors/index.js'
import * as root from './index.js'

const README = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8')

/** Every identifier the README shows as code: in `inline code` spans and in fenced code blocks. */
function codeIdentifiers(markdown: string): Set<string> {
  const ids = new Set<string>()
  const add = (code: string) => {
    for (const m of code.matchAll(/[A-Za-z_$][\w$]*/g)) ids.add(m[0])
  }
  const prose = markdown.replace(/^```[^\n]*\n([\s\S]*?)^```$/gm, (_all, block: string) => {
    add(block)
    return ''
  })
  for (const m of prose.matchAll(/`([^`\n]+)`/g)) add(m[1] as string)
  return ids
}

/** The names of a README section's table rows (`| \`Name\` ...`), from `## title` to the next `## `. */
function tableNames(markdown: string, title: string): string[] {
  const start = markdown.indexOf(`\n## ${title}\n`)
  expect(start, `README section "## ${title}"`).toBeGreaterThan(0)
  const end = markdown.indexOf('\n## ', start + 1)
  const section = markdown.slice(start, end < 0 ? undefined : end)
  return [...section.matchAll(/^\| `([A-Za-z_$][\w$]*)`/gm)].map((m) => m[1] as string)
}

const documented = codeIdentifiers(README)

/** The subpaths whose every runtime export the README documents (the others are documented by their doc comments). */
const SUBPATHS = {
  'routemate/sharding': () => import('./sharding/index.js'),
  'routemate/balancers': () => import('./balancer/index.js'),
  'routemate/driver': () => import('./driver/index.js'),
  'routemate/prisma': () => import('./prisma/index.js'),
} as const

describe('the public surface', () => {
  it('the root entry exports only values the README documents', () => {
    const names = Object.keys(root).sort()
    expect(names.length).toBeGreaterThan(20)
    expect(names.filter((n) => !documented.has(n))).toEqual([])
  })

  it('keeps the names of the API contract at the root', () => {
    for (const name of [
      'createRouter',
      'Router',
      'RoutemateError',
      'ReadOnly',
      'Transactional',
      'UsePrimary',
    ]) {
      expect(Object.keys(root)).toContain(name)
    }
  })

  it('no longer exports internals at the root (they moved to documented subpaths or out)', () => {
    for (const name of [
      'NodeHealth',
      'leadingKeyword',
      'KeptConnectionProber',
      'HashResolver',
      'murmur3_32',
    ]) {
      expect(Object.keys(root)).not.toContain(name)
    }
    for (const name of ['RoundRobinBalancer', 'createBalancer', 'BALANCER_NAMES']) {
      expect(Object.keys(root)).not.toContain(name)
    }
  })

  it('exports every RoutemateError subclass at the root, each a row of the README Errors table', () => {
    const errorClasses = Object.entries(errors)
      .filter(([, v]) => typeof v === 'function' && v.prototype instanceof errors.RoutemateError)
      .map(([k]) => k)
    expect(errorClasses.length).toBeGreaterThan(5)
    const rootNames = Object.keys(root)
    expect(errorClasses.filter((n) => !rootNames.includes(n))).toEqual([])
    const rows = tableNames(README, 'Errors')
    expect(errorClasses.filter((n) => !rows.includes(n))).toEqual([])
  })

  for (const [subpath, load] of Object.entries(SUBPATHS)) {
    it(`${subpath}: the README names it and documents every value it exports`, async () => {
      expect(README).toContain(`\`${subpath}\``)
      const names = Object.keys(await load()).sort()
      expect(names.length).toBeGreaterThan(0)
      expect(names.filter((n) => !documented.has(n))).toEqual([])
    })
  }

  it('every subpath of the README above is in package.json exports', () => {
    const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, unknown>
      typesVersions: { '*': Record<string, unknown> }
    }
    for (const subpath of Object.keys(SUBPATHS)) {
      const short = subpath.slice('routemate/'.length)
      expect(Object.keys(pkg.exports)).toContain(`./${short}`)
      expect(Object.keys(pkg.typesVersions['*'])).toContain(short)
    }
  })
})
