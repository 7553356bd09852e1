import fs from 'node:fs'
import { pollUntil } from './poll.js'

/** One process, identified by pid and start time so a reused pid is never mistaken for it. */
export interface ProcessRef {
  readonly pid: number
  /** Field 22 of `/proc/PID/stat` (clock ticks since boot). */
  readonly startTime: string
}

/** What `/proc/PID/stat` says about a process. */
export interface ProcStat extends ProcessRef {
  /** `R`, `S`, `D`, `T` (stopped), `Z` (zombie)... */
  readonly state: string
  readonly ppid: number
}

/**
 * Reads `/proc/PID/stat`; `undefined` when the process does not exist (or `/proc` is unavailable).
 *
 * @example
 * ```ts
 * readProcStat(process.pid)?.state // 'R'
 * ```
 */
export function readProcStat(pid: number): ProcStat | undefined {
  let text: string
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const state = fields[0]
  const ppid = Number(fields[1])
  const startTime = fields[19]
  if (state === undefined || startTime === undefined || !Number.isFinite(ppid)) return undefined
  return { pid, state, ppid, startTime }
}

/**
 * The command line of `ref` (from `/proc/PID/cmdline`), or `undefined` when that process is gone --
 * including when its pid now belongs to another process.
 *
 * @example
 * ```ts
 * commandLine(postmaster) // ['/usr/lib/postgresql/15/bin/postgres', '-D', '/tmp/.../data']
 * ```
 */
export function commandLine(ref: ProcessRef): string[] | undefined {
  let text: string
  try {
    text = fs.readFileSync(`/proc/${ref.pid}/cmdline`, 'utf8')
  } catch {
    return undefined
  }
  // Read the start time after the command line: a pid reused in between shows up as a mismatch.
  if (processState(ref) === 'gone') return undefined
  const args = text.split('\0')
  if (args[args.length - 1] === '') args.pop() // the list ends with a NUL
  return args
}

/**
 * Reference to a running process, or `undefined` when it is gone or a zombie.
 *
 * @example
 * ```ts
 * const ref = processRef(pid) // keep it to signal exactly this process later
 * ```
 */
export function processRef(pid: number): ProcessRef | undefined {
  const stat = readProcStat(pid)
  if (stat === undefined || stat.state === 'Z' || stat.state === 'X') return undefined
  return { pid: stat.pid, startTime: stat.startTime }
}

/**
 * State of the exact process `ref`: `gone` (no such process, or the pid now belongs to another one),
 * `zombie` (dead, not yet reaped by its parent), `stopped` (SIGSTOP) or `running`.
 */
export function processState(ref: ProcessRef): 'gone' | 'zombie' | 'stopped' | 'running' {
  const stat = readProcStat(ref.pid)
  if (stat === undefined || stat.startTime !== ref.startTime) return 'gone'
  if (stat.state === 'Z' || stat.state === 'X') return 'zombie'
  if (stat.state === 'T' || stat.state === 't') return 'stopped'
  return 'running'
}

/**
 * The live descendants of a process (children, their children...), found through the `ppid` field of
 * every `/proc/*\/stat`. Zombies are left out.
 *
 * @example
 * ```ts
 * descendants(postmasterPid) // checkpointer, walwriter, backends...
 * ```
 */
export function descendants(pid: number): ProcessRef[] {
  let entries: string[]
  try {
    entries = fs.readdirSync('/proc')
  } catch {
    return []
  }
  const byParent = new Map<number, ProcStat[]>()
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    const stat = readProcStat(Number(entry))
    if (stat === undefined || stat.state === 'Z' || stat.state === 'X') continue
    const siblings = byParent.get(stat.ppid)
    if (siblings === undefined) byParent.set(stat.ppid, [stat])
    else siblings.push(stat)
  }
  const out: ProcessRef[] = []
  const queue = [pid]
  for (let parent = queue.shift(); parent !== undefined; parent = queue.shift()) {
    for (const child of byParent.get(parent) ?? []) {
      out.push({ pid: child.pid, startTime: child.startTime })
      queue.push(child.pid)
    }
  }
  return out
}

