import { type Ansi, stripAnsi } from './ansi.js'
import type { StatusNode, StatusReport } from './status-report.js'

const HEADERS = ['SHARD', 'NODE', 'EXPECTED', 'ACTUAL', 'STATE', 'LATENCY MS', 'LAG MS', 'NOTE'] as const
/** Right-aligned columns (numbers). */
const RIGHT = new Set([5, 6])

/**
 * Renders the status report as text: a header line, the node table, then the errors (✗),
 * warnings (!) and a summary line. Colours come from `c` (plain when disabled).
 *
 * @example
 * ```ts
 * io.stdout.write(renderStatus(report, ansi(false)))
 * ```
 */
export function renderStatus(report: StatusReport, c: Ansi): string {
  const clusters = report.clusters.length
  const nodes = report.nodes.length
  const what = `${clusters} ${clusters === 1 ? 'cluster' : 'shards'}, ${nodes} ${nodes === 1 ? 'node' : 'nodes'} (${report.dialect})`
  const rows = report.nodes.map((n) => row(n, c))
  const lines = [`${c.bold(report.config)}: ${what}`, '', ...table([...HEADERS], rows, c)]
  lines.push('')
  for (const e of report.errors) lines.push(`${c.red('✗')} ${e}`)
  for (const w of report.warnings) lines.push(`${c.yellow('!')} ${w}`)
  const up = report.nodes.filter((n) => n.state === 'up').length
  if (!report.ok) {
    const n = report.errors.length
    lines.push(
      c.red(
        `✗ ${n} ${n === 1 ? 'cluster has' : 'clusters have'} no usable primary (${up} of ${report.nodes.length} nodes up)`,
      ),
    )
  } else if (report.warnings.length > 0) {
    lines.push(
      c.green(`✓ every primary is up`) +
        ` (${up} of ${report.nodes.length} nodes up, ${report.warnings.length} ${report.warnings.length === 1 ? 'warning' : 'warnings'})`,
    )
  } else {
    lines.push(c.green(`✓ all ${report.nodes.length} nodes up`))
  }
  return `${lines.join('\n')}\n`
}

function row(n: StatusNode, c: Ansi): string[] {
  const state = n.state === 'up' ? c.green(n.state) : n.state === 'down' ? c.red(n.state) : c.yellow(n.state)
  const expected = n.expectedRole
  const actual =
    n.actualRole === 'unknown'
      ? c.dim('unknown')
      : expected !== 'any' && n.actualRole !== expected
        ? c.red(n.actualRole)
        : n.actualRole
  const note = n.error ?? (n.unusableReason === null || n.unusableReason === 'down' ? '' : n.unusableReason)
  return [
    n.cluster,
    n.name,
    expected,
    actual,
    state,
    n.latencyMs === null ? '-' : String(n.latencyMs),
    n.lagMs === null ? '-' : String(n.lagMs),
    note.length > 70 ? `${note.slice(0, 67)}...` : note,
  ]
}

function table(headers: string[], rows: string[][], c: Ansi): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => stripAnsi(r[i] ?? '').length)))
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => {
        const pad = ' '.repeat(widths[i]! - stripAnsi(cell).length)
        return RIGHT.has(i) ? pad + cell : i === cells.length - 1 ? cell : cell + pad
      })
      .join('  ')
      .trimEnd()
  return [c.dim(line(headers)), ...rows.map(line)]
}
