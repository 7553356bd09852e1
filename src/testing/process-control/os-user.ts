import fs from 'node:fs'
import path from 'node:path'
import { runCommand } from './run-command.js'

/** An operating-system account. */
export interface OsUser {
  readonly name: string
  readonly uid: number
  readonly gid: number
}

/** Parses the `/etc/passwd` line of `name` out of `text`. */
function parsePasswd(text: string, name: string): OsUser | undefined {
  for (const line of text.split('\n')) {
    const [user, , uid, gid] = line.split(':')
    if (user === name && uid !== undefined && gid !== undefined && uid !== '' && gid !== '') {
      return { name, uid: Number(uid), gid: Number(gid) }
    }
  }
  return undefined
}

/**
 * The OS account `name` (through `getent passwd`, which also sees NSS accounts, else
 * `/etc/passwd`), or `undefined` when there is none.
 *
 * @example
 * ```ts
 * await lookupOsUser('postgres') // { name: 'postgres', uid: 101, gid: 104 }
 * ```
 */
export async function lookupOsUser(name: string): Promise<OsUser | undefined> {
  try {
    const r = await runCommand('getent', ['passwd', name], { cwd: '/', env: process.env, timeoutMs: 5000 })
    if (r.code === 0) {
      const found = parsePasswd(r.stdout, name)
      if (found !== undefined) return found
    }
  } catch {
    // no getent: read /etc/passwd
  }
  try {
    return parsePasswd(fs.readFileSync('/etc/passwd', 'utf8'), name)
  } catch {
    return undefined
  }
}

/**
 * Returns the OS account `name`, creating it first when it is missing, as a system account with its
 * own group, no home dir and no login shell (`useradd`, else busybox `adduser`). Only meaningful as
 * root, which the servers of `routemate/testing` refuse to run as. Throws a plain `Error` listing
 * what each tool said when the account cannot be created.
 *
 * @example
 * ```ts
 * const mysql = await ensureSystemUser('mysql', console.log)
 * ```
 */
export async function ensureSystemUser(name: string, log?: (line: string) => void): Promise<OsUser> {
  const existing = await lookupOsUser(name)
  if (existing !== undefined) return existing
  log?.(`creating the system user "${name}" (the server refuses to run as root)`)
  const shell = fs.existsSync('/usr/sbin/nologin') ? '/usr/sbin/nologin' : '/bin/false'
  const attempts: Array<[string, string[]]> = [
    ['useradd', ['--system', '--user-group', '--no-create-home', '--shell', shell, name]],
    ['adduser', ['-S', '-D', '-H', name]],
  ]
  const errors: string[] = []
  for (const [cmd, args] of attempts) {
    try {
      const r = await runCommand(cmd, args, { cwd: '/', env: process.env, timeoutMs: 15_000 })
      if (r.code === 0) break
      errors.push(`${cmd}: ${r.output}`)
    } catch (err) {
      errors.push(`${cmd}: ${(err as Error).message}`)
    }
  }
  const created = await lookupOsUser(name)
  if (created === undefined) {
    throw new Error(`the system user "${name}" could not be created: ${errors.join('; ')}`)
  }
  return created
}

/** Whether `user` may search (traverse) `dir`, by its mode bits alone (no supplementary groups). */
function canSearch(dir: string, user: OsUser): boolean {
  const st = fs.statSync(dir)
  if (st.uid === user.uid) return (st.mode & 0o100) !== 0
  if (st.gid === user.gid) return (st.mode & 0o010) !== 0
  return (st.mode & 0o001) !== 0
}

/**
 * The first directory on the way from `/` to `dir` (itself included) that `user` cannot traverse,
 * or `undefined` when the whole path is open to it. A project under a `0700` home dir is the usual
 * culprit.
 *
 * @example
 * ```ts
 * blockedAncestor('/root/project/node_modules/x', postgres) // '/root' (mode 0700)
 * ```
 */
export function blockedAncestor(dir: string, user: OsUser): string | undefined {
  const parts = path
    .resolve(dir)
    .split(path.sep)
    .filter((p) => p !== '')
  let current: string = path.sep
  for (const part of ['', ...parts]) {
    current = path.join(current, part)
    if (!canSearch(current, user)) return current
  }
  return undefined
}
