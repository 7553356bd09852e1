/**
 * The README's CLI output samples (`<!-- doctest: cli=NAME -->` blocks), as command lines and
 * expected output, and the normalisation that makes real output comparable: ports, probe
 * latencies and lags vary from run to run; what a column means does not.
 */
import { expect } from 'vitest'
import { readmeBlocks, where } from './readme-blocks.js'

/** A sample: the `routemate` arguments of its `$ npx routemate ...` line and the lines after it. */
export interface CliSample {
  readonly where: string
  readonly argv: readonly string[]
  readonly output: readonly string[]
}

/** The README block marked `cli=name`, as written. */
export function cliBlock(name: string): { where: string; code: string } {
  const block = readmeBlocks().find((b) => b.marker?.cli === name)
  expect(block, `a README block marked <!-- doctest: cli=${name} -->`).toBeDefined()
  return { where: where(block!), code: block!.code }
}

/** A sample block: `$ npx routemate ARGS   # comment`, then the output lines. */
export function cliSample(name: string): CliSample {
  const { where, code } = cliBlock(name)
  const [first, ...output] = code.replace(/\n$/, '').split('\n')
  const command = /^\$ npx routemate((?: [^ #]+)*)\s*(?:#.*)?$/.exec(first ?? '')
  expect(command, `${where}: starts with "$ npx routemate ..."`).not.toBeNull()
  return { where, argv: command![1]!.trim().split(' ').filter(Boolean), output }
}

/**
 * `routemate status` text made comparable: `127.0.0.1:PORT`; in the table, cells split on runs
 * of spaces, and the latency and lag cells a number becomes `N` (`-` stays `-`: whether a lag is
 * known is what the column documents).
 */
export function normaliseStatus(lines: readonly string[]): string[] {
  let inTable = false
  return lines.map((raw) => {
    const line = raw.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT')
    if (line.startsWith('SHARD ')) {
      inTable = true
      return line.split(/ {2,}/).join(' | ')
    }
    if (line.trim() === '') inTable = false
    if (!inTable) return line
    const cells = line.split(/ {2,}/)
    for (const i of [5, 6]) if (cells[i] !== undefined) cells[i] = cells[i]!.replace(/^\d+$/, 'N')
    return cells.join(' | ')
  })
}
