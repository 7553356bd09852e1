/**
 * The README's fenced code blocks and their doc-test markers: the HTML comment on the last
 * non-blank line before a fence, `<!-- doctest: DIRECTIVES[; reason] -->` (invisible on GitHub).
 * The convention is documented in docs/architecture.md (Tests).
 *
 * Directives (space-separated):
 * - `run` — a complete program: type-checked and run as written, no cluster given;
 * - `run=pg` / `run=mysql` — type-checked and run with `DATABASE_URL` and `REPLICA_URLS` set to
 *   the test's shared cluster;
 * - `typecheck-only` — type-checked, never run; a reason after `;` is required;
 * - `prelude=a,b` — declarations put before the block (see `doctest-preludes.ts`);
 * - `file=NAME` — the block is saved, as written, as NAME in the project folder, run by this
 *   section's `command` block (and type-checked as TypeScript);
 * - `command` — a `sh` block of one command, run as written in the project folder;
 * - `cli=NAME` — a CLI output sample, compared with real output by `cli.test.ts`.
 */
import fs from 'node:fs'
import path from 'node:path'
import { REPO_ROOT } from '../../support/ensure-built.js'

/** What a marker asks for. */
export interface DoctestMarker {
  readonly run?: 'plain' | 'pg' | 'mysql'
  readonly typecheckOnly?: true
  readonly preludes: readonly string[]
  readonly file?: string
  readonly command?: true
  readonly cli?: string
  readonly reason?: string
}

/** One fenced code block of the README. */
export interface ReadmeBlock {
  /** Position among all fenced blocks, from 0. */
  readonly index: number
  /** The fence's info string (`ts`, `sh`, `yaml`, `` for none). */
  readonly lang: string
  /** The block's text, without the fences, ending with a newline. */
  readonly code: string
  /** README line (1-based) of the block's first code line. */
  readonly line: number
  /** The nearest heading above it, without the `#`s. */
  readonly heading: string
  /** Its marker, if it has one. */
  readonly marker: DoctestMarker | undefined
  /** A problem with the marker (an unknown directive, a missing reason). */
  readonly markerError: string | undefined
}

/** Languages whose blocks are TypeScript or JavaScript: every one needs a marker. */
export const CODE_LANGS = new Set(['ts', 'typescript', 'tsx', 'js', 'javascript', 'mjs', 'cjs'])

/** README.md's text. */
export function readmeText(): string {
  return fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8')
}

/** `README.md:LINE (## Heading, block N: first line)` — how failures name a block. */
export function where(block: ReadmeBlock): string {
  const first = block.code.split('\n').find((l) => l.trim() !== '') ?? ''
  return `README.md:${block.line} (## ${block.heading}, block ${block.index + 1}: ${first.trim()})`
}

/** Every fenced block of a Markdown text, with its heading and marker. */
export function readmeBlocks(text = readmeText()): ReadmeBlock[] {
  const lines = text.split('\n')
  const blocks: ReadmeBlock[] = []
  let heading = ''
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    const h = /^(#{1,6}) (.*)$/.exec(line)
    if (h) heading = h[2] as string
    const fence = /^(`{3,})(.*)$/.exec(line)
    if (!fence) continue
    const close = lines.findIndex(
      (l, j) => j > i && l.startsWith(fence[1] as string) && l.trim() === fence[1],
    )
    if (close < 0) throw new Error(`README.md:${i + 1}: a code fence that is never closed`)
    let before = i - 1
    while (before >= 0 && (lines[before] as string).trim() === '') before--
    const comment = before >= 0 ? /^<!--\s*doctest:(.*?)-->\s*$/.exec(lines[before] as string) : null
    const parsed = comment ? parseMarker(comment[1] as string) : undefined
    blocks.push({
      index: blocks.length,
      lang: (fence[2] as string).trim(),
      code: `${lines.slice(i + 1, close).join('\n')}\n`,
      line: i + 2,
      heading,
      marker: parsed?.marker,
      markerError: parsed?.error,
    })
    i = close
  }
  return blocks
}

/** Parses `DIRECTIVES[; reason]`. */
export function parseMarker(body: string): { marker: DoctestMarker; error?: string } {
  const semi = body.indexOf(';')
  const directives = (semi < 0 ? body : body.slice(0, semi)).trim().split(/\s+/).filter(Boolean)
  const reason = semi < 0 ? undefined : body.slice(semi + 1).trim() || undefined
  const m: {
    -readonly [K in keyof DoctestMarker]: DoctestMarker[K]
  } = { preludes: [], reason }
  const errors: string[] = []
  for (const d of directives) {
    const [key, value] = d.split('=', 2) as [string, string | undefined]
    if (key === 'run' && (value === undefined || value === 'pg' || value === 'mysql'))
      m.run = value ?? 'plain'
    else if (key === 'typecheck-only' && value === undefined) m.typecheckOnly = true
    else if (key === 'prelude' && value) m.preludes = value.split(',')
    else if (key === 'file' && value) m.file = value
    else if (key === 'command' && value === undefined) m.command = true
    else if (key === 'cli' && value) m.cli = value
    else errors.push(`unknown directive "${d}"`)
  }
  if (m.typecheckOnly && m.reason === undefined) {
    errors.push('typecheck-only needs a reason: <!-- doctest: typecheck-only; why it cannot run -->')
  }
  if (m.typecheckOnly && m.run !== undefined) errors.push('typecheck-only and run exclude each other')
  if (directives.length === 0) errors.push('no directive')
  return errors.length > 0 ? { marker: m, error: errors.join('; ') } : { marker: m }
}
