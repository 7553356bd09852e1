/**
 * Pieces of the Prometheus text exposition format 0.0.4: escaping, number formatting and one
 * metric family's HELP/TYPE header. No dependency.
 */

/** A sample's labels as ordered (name, value) pairs. */
export type LabelPairs = ReadonlyArray<readonly [name: string, value: string]>

/** Escapes a label value: backslash, double quote and line feed (`\\`, `\"`, `\n`). */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`))
}

/** Escapes HELP text: backslash and line feed. */
export function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'))
}

/** A sample value: `+Inf`, `-Inf`, `NaN` or a Go-parsable float. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (value === Number.POSITIVE_INFINITY) return '+Inf'
  if (value === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(value)
}

/** `{a="x",b="y"}`, or an empty string for no labels. */
export function formatLabels(labels: LabelPairs): string {
  if (labels.length === 0) return ''
  return `{${labels.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`
}

/** One sample line: `name{labels} value`. */
export function sampleLine(name: string, labels: LabelPairs, value: number): string {
  return `${name}${formatLabels(labels)} ${formatValue(value)}`
}

/** The `# HELP` and `# TYPE` lines of a family. */
export function familyHeader(name: string, type: 'counter' | 'gauge' | 'histogram', help: string): string[] {
  return [`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`]
}

/** Whether a string is a valid metric name (and so a valid prefix). */
export function isMetricName(name: string): boolean {
  return /^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)
}
