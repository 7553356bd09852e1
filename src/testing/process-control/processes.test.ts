import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { commandLine, processRef, processState, readProcStat, waitForProcessesToEnd } from './processes.js'

describe('the /proc reader', () => {
  it('reads state, parent and start time of a live process', () => {
    const stat = readProcStat(process.pid)
    expect(stat?.pid).toBe(process.pid)
    expect(stat?.ppid).toBe(process.ppid)
    expect(stat?.state).toMatch(/^[RSD]$/)
    expect(stat?.startTime).toMatch(/^\d+$/)
    expect(readProcStat(2 ** 22 + 1)).toBeUndefined() // above pid_max: never a process
  })

  it('guards against pid reuse: the same pid with another start time is another process', () => {
    const ref = processRef(process.pid)
    expect(ref).toBeDefined()
    if (ref === undefined) return
    expect(processState(ref)).toBe('running')
    expect(commandLine(ref)?.length).toBeGreaterThan(0)
    const impostor = { pid: ref.pid, startTime: String(Number(ref.startTime) + 1) }
    expect(processState(impostor)).toBe('gone')
    expect(commandLine(impostor)).toBeUndefined()
  })

  it('sees a child come and go', async () => {
    const child = spawn('sleep', ['5'], { stdio: 'ignore' })
    const ref = processRef(child.pid ?? -1)
    expect(ref).toBeDefined()
    if (ref === undefined) return
    expect(commandLine(ref)).toEqual(['sleep', '5'])
    expect(await waitForProcessesToEnd([ref], { timeoutMs: 100, allowZombies: true })).toBe(false)
    child.kill('SIGKILL')
    expect(await waitForProcessesToEnd([ref], { timeoutMs: 5000, allowZombies: false })).toBe(true)
    expect(processState(ref)).toBe('gone')
  })
})
