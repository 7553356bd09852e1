import type { HealthCheckConfig, RouterOptions } from '../router/options.js'
import { createRouter, type Router } from '../router/router.js'
import { redactSecrets, redactUrl } from '../util/redact.js'
import type { Ansi } from './ansi.js'
import { awaitKnownLag } from './await-known-lag.js'
import { errorText, failureText, problemLines } from './check-command.js'
import type { CliIo } from './cli-io.js'
import { type CliConfig, loadCliConfig } from './load-cli-config.js'
import { parseCommandArgs } from './parse-command-args.js'
import { startSpinner } from './spinner.js'
import { buildStatusReport } from './status-report.js'
import { renderStatus } from './status-table.js'
import { UsageError } from './usage-error.js'

/**
 * `routemate status [config] [--json] [--timeout ms]`: probes every node once and prints a table
 * (or `--json`); exit 1 when a cluster's primary is down, untrusted or not found, else 0.
 */
export async function statusCommand(
  args: readonly string[],
  io: CliIo,
  c: Ansi,
  help: string,
): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    'status',
    args,
    { json: { type: 'boolean' }, timeout: { type: 'string' } },
    1,
  )
  if (values.help === true) {
    io.stdout.write(help)
    return 0
  }
  const json = values.json === true
  const timeoutMs = parseTimeout(values.timeout)
  let loaded: CliConfig
  try {
    loaded = await loadCliConfig(positionals[0], { env: io.env, cwd: io.cwd ?? process.cwd() })
  } catch (err) {
    if (json) {
      const errors = problemLines(err)
      const body = { version: 1, ok: false, error: errorText(err), ...(errors.length > 1 ? { errors } : {}) }
      io.stdout.write(`${JSON.stringify(body, null, 2)}\n`)
    } else {
      io.stderr.write(failureText(err, c))
    }
    return 1
  }
  const redact = (text: string) => redactUrl(redactSecrets(text, loaded.secrets))
  let router: Router | undefined
  let stats: ReturnType<Router['stats']>
  const nodes = loaded.resolved.clusters.reduce((n, cl) => n + cl.replicas.length + (cl.primary ? 1 : 0), 0)
  const stop = json ? () => {} : startSpinner(io, c, `probing ${nodes} nodes...`)
  try {
    const options = probeOptions(loaded.options, timeoutMs)
    router = createRouter(options)
    await router.ready()
    const hc = options.healthCheck as HealthCheckConfig
    const fileHc = loaded.resolved.healthCheck
    await awaitKnownLag(router, (hc.intervalMs ?? fileHc.intervalMs) + (hc.timeoutMs ?? fileHc.timeoutMs))
    stats = router.stats()
  } catch (err) {
    stop()
    await router?.close({ timeoutMs: 1000 })
    return fail(io, c, json, `${loaded.file.displayName}: ${redact(errorText(err))}`)
  }
  stop()
  await router.close({ timeoutMs: 1000 })
  const report = buildStatusReport(stats, loaded.resolved, loaded.file.displayName, redact)
  io.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : renderStatus(report, c))
  return report.ok ? 0 : 1
}

function parseTimeout(value: string | boolean | undefined): number | undefined {
  if (value === undefined || typeof value === 'boolean') return undefined
  const ms = Number(value)
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(ms) || ms < 1 || ms > 600_000) {
    throw new UsageError(`--timeout: expected whole milliseconds from 1 to 600000, got "${value}"`, 'status')
  }
  return ms
}

/**
 * The file's options with health checks set up for one round of probes: on even where the file
 * turns them off, one failed probe marks a node down, `--timeout` as the probe deadline (the
 * interval widened to stay above it).
 */
export function probeOptions(options: RouterOptions, timeoutMs: number | undefined): RouterOptions {
  const hc: HealthCheckConfig = typeof options.healthCheck === 'object' ? { ...options.healthCheck } : {}
  hc.failureThreshold = 1
  if (timeoutMs !== undefined) {
    hc.timeoutMs = timeoutMs
    const interval = Math.max(hc.intervalMs ?? 1000, timeoutMs + 1)
    hc.intervalMs = interval
    if (hc.maxBackoffMs !== undefined && hc.maxBackoffMs < interval) hc.maxBackoffMs = interval
  }
  return { ...options, healthCheck: hc }
}

function fail(io: CliIo, c: Ansi, json: boolean, message: string): number {
  if (json) io.stdout.write(`${JSON.stringify({ version: 1, ok: false, error: message }, null, 2)}\n`)
  else io.stderr.write(`${c.red('✗')} ${message}\n`)
  return 1
}
