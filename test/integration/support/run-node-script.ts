/**
 * Runs an ES module script in a child `node` (from the repository root, so it can import `dist/`)
 * and collects its output: for tests of what happens when a process exits.
 */
import { spawn } from 'node:child_process'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { REPO_ROOT } from '../../support/ensure-built.js'

/** How a child script ended. */
export interface NodeScriptRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** `import` specifier of a file of the built package, e.g. `distUrl('testing/index.js')`. */
export function distUrl(file: string): string {
  return JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'dist', file)).href)
}

/**
 * Runs `script` with `node --input-type=module`; SIGKILLs it after `timeoutMs` (default 60 s).
 * Never rejects on a non-zero exit.
 *
 * @example
 * ```ts
 * const run = await runNodeScript(`console.log(1)`) // { code: 0, stdout: '1\n', stderr: '' }
 * ```
 */
export function runNodeScript(script: string, timeoutMs = 60_000): Promise<NodeScriptRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c
    })
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.once('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}
