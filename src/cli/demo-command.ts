import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Ansi } from './ansi.js'
import type { CliIo } from './cli-io.js'
import { packageRoot } from './package-root.js'
import { parseCommandArgs } from './parse-command-args.js'
import { UsageError } from './usage-error.js'

/**
 * `routemate demo [--seconds N]`: runs `examples/demo/demo.mjs` of a repository checkout in a
 * child `node`, with the same arguments, and returns its exit status. The demo ships with the
 * repository, not the npm package: elsewhere it says so and exits 1.
 */
export async function demoCommand(
  args: readonly string[],
  io: CliIo,
  c: Ansi,
  help: string,
): Promise<number> {
  const { values } = parseCommandArgs('demo', args, { seconds: { type: 'string' } }, 0)
  if (values.help === true) {
    io.stdout.write(help)
    return 0
  }
  const seconds = values.seconds
  if (typeof seconds === 'string' && !(Number(seconds) >= 2)) {
    throw new UsageError(`--seconds: expected a number >= 2, got "${seconds}"`, 'demo')
  }
  const root = packageRoot()
  const script = root === undefined ? undefined : join(root, 'examples', 'demo', 'demo.mjs')
  if (root === undefined || script === undefined || !existsSync(script)) {
    io.stderr.write(
      `${c.red('✗')} the demo ships with the routemate repository (examples/demo), not the npm package;\n` +
        '  in a checkout of the repository run: npm install && npm run demo\n',
    )
    return 1
  }
  if (!existsSync(join(root, 'dist', 'index.js'))) {
    io.stderr.write(
      `${c.red('✗')} the demo runs on the built package: run "npm run build" in ${root} first\n`,
    )
    return 1
  }
  const argv = [script, ...(typeof seconds === 'string' ? ['--seconds', seconds] : [])]
  return runNode(argv, io, root)
}

/** Runs `node argv...`; inherits the terminal when `io` is the process's own, else pipes into `io`. */
function runNode(argv: string[], io: CliIo, cwd: string): Promise<number> {
  const inherit = io.stdout === process.stdout
  const child = spawn(process.execPath, argv, {
    cwd,
    env: { ...process.env, ...io.env },
    stdio: inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'],
  })
  if (!inherit) {
    child.stdout?.setEncoding('utf8').on('data', (s: string) => io.stdout.write(s))
    child.stderr?.setEncoding('utf8').on('data', (s: string) => io.stderr.write(s))
  }
  // Ctrl-C reaches the child too (same process group): let it stop its cluster and report.
  const ignore = () => {}
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
  for (const s of signals) process.on(s, ignore)
  return new Promise((resolve) => {
    child.on('error', (err) => {
      io.stderr.write(`✗ cannot start node: ${err.message}\n`)
      resolve(1)
    })
    child.on('close', (code, signal) => {
      for (const s of signals) process.off(s, ignore)
      resolve(code ?? (signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : 1))
    })
  })
}
