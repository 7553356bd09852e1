import type { Ansi } from './ansi.js'
import type { CliIo } from './cli-io.js'

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']

/**
 * Shows a spinner with a text on stdout while work runs, only when stdout is a TTY and colours are
 * on; returns the function that stops it and clears the line. A no-op otherwise.
 *
 * @example
 * ```ts
 * const stop = startSpinner(io, c, 'probing 3 nodes'); try { await work() } finally { stop() }
 * ```
 */
export function startSpinner(io: CliIo, c: Ansi, text: string): () => void {
  if (!io.isTTY || !c.enabled) return () => {}
  let i = 0
  const draw = () => io.stdout.write(`\r${c.dim(`${FRAMES[i++ % FRAMES.length]} ${text}`)}`)
  draw()
  const timer = setInterval(draw, 80)
  timer.unref()
  return () => {
    clearInterval(timer)
    io.stdout.write('\r\u001b[2K')
  }
}
