import type { CliIo } from './cli-io.js'

/** The few styles the CLI uses; each wraps a text in ANSI codes, or returns it unchanged. */
export interface Ansi {
  readonly enabled: boolean
  bold(text: string): string
  dim(text: string): string
  red(text: string): string
  green(text: string): string
  yellow(text: string): string
}

const style =
  (enabled: boolean, open: number, close: number) =>
  (text: string): string =>
    enabled ? `\u001b[${open}m${text}\u001b[${close}m` : text

/**
 * Whether to colour: `FORCE_COLOR` (anything but `0` or `false`) forces colours; else they are on
 * only when stdout is a TTY and `NO_COLOR` is unset or empty (https://no-color.org).
 *
 * @example
 * ```ts
 * useColor({ isTTY: true, env: {} }) // true
 * useColor({ isTTY: true, env: { NO_COLOR: '1' } }) // false
 * ```
 */
export function useColor(io: Pick<CliIo, 'isTTY' | 'env'>): boolean {
  const force = io.env.FORCE_COLOR
  if (force !== undefined && force !== '0' && force.toLowerCase() !== 'false') return true
  if (io.env.NO_COLOR) return false
  return io.isTTY
}

/**
 * A tiny ANSI helper (no dependency): plain text when `enabled` is false.
 *
 * @example
 * ```ts
 * const c = ansi(useColor(io)); io.stdout.write(c.green('✓') + ' ok\n')
 * ```
 */
export function ansi(enabled: boolean): Ansi {
  return {
    enabled,
    bold: style(enabled, 1, 22),
    dim: style(enabled, 2, 22),
    red: style(enabled, 31, 39),
    green: style(enabled, 32, 39),
    yellow: style(enabled, 33, 39),
  }
}

/** Removes ANSI escape codes (to measure a cell's width). */
export function stripAnsi(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching the escape character is the point
  return text.replace(/\u001b\[[0-9;]*m/g, '')
}
