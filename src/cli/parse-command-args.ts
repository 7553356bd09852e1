import { type ParseArgsConfig, parseArgs } from 'node:util'
import { UsageError } from './usage-error.js'

type Options = NonNullable<ParseArgsConfig['options']>

/** What a command's arguments parse to. */
export interface CommandArgs {
  readonly values: Record<string, string | boolean | undefined>
  readonly positionals: readonly string[]
}

/**
 * Parses one command's arguments with `node:util` `parseArgs` (strict; `-h`/`--help` always
 * accepted), turning its errors into {@link UsageError}s that name the command.
 *
 * @example
 * ```ts
 * parseCommandArgs('status', ['cfg.yaml', '--json'], { json: { type: 'boolean' } }, 1)
 * ```
 */
export function parseCommandArgs(
  command: string,
  args: readonly string[],
  options: Options,
  maxPositionals: number,
): CommandArgs {
  let parsed: CommandArgs
  try {
    parsed = parseArgs({
      args: [...args],
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    }) as CommandArgs
  } catch (err) {
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!
    throw new UsageError(message.replace(/\. To specify a positional argument.*$/, ''), command)
  }
  if (parsed.values.help !== true && parsed.positionals.length > maxPositionals) {
    const extra = parsed.positionals.slice(maxPositionals).join(' ')
    throw new UsageError(`unexpected argument${extra.includes(' ') ? 's' : ''}: ${extra}`, command)
  }
  return parsed
}
