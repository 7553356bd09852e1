/**
 * Process control shared by the PostgreSQL and MariaDB halves of `routemate/testing`: the exit
 * hook, sleeping and polling, free ports, `/proc` (with a pid-reuse guard), OS users, commands,
 * log tails and the platform check. Linux only.
 *
 * @module
 */
export { onExitSync, removeOnExit } from './exit-hook.js'
export { readFileTail } from './file-tail.js'
export { blockedAncestor, ensureSystemUser, lookupOsUser, type OsUser } from './os-user.js'
export { unsupportedPlatform } from './platform.js'
export { pollUntil, settleAll, sleep } from './poll.js'
export { freePorts, isPortClosed, portProblem, waitForPortClosed } from './ports.js'
export {
  commandLine,
  descendants,
  freezeProcessTree,
  killProcessTree,
  type ProcessRef,
  type ProcStat,
  processRef,
  processState,
  readProcStat,
  signalProcesses,
  thawProcesses,
  waitForProcessesToEnd,
} from './processes.js'
export { type RunCommandOptions, type RunCommandResult, runCommand } from './run-command.js'
