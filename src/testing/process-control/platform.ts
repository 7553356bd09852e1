/**
 * Why local test clusters cannot run on `platform` (default: this process's), or `undefined` on
 * Linux. They need Linux: process state and start times are read from `/proc` (so a reused pid is
 * never signalled), servers are frozen with SIGSTOP, and as root they run under a system user
 * created with `useradd`.
 *
 * @example
 * ```ts
 * unsupportedPlatform('darwin') // 'routemate/testing runs on Linux only (it reads /proc ...); this is darwin'
 * ```
 */
export function unsupportedPlatform(platform: NodeJS.Platform = process.platform): string | undefined {
  if (platform === 'linux') return undefined
  return (
    'routemate/testing runs on Linux only (it reads /proc to follow the server processes, freezes ' +
    `them with SIGSTOP and, as root, runs them under a system user made with useradd); this is ${platform}`
  )
}
