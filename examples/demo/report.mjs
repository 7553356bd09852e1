// Bookkeeping of the demo: what the workers did (per operation, which node served each read,
// failures and their distinct messages) and the closing summary. No routemate API in here but
// `redactUrl`, which strips a password from any text (a habit worth keeping for error messages).

import { redactUrl } from '../../dist/index.js'

export class Tally {
  done = {} // operation -> successes
  failed = {} // operation -> failures
  errors = new Map() // `operation: message` -> count, in order of first appearance
  servedBy = {} // operation -> node name -> count (reads only)
  retries = 0
  inFlight = 0 // failures of transactions under way on replica1 when it was killed (expected)

  constructor(operations) {
    for (const op of operations) {
      this.done[op] = 0
      this.failed[op] = 0
      this.servedBy[op] = {}
    }
  }

  ok(op, node) {
    this.done[op]++
    if (node !== undefined) this.servedBy[op][node] = (this.servedBy[op][node] ?? 0) + 1
  }

  /** `where`: the node a transaction ran on, and whether it was under way there when that node was killed. */
  fail(op, err, { node, inFlight = false } = {}) {
    this.failed[op]++
    if (inFlight) this.inFlight++
    const on = inFlight ? ` under way on ${node} when it was killed` : node === undefined ? '' : ` on ${node}`
    const key = `${op}${on}: ${redactUrl(err instanceof Error ? err.message : String(err))}`
    this.errors.set(key, (this.errors.get(key) ?? 0) + 1)
  }

  get total() {
    return Object.values(this.done).reduce((a, b) => a + b, 0)
  }

  get failures() {
    return Object.values(this.failed).reduce((a, b) => a + b, 0)
  }
}

/**
 * Prints the summary; returns what went wrong (empty when the run went as it should: no write
 * failed, no read failed but transactions under way on replica1 when it was killed, replica1 was
 * marked down after the kill and re-admitted after the restart).
 */
export function printSummary(out, { seconds, workers, tally, nodes, timeline }) {
  const line = (label, text) => out.log(`  ${label.padEnd(15)}${text}`)
  const ops = Object.keys(tally.done)
  out.log()
  out.log(out.paint('bold', `summary (${seconds} s, ${workers} workers)`))
  const count = (n, op) => `${n} ${n === 1 ? op : `${op}s`}`
  line('operations', ops.map((op) => count(tally.done[op], op)).join(', '))
  const failedOps = ops.filter((op) => tally.failed[op] > 0)
  line('failed', tally.failures === 0 ? '0' : failedOps.map((op) => count(tally.failed[op], op)).join(', '))
  for (const [key, count] of [...tally.errors].slice(0, 5)) line('', `${count} x ${key}`)
  if (tally.errors.size > 5) line('', `... and ${tally.errors.size - 5} other distinct errors`)
  if (tally.inFlight > 0) {
    line('', out.paint('dim', '(expected: a BEGIN that fails is retried on another node, a transaction'))
    line('', out.paint('dim', ' already under way never is: its statements ran on the dead server;'))
    line('', out.paint('dim', ' the caller may run it again)'))
  }
  for (const [op, label] of [
    ['read', 'reads served'],
    ['read-only transaction', 'ro-tx served'],
  ]) {
    const by = nodes.map((name) => `${name} ${tally.servedBy[op][name] ?? 0}`)
    line(label, `${by.join(', ')}  (by inet_server_port())`)
  }

  const t = (ms) => `+${(ms / 1000).toFixed(2)}s`
  const { killAt, downAt, downSource, restartAt, restartedAt, upAt } = timeline
  line(
    'replica1 down',
    downAt === undefined
      ? out.paint('red', `never marked down after the kill at ${t(killAt)}`)
      : `killed at ${t(killAt)}, marked down ${Math.round(downAt - killAt)} ms later (by a failed ${downSource})`,
  )
  line(
    'replica1 up',
    upAt === undefined
      ? out.paint('red', `never re-admitted after the restart at ${t(restartAt)}`)
      : `restarted at ${t(restartAt)} (accepting connections ${Math.round(restartedAt - restartAt)} ms later), ` +
          `re-admitted ${Math.round(upAt - restartAt)} ms after the restart`,
  )
  line('retries', `${tally.retries} reads retried on another node`)

  const problems = []
  const failedWrites = tally.failed.write + tally.failed.transaction
  if (failedWrites > 0) problems.push(`${failedWrites} writes failed`)
  const otherFailures = tally.failures - tally.inFlight - failedWrites
  if (otherFailures > 0)
    problems.push(`${otherFailures} other operation${otherFailures === 1 ? '' : 's'} failed`)
  if (downAt === undefined) problems.push('replica1 was not detected down')
  if (upAt === undefined) problems.push('replica1 was not re-admitted')
  const expected =
    tally.inFlight === 0
      ? ''
      : ` (the only failures: ${tally.inFlight} transaction${tally.inFlight === 1 ? '' : 's'} under way on replica1 when it was killed)`
  line(
    'result',
    problems.length === 0
      ? `${out.paint('green', 'OK')}${expected}`
      : out.paint('red', `FAILED: ${problems.join('; ')}`),
  )
  return problems
}
