/** Child processes for the benchmarks: a request/response IPC worker, and one-shot scripts. */
import { fork } from 'node:child_process'

/**
 * Forks `script` as a request/response worker: `call(msg)` sends a message and resolves with the
 * worker's `{ ok: true, result }` answer (rejects on `{ ok: false, error }` or on exit).
 */
export function startWorker(script, args = [], execArgv = []) {
  const child = fork(script, args, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  let pending
  let exited = false
  child.on('message', (msg) => {
    const p = pending
    pending = undefined
    if (p === undefined) return
    if (msg.ok) p.resolve(msg.result)
    else p.reject(new Error(`worker ${script}: ${msg.error}`))
  })
  const exit = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      exited = true
      pending?.reject(new Error(`worker ${script} exited (${code ?? signal})`))
      pending = undefined
      resolve()
    })
  })
  return {
    pid: child.pid,
    call(msg) {
      if (exited) return Promise.reject(new Error(`worker ${script} has exited`))
      return new Promise((resolve, reject) => {
        pending = { resolve, reject }
        child.send(msg)
      })
    },
    /** Kills the worker if it is still running (by its own pid), and waits for it to exit. */
    async kill() {
      if (!exited) child.kill('SIGKILL')
      await exit
    },
    exited: () => exit,
  }
}

/**
 * Runs `script` once as a child (`node [...execArgv] script`), resolving with the single result it
 * sends over IPC (`process.send({ ok, result | error })`). Its stdout/stderr are passed through.
 */
export function runScript(script, args = [], execArgv = []) {
  return new Promise((resolve, reject) => {
    const child = fork(script, args, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    let answer
    child.on('message', (msg) => {
      answer = msg
    })
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      if (answer?.ok) resolve(answer.result)
      else if (answer !== undefined) reject(new Error(`${script}: ${answer.error}`))
      else reject(new Error(`${script} exited (${code ?? signal}) without a result`))
    })
  })
}