/**
 * Sends `signal` to every process of `refs` that is still the same process; never throws (a process
 * that vanished in between is skipped). Returns how many were signalled.
 *
 * @example
 * ```ts
 * signalProcesses([postmaster, ...descendants(postmaster.pid)], 'SIGSTOP')
 * ```
 */
export function signalProcesses(refs: readonly ProcessRef[], signal: NodeJS.Signals): number {
  let count = 0
  for (const ref of refs) {
    if (processState(ref) === 'gone') continue
    try {
      process.kill(ref.pid, signal)
      count++
    } catch {
      // ESRCH (exited meanwhile) or EPERM: best effort.
    }
  }
  return count
}

/**
 * Waits until none of `refs` runs any more. A dead but not yet reaped process (zombie) counts as
 * ended when `allowZombies` is true; otherwise it is waited for until its parent reaps it. Resolves
 * `true` when they all ended within `timeoutMs`, `false` otherwise.
 *
 * @example
 * ```ts
 * await waitForProcessesToEnd([ref], { timeoutMs: 5000, allowZombies: false })
 * ```
 */
export async function waitForProcessesToEnd(
  refs: readonly ProcessRef[],
  options: { timeoutMs: number; allowZombies: boolean },
): Promise<boolean> {
  const ended = (ref: ProcessRef): boolean => {
    const state = processState(ref)
    return state === 'gone' || (options.allowZombies && state === 'zombie')
  }
  const result = await pollUntil(() => (refs.every(ended) ? true : undefined), {
    timeoutMs: options.timeoutMs,
    intervalMs: 20,
  })
  return result === true
}

/**
 * SIGKILLs `root` and all its descendants, then waits until they are dead (zombies count as dead)
 * for up to `timeoutMs`. The descendants are scanned before the signal (once the root dies, its
 * children are re-parented and cannot be found by ppid any more) and once after. Resolves `false`
 * when something still runs at the deadline.
 *
 * @example
 * ```ts
 * await killProcessTree(postmaster, 5000)
 * ```
 */
export async function killProcessTree(root: ProcessRef, timeoutMs: number): Promise<boolean> {
  const before = descendants(root.pid)
  signalProcesses([root], 'SIGKILL')
  const seen = new Set(before.map((r) => r.pid))
  const children = [...before, ...descendants(root.pid).filter((r) => !seen.has(r.pid))]
  signalProcesses(children, 'SIGKILL')
  return waitForProcessesToEnd([root, ...children], { timeoutMs, allowZombies: true })
}

/**
 * SIGSTOPs `root` first (so it forks nothing new), then its descendants (scanned twice, to catch a
 * child forked just before the root stopped), and waits up to `timeoutMs` until all are stopped.
 * Returns the stopped processes, for {@link thawProcesses}; `undefined` when they did not all stop.
 *
 * @example
 * ```ts
 * const frozen = await freezeProcessTree(postmaster, 2000)
 * ```
 */
export async function freezeProcessTree(
  root: ProcessRef,
  timeoutMs: number,
): Promise<ProcessRef[] | undefined> {
  signalProcesses([root], 'SIGSTOP')
  const refs = [root]
  for (let scan = 0; scan < 2; scan++) {
    const fresh = descendants(root.pid).filter((c) => !refs.some((r) => r.pid === c.pid))
    signalProcesses(fresh, 'SIGSTOP')
    refs.push(...fresh)
  }
  const frozen = await pollUntil(
    () => (refs.every((r) => processState(r) !== 'running') ? true : undefined),
    {
      timeoutMs,
      intervalMs: 10,
    },
  )
  return frozen === undefined ? undefined : refs
}

/**
 * SIGCONTs `refs` and every current descendant of `root`: undoes {@link freezeProcessTree}.
 *
 * @example
 * ```ts
 * thawProcesses(frozen, postmaster)
 * ```
 */
export function thawProcesses(refs: readonly ProcessRef[], root?: ProcessRef): void {
  const children = root === undefined ? [] : descendants(root.pid)
  signalProcesses([...children, ...refs], 'SIGCONT')
}
