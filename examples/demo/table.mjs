// Terminal output of the demo: timestamped log lines, and a live per-node table built from
// `router.stats()`.
//
// On a TTY the table sits under the log and is redrawn in place (cursor up, clear to the end of the
// screen, draw again), with the node states in colour. Anywhere else (a pipe, a CI log) there are no
// escape codes at all: log lines are printed as they come, and the table becomes a one-line
// snapshot printed every ~2 s.

const COLOURS = { red: 31, green: 32, yellow: 33, cyan: 36, bold: 1, dim: 2 }
const STATE_COLOUR = { up: 'green', suspect: 'yellow', down: 'red' }

/** A fixed-width cell; numbers and '-' are right-aligned. */
function cell(value, width, right = false) {
  const text = String(value)
  return right ? text.padStart(width) : text.padEnd(width)
}

function visibleLength(text) {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escape codes on purpose
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').length
}

function ms(value, digits = 1) {
  return value === undefined ? '-' : value.toFixed(digits)
}

export class LiveOutput {
  #stream
  #tty
  #colour
  #t0 = performance.now()
  #drawn = 0 // lines of the table now on screen, below the log (TTY only)
  #table = [] // the table's last lines, redrawn after each log line (TTY only)
  #lastSnapshot = 0
  #bursts = new Map() // line -> { count, detail, colour }, printed by flushCounts()
  #lastFlush = 0

  constructor(stream = process.stdout) {
    this.#stream = stream
    this.#tty = stream.isTTY === true
    this.#colour = this.#tty && !('NO_COLOR' in process.env)
    if (this.#tty) {
      this.#stream.write('\x1b[?25l') // hide the cursor while the table is redrawn...
      process.on('exit', () => this.#stream.write('\x1b[?25h')) // ...and always give it back
    }
  }

  /** Whether the table is redrawn in place (stdout is a terminal). */
  get tty() {
    return this.#tty
  }

  /** Restarts the clock of the `[+1.23s]` timestamps. */
  startClock() {
    this.#t0 = performance.now()
  }

  /** Milliseconds since `startClock()`. */
  now() {
    return performance.now() - this.#t0
  }

  /** `text` in a colour (on a terminal; plain text elsewhere). */
  paint(colour, text) {
    return this.#colour ? `\x1b[${COLOURS[colour]}m${text}\x1b[0m` : text
  }

  /** Prints a line above the live table. */
  log(line = '') {
    this.#write(`${line}\n`)
  }

  /** Prints a line stamped with the time since `startClock()`, e.g. `[+ 6.02s] node:down ...`. */
  event(line, colour) {
    const t = this.now() / 1000
    const stamp = `[${t < 0 ? '-' : '+'}${Math.abs(t).toFixed(2).padStart(5)}s]`
    this.log(`${this.paint('dim', stamp)} ${colour ? this.paint(colour, line) : line}`)
  }

  /** Counts one occurrence of a noisy event; `update()` prints each line once a second with its count. */
  count(line, detail, colour) {
    const entry = this.#bursts.get(line) ?? { count: 0, detail, colour }
    entry.count++
    this.#bursts.set(line, entry)
  }

  /** Prints the counted events (`retry ... x12 in the last second: ...`) and starts counting anew. */
  flushCounts() {
    this.#lastFlush = this.now()
    for (const [line, { count, detail, colour }] of this.#bursts) {
      this.event(`${line} x${count} in the last second: ${detail}`, colour)
    }
    this.#bursts.clear()
  }

  /**
   * Shows the node table. Call it often (every 500 ms): a TTY redraws at once, a pipe gets one
   * plain snapshot line every `everyMs` (or at once with `force`).
   */
  update(stats, baseline, status, { force = false, everyMs = 2000 } = {}) {
    if (force || this.now() - this.#lastFlush >= 950) this.flushCounts()
    if (this.#tty) {
      this.#table = [...this.#tableLines(stats, baseline), `  ${status}`]
      this.#write('')
    } else if (force || this.now() - this.#lastSnapshot >= everyMs - 50) {
      this.#lastSnapshot = this.now()
      this.event(`${snapshotLine(stats, baseline)} | ${status}`)
    }
  }

  /** Leaves the last table on screen; what is printed next goes under it. */
  freeze() {
    this.#table = []
    this.#drawn = 0
  }

  // One write per change, so the terminal never shows a half-drawn table.
  #write(text) {
    if (!this.#tty) {
      this.#stream.write(text)
      return
    }
    const erase = this.#drawn > 0 ? `\x1b[${this.#drawn}A\r\x1b[J` : ''
    const table = this.#table.map((l) => `${l}\n`).join('')
    // Count screen rows, not lines: a line wider than the terminal wraps onto more rows.
    const columns = this.#stream.columns || 80
    this.#drawn = this.#table.reduce(
      (rows, l) => rows + Math.max(1, Math.ceil(visibleLength(l) / columns)),
      0,
    )
    this.#stream.write(erase + text + table)
  }

  #tableLines(stats, baseline) {
    const fallingBack = stats.clusters.some((c) => c.fallingBack)
    const head = `  ${cell('node', 10)}${cell('role', 9)}${cell('state', 9)}${cell('queries', 9, true)}${cell('in-flight', 11, true)}${cell('latency ms', 12, true)}${cell('lag ms', 8, true)}`
    const rows = stats.nodes.map((n) => {
      // Pad before colouring: escape codes have no width on screen but do have a length.
      const state = this.paint(STATE_COLOUR[n.state], cell(n.state, 9))
      const lag = n.role === 'replica' && n.state !== 'down' ? ms(n.lagMs, 0) : '-'
      let note = ''
      if (n.role === 'replica' && !n.usable) note = `no reads: ${n.unusableReason}`
      if (n.role === 'primary' && fallingBack) note = 'serving reads (fallback)'
      return `  ${cell(n.name, 10)}${cell(n.role, 9)}${state}${cell(n.queries - (baseline[n.name] ?? 0), 9, true)}${cell(n.inFlight, 11, true)}${cell(ms(n.latencyMs, 2), 12, true)}${cell(lag, 8, true)}${note && `  ${this.paint('dim', note)}`}`
    })
    return ['', this.paint('bold', head), ...rows]
  }
}

/** The whole table on one line, for logs: `primary up q=812 in=3 1.2ms | replica1 down ...`. */
export function snapshotLine(stats, baseline) {
  return stats.nodes
    .map((n) => {
      const lag = n.role === 'replica' && n.state !== 'down' ? ` lag=${ms(n.lagMs, 0)}ms` : ''
      const q = n.queries - (baseline[n.name] ?? 0)
      return `${n.name} ${n.state} q=${q} in=${n.inFlight} ${ms(n.latencyMs, 2)}ms${lag}`
    })
    .join(' | ')
}
