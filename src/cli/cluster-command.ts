import { spawn } from 'node:child_process'
import type { Ansi } from './ansi.js'
import type { CliIo } from './cli-io.js'
import { parseCommandArgs } from './parse-command-args.js'
import { splitStatements } from './split-statements.js'
import { UsageError } from './usage-error.js'

/** What `routemate cluster` needs of a `routemate/testing` cluster (pg and MariaDB alike). */
interface LocalCluster {
  readonly primary: { readonly url: string; readonly port: number }
  readonly replicas: readonly { readonly url: string; readonly port: number }[]
  query(name: string, sql: string): Promise<unknown>
  waitForReplication(): Promise<void>
  stop(): Promise<void>
}

const KINDS = {
  pg: { dialect: 'postgres', label: 'PostgreSQL', replicas: 2 },
  mariadb: { dialect: 'mysql', label: 'MariaDB', replicas: 1 },
} as const
type Kind = keyof typeof KINDS

const SIGNALS = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const

/**
 * `routemate cluster [pg|mariadb] [--replicas N] [--sql TEXT]... [-- command...]`: starts a
 * throwaway local primary + replicas with `routemate/testing`, runs the `--sql` statements on the
 * primary and waits until every replica has replayed them. With a command: runs it with
 * `DATABASE_URL` and `REPLICA_URLS` (comma-separated) set, stops the cluster and returns the
 * command's exit status. Without: prints those variables as `export` lines and keeps the cluster
 * until SIGINT/SIGTERM/SIGHUP (then 0). Linux only, as `routemate/testing`.
 */
export async function clusterCommand(
  args: readonly string[],
  io: CliIo,
  c: Ansi,
  help: string,
): Promise<number> {
  const dash = args.indexOf('--')
  const own = dash < 0 ? args : args.slice(0, dash)
  const command = dash < 0 ? [] : args.slice(dash + 1)
  const { values, positionals } = parseCommandArgs(
    'cluster',
    own,
    { replicas: { type: 'string' }, sql: { type: 'string', multiple: true } },
    1,
  )
  if (values.help === true) {
    io.stdout.write(help)
    return 0
  }
  const kindName = positionals[0] ?? 'pg'
  if (!Object.hasOwn(KINDS, kindName)) {
    throw new UsageError(`expected pg or mariadb, got "${kindName}"`, 'cluster')
  }
  const kind = KINDS[kindName as Kind]
  const replicas = parseReplicas(values.replicas, kind.replicas)
  const sql = ((values as { sql?: string[] }).sql ?? []).flatMap((t) => splitStatements(t, kind.dialect))
  if (dash >= 0 && command.length === 0) throw new UsageError('expected a command after "--"', 'cluster')

  // A signal while the cluster starts is handled once it has started (stop it, then exit).
  let interrupted: number | undefined
  let wake: (() => void) | undefined
  const onSignal = (signal: keyof typeof SIGNALS) => () => {
    interrupted ??= SIGNALS[signal]
    wake?.()
  }
  const handlers = Object.keys(SIGNALS).map((s) => [s, onSignal(s as keyof typeof SIGNALS)] as const)
  for (const [s, h] of handlers) process.on(s, h)
  let cluster: LocalCluster | undefined
  try {
    const what = `a local ${kind.label} primary + ${replicas} ${replicas === 1 ? 'replica' : 'replicas'}`
    io.stderr.write(`${c.dim(`starting ${what}...`)}\n`)
    try {
      cluster = await start(kindName as Kind, replicas)
    } catch (err) {
      io.stderr.write(`${c.red('✗')} ${err instanceof Error ? err.message : String(err)}\n`)
      return 1
    }
    for (const statement of sql) {
      try {
        await cluster.query('primary', statement)
      } catch (err) {
        io.stderr.write(`${c.red('✗')} --sql ${JSON.stringify(statement)}: ${(err as Error).message}\n`)
        return 1
      }
    }
    await cluster.waitForReplication()
    const ports = [cluster.primary, ...cluster.replicas].map((n) => n.port).join(', ')
    const env = {
      DATABASE_URL: cluster.primary.url,
      REPLICA_URLS: cluster.replicas.map((r) => r.url).join(','),
    }
    const ran =
      sql.length === 0 ? '' : `, ${sql.length} SQL ${sql.length === 1 ? 'statement' : 'statements'} run`
    if (command.length > 0) {
      io.stderr.write(
        `${c.green('✓')} ${what} on 127.0.0.1 ports ${ports}${ran}; running ${command.join(' ')}\n`,
      )
      if (interrupted !== undefined) return interrupted
      return await runCommand(command, io, env)
    }
    io.stdout.write(`export DATABASE_URL='${env.DATABASE_URL}'\nexport REPLICA_URLS='${env.REPLICA_URLS}'\n`)
    io.stderr.write(
      `${c.green('✓')} ${what} on 127.0.0.1 ports ${ports}${ran}; Ctrl-C stops it and deletes its data\n`,
    )
    if (interrupted === undefined) {
      // The servers are detached processes: a ref'd timer keeps this one alive until a signal.
      const keepAlive = setInterval(() => {}, 1 << 30)
      await new Promise<void>((resolve) => (wake = resolve))
      clearInterval(keepAlive)
    }
    return 0
  } finally {
    await cluster?.stop()
    for (const [s, h] of handlers) process.off(s, h)
  }
}

function parseReplicas(value: string | boolean | undefined, fallback: number): number {
  if (value === undefined || typeof value === 'boolean') return fallback
  if (!/^\d{1,2}$/.test(value)) {
    throw new UsageError(`--replicas: expected a whole number, got "${value}"`, 'cluster')
  }
  return Number(value)
}

/** Starts the cluster; `routemate/testing` is loaded only here (it loads `pg` or `mysql2` itself). */
async function start(kind: Kind, replicas: number): Promise<LocalCluster> {
  const testing = await import('../testing/index.js')
  return kind === 'pg' ? testing.startPgCluster({ replicas }) : testing.startMariaDbCluster({ replicas })
}

/**
 * Runs the command (no shell) with `env` added; inherits the terminal when `io` is the process's
 * own, else pipes its output into `io`. Resolves to its exit status (128 + n after signal n).
 */
function runCommand(command: readonly string[], io: CliIo, env: Record<string, string>): Promise<number> {
  const inherit = io.stdout === process.stdout
  const [file, ...rest] = command as [string, ...string[]]
  const child = spawn(file, rest, {
    cwd: io.cwd,
    env: { ...process.env, ...io.env, ...env },
    stdio: inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'],
  })
  if (!inherit) {
    child.stdout?.setEncoding('utf8').on('data', (s: string) => io.stdout.write(s))
    child.stderr?.setEncoding('utf8').on('data', (s: string) => io.stderr.write(s))
  }
  return new Promise((resolve) => {
    child.on('error', (err) => {
      io.stderr.write(`✗ cannot run ${file}: ${err.message}\n`)
      resolve(127)
    })
    child.on('close', (code, signal) => {
      resolve(code ?? (signal !== null && signal in SIGNALS ? SIGNALS[signal as keyof typeof SIGNALS] : 1))
    })
  })
}
