/** The closed loop shared by the throughput variants (pg and mysql2). */

// pg.Pool closes connections idle for 10 s by default; a variant idles longer than that while the
// others take their turns, so every round would start by reconnecting (SCRAM + a server fork each).
// Same setting for raw drivers and the router: idle connections are kept for a minute.
export const IDLE_MS = 60_000

/** Runs `concurrency` closed-loop callers of `op(i)` for `seconds`; returns the count and timings. */
export async function closedLoop(op, concurrency, seconds) {
  let stop = false
  let count = 0
  let errors = 0
  let firstError
  let i = 0
  const timer = setTimeout(() => {
    stop = true
  }, seconds * 1000)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const caller = async () => {
    while (!stop) {
      try {
        await op(i++ & 0x3fffffff)
        count++
      } catch (err) {
        errors++
        firstError ??= err
        if (errors > 100) stop = true
      }
    }
  }
  const callers = []
  for (let c = 0; c < concurrency; c++) callers.push(caller())
  await Promise.all(callers)
  const ms = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  clearTimeout(timer)
  if (firstError !== undefined && count === 0) throw firstError
  return {
    count,
    errors,
    firstError: firstError === undefined ? undefined : String(firstError?.message ?? firstError),
    ms,
    qps: (count / ms) * 1000,
    // client-process CPU (user + system) per completed query, in microseconds
    cpuUsPerQuery: (cpu.user + cpu.system) / Math.max(count, 1),
  }
}
