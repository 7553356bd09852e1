import { didYouMean } from '../router/config-checks.js'
import { redactUrl } from '../util/redact.js'
import { type Ansi, ansi, useColor } from './ansi.js'
import { checkCommand } from './check-command.js'
import type { CliIo } from './cli-io.js'
import { clusterCommand } from './cluster-command.js'
import { demoCommand } from './demo-command.js'
import { COMMAND_HELP, MAIN_HELP } from './help-text.js'
import { packageVersion } from './package-root.js'
import { statusCommand } from './status-command.js'
import { UsageError } from './usage-error.js'

export type { CliIo } from './cli-io.js'

type Command = (args: readonly string[], io: CliIo, c: Ansi, help: string) => Promise<number>

const COMMANDS: Readonly<Record<string, Command>> = {
  check: checkCommand,
  status: statusCommand,
  cluster: clusterCommand,
  demo: demoCommand,
}

/**
 * Runs the `routemate` command line in-process and resolves to its exit status: 0 success,
 * 1 failure (invalid config, a primary down, the demo failing), 2 usage error. Writes only to
 * `io`; never calls `process.exit`. Colours only when `io.isTTY` and `NO_COLOR` is unset
 * (`FORCE_COLOR` forces them); passwords never reach the output.
 *
 * @example
 * ```ts
 * const code = await runCli(['status', '--json'], { stdout: process.stdout, stderr: process.stderr, isTTY: false, env: process.env })
 * ```
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const c = ansi(useColor(io))
  const [first, ...rest] = argv
  try {
    if (first === undefined) throw new UsageError('missing command')
    if (first === '-h' || first === '--help') {
      io.stdout.write(MAIN_HELP)
      return 0
    }
    if (first === 'help') {
      const topic = rest[0]
      const text = topic === undefined ? MAIN_HELP : COMMAND_HELP[topic]
      if (text === undefined) throw unknownCommand(topic!)
      io.stdout.write(text)
      return 0
    }
    if (first === '-v' || first === '--version') {
      io.stdout.write(`${packageVersion()}\n`)
      return 0
    }
    if (first.startsWith('-')) throw new UsageError(`unknown option "${first}"`)
    const command = Object.hasOwn(COMMANDS, first) ? COMMANDS[first] : undefined
    if (command === undefined) throw unknownCommand(first)
    return await command(rest, io, c, COMMAND_HELP[first]!)
  } catch (err) {
    if (err instanceof UsageError) {
      const more = err.command === undefined ? 'routemate --help' : `routemate ${err.command} --help`
      io.stderr.write(`routemate: ${err.message}\nRun "${more}" for usage.\n`)
      return 2
    }
    const text = err instanceof Error ? err.message : String(err)
    io.stderr.write(`${c.red('✗')} ${redactUrl(text)}\n`)
    return 1
  }
}

function unknownCommand(name: string): UsageError {
  const hint = didYouMean(name, Object.keys(COMMANDS))
  return new UsageError(
    `unknown command "${name}"${hint ? ` (did you mean "${hint}"?)` : ''}; commands: ${Object.keys(COMMANDS).join(', ')}`,
  )
}
