/**
 * The `routemate` executable (`dist/cli/main.js`, with a `#!/usr/bin/env node` banner): runs
 * {@link runCli} on the process's arguments and streams and sets the exit status.
 *
 * @module
 */
import { runCli } from './run-cli.js'

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  isTTY: process.stdout.isTTY === true,
  env: process.env,
})
