import { spawn } from 'node:child_process'
import path from 'node:path'

/** How to run one command; see {@link runCommand}. */
export interface RunCommandOptions {
  /** Working directory; pick one the target user can read (never a 0700 home). */
  readonly cwd: string
  /** Full environment of the command. */
  readonly env: NodeJS.ProcessEnv
  /** Run as this uid/gid (only when we are root). */
  readonly uid?: number
  readonly gid?: number
  /** Hard bound: the command is SIGKILLed after this many ms. */
  readonly timeoutMs: number
}

/** Exit status and output of a finished command. */
export interface RunCommandResult {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  /** `stdout` and `stderr`, trimmed and joined, for error messages. */
  readonly output: string
}

const MAX_OUTPUT = 64 * 1024

/**
 * Runs a command without a shell and collects its output, SIGKILLing it after `timeoutMs`. Resolves
 * with the exit status whatever it is; rejects only when the command cannot be started or times out.
 *
 * When `uid`/`gid` are given (we are root), the command runs as that user with no supplementary
 * groups, like `runuser -u postgres --`.
 *
 * @example
 * ```ts
 * const r = await runCommand('/usr/lib/postgresql/15/bin/postgres', ['--version'], { cwd: '/', env: process.env, timeoutMs: 5000 })
 * ```
 */
export function runCommand(
  file: string,
  args: readonly string[],
  options: RunCommandOptions,
): Promise<RunCommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, [...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.uid === undefined ? {} : { uid: options.uid }),
      ...(options.gid === undefined ? {} : { gid: options.gid }),
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      if (stdout.length < MAX_OUTPUT) stdout += chunk.toString('utf8')
    })
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_OUTPUT) stderr += chunk.toString('utf8')
    })
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, options.timeoutMs)
    child.once('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      const output = [stdout.trim(), stderr.trim()].filter((s) => s !== '').join('\n')
      if (timedOut) {
        reject(new Error(`${path.basename(file)} did not finish within ${options.timeoutMs} ms: ${output}`))
        return
      }
      resolve({ code, signal, stdout, stderr, output })
    })
  })
}
