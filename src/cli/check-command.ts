import { ConfigFileError } from '../config-file/config-file-error.js'
import type { ResolvedConfig } from '../router/resolved-config.js'
import type { Ansi } from './ansi.js'
import type { CliIo } from './cli-io.js'
import { type CliConfig, loadCliConfig } from './load-cli-config.js'
import { parseCommandArgs } from './parse-command-args.js'

/**
 * `routemate check [config]`: loads and validates the file (or a connection URL, see
 * `loadCliConfig`); prints
 * `✓ routemate.config.yaml is valid: 2 shards, 6 nodes (postgres)`, or every problem of the file
 * (`✗ routemate.config.yaml:4:12 primary.url: ...`, one line each, in file order, then
 * `routemate.config.yaml: 3 errors` when there are several). Exit 0 or 1.
 */
export async function checkCommand(
  args: readonly string[],
  io: CliIo,
  c: Ansi,
  help: string,
): Promise<number> {
  const { values, positionals } = parseCommandArgs('check', args, {}, 1)
  if (values.help === true) {
    io.stdout.write(help)
    return 0
  }
  let loaded: CliConfig
  try {
    loaded = await loadCliConfig(positionals[0], { env: io.env, cwd: io.cwd ?? process.cwd() })
  } catch (err) {
    io.stderr.write(failureText(err, c))
    return 1
  }
  io.stdout.write(`${c.green('✓')} ${loaded.file.displayName} is valid: ${describeConfig(loaded.resolved)}\n`)
  return 0
}

/** `2 shards, 6 nodes (postgres)`, `1 primary, 2 replicas (mysql)`, `3 nodes, roles discovered (postgres)`. */
export function describeConfig(resolved: ResolvedConfig): string {
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`
  const nodes = resolved.clusters.reduce((sum, cl) => sum + cl.replicas.length + (cl.primary ? 1 : 0), 0)
  const dialect = ` (${resolved.driver.dialect})`
  if (resolved.sharded)
    return `${count(resolved.clusters.length, 'shard', 'shards')}, ${count(nodes, 'node', 'nodes')}${dialect}`
  const [cluster] = resolved.clusters
  if (cluster?.discovery) return `${count(nodes, 'node', 'nodes')}, roles discovered${dialect}`
  return `1 primary, ${count(cluster?.replicas.length ?? 0, 'replica', 'replicas')}${dialect}`
}

/**
 * Why a config file could not be loaded, for the terminal: `✗ <problem>` per problem of the file,
 * then a count line when there are several.
 */
export function failureText(err: unknown, c: Ansi): string {
  const lines = problemLines(err)
  const out = lines.map((line) => `${c.red('✗')} ${line}\n`).join('')
  return lines.length > 1 ? `${out}${errorText(err).split('\n')[0]}\n` : out
}

/** The problems of a config file error, one located line each; the message of any other error. */
export function problemLines(err: unknown): string[] {
  if (err instanceof ConfigFileError && (err.errors.length > 1 || err.message.includes('\n'))) {
    return err.errors.map((p) => p.message)
  }
  return [errorText(err)]
}

/** An error's message (config errors are already redacted). */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
