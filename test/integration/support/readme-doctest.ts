/**
 * What the README doc-test does with each block: which blocks lack handling (and why, naming the
 * block), and the project file of each TypeScript/JavaScript block — its preludes, the block, the
 * epilogues — with what to run.
 */
import { PRELUDES } from './doctest-preludes.js'
import type { ProjectFile } from './doctest-project.js'
import { CODE_LANGS, type ReadmeBlock, where } from './readme-blocks.js'

/** The CLI output samples `cli.test.ts` compares with real output (`<!-- doctest: cli=NAME -->`). */
export const CLI_SAMPLES = ['commands', 'check-errors', 'status'] as const

const HOW =
  'put a marker on the line before the fence, e.g. <!-- doctest: run=pg prelude=router --> or ' +
  '<!-- doctest: typecheck-only; why it cannot run --> (see docs/architecture.md, Tests)'

/** A TypeScript/JavaScript block as a file of the doc-test project. */
export interface ComposedBlock {
  readonly block: ReadmeBlock
  readonly file: ProjectFile
  /** Lines of prelude before the block's first line in the file. */
  readonly preludeLines: number
  readonly codeLines: number
  /** The file `node` runs (the compiled one), when the block runs on its own. */
  readonly runFile?: string
  /** Where a `file=` block is saved as written (in its section's folder). */
  readonly savedAs?: string
}

/** Every block without (valid) doc-test handling, one line each: `README.md:LINE (## Heading, block N: first line): why`. */
export function blockHandlingProblems(blocks: readonly ReadmeBlock[]): string[] {
  const problems: string[] = []
  const say = (b: ReadmeBlock, why: string) => problems.push(`${where(b)}: ${why}`)
  for (const b of blocks) {
    const m = b.marker
    if (b.markerError !== undefined) {
      say(b, `bad doctest marker: ${b.markerError}`)
      continue
    }
    for (const name of m?.preludes ?? []) {
      if (!Object.hasOwn(PRELUDES, name)) {
        say(b, `unknown prelude "${name}" (known: ${Object.keys(PRELUDES).join(', ')})`)
      }
    }
    if (CODE_LANGS.has(b.lang)) {
      if (m === undefined) say(b, `a \`\`\`${b.lang} block with no doc-test handling: ${HOW}`)
      else if (m.run === undefined && m.typecheckOnly !== true && m.file === undefined) {
        say(b, `the marker says neither run, typecheck-only nor file=: ${HOW}`)
      } else if (m.file !== undefined) {
        const runner = blocks.find(
          (c) => c.heading === b.heading && c.marker?.command === true && c.code.includes(m.file as string),
        )
        if (runner === undefined)
          say(b, `file=${m.file}: no \`doctest: command\` block of this section runs it`)
      }
      if (m?.command === true || m?.cli !== undefined) say(b, 'command and cli= are for sh and output blocks')
    } else if (b.lang === 'yaml') {
      if (m !== undefined) say(b, 'a yaml block takes no marker: it is loaded as a routemate config file')
    } else if (b.lang === 'sh' || b.lang === 'bash' || b.lang === 'shell') {
      if (m?.command === true && b.code.trim().includes('\n'))
        say(b, 'a command block holds one command line')
      if (m !== undefined && m.command !== true && m.cli === undefined)
        say(b, 'sh blocks take command or cli=')
    } else if (b.lang === '' || b.lang === 'text' || b.lang === 'console') {
      if (m?.cli === undefined) {
        say(
          b,
          `an output block with no doc-test handling: mark it <!-- doctest: cli=NAME --> and compare it in cli.test.ts (${CLI_SAMPLES.join(', ')})`,
        )
      }
    } else {
      say(
        b,
        `no doc-test handling for \`\`\`${b.lang} blocks (see test/integration/support/readme-doctest.ts)`,
      )
    }
    if (m?.cli !== undefined && !(CLI_SAMPLES as readonly string[]).includes(m.cli)) {
      say(b, `cli=${m.cli}: cli.test.ts compares only ${CLI_SAMPLES.join(', ')}`)
    }
  }
  return problems
}

/** The project file of a TypeScript/JavaScript block with valid handling; `undefined` for other blocks. */
export function composeBlock(b: ReadmeBlock): ComposedBlock | undefined {
  const m = b.marker
  if (!CODE_LANGS.has(b.lang) || m === undefined || b.markerError !== undefined) return undefined
  if (m.preludes.some((p) => !Object.hasOwn(PRELUDES, p))) return undefined
  const id = `block-${String(b.index + 1).padStart(2, '0')}`
  const js = !/^(ts|typescript|tsx)$/.test(b.lang)
  const preludes = m.file === undefined ? m.preludes.map((p) => PRELUDES[p]!) : []
  const head = preludes.map((p) => `${p.code}\n`).join('')
  const tail = preludes
    .map((p) => (p.epilogue === undefined ? '' : `${p.epilogue}\n`))
    .reverse()
    .join('')
  const compilerOptions = Object.assign(
    {},
    ...preludes.map((p) => p.compilerOptions ?? {}),
    js ? { allowJs: true, checkJs: true, noEmit: true } : {},
  ) as Record<string, unknown>
  const name = `${id}${js ? '.mjs' : '.ts'}`
  const runs = m.run !== undefined && m.file === undefined
  return {
    block: b,
    file: { name, text: `${head}${b.code}${tail}`, compilerOptions },
    preludeLines: head.split('\n').length - 1,
    codeLines: b.code.split('\n').length - 1,
    ...(runs ? { runFile: js ? name : `${id}.js` } : {}),
    ...(m.file !== undefined ? { savedAs: `section-${sectionId(b.heading)}/${m.file}` } : {}),
  }
}

/** A folder name for a heading. */
function sectionId(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
}
