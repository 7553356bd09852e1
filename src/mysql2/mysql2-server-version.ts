/** The server family and version a MySQL-protocol server reports. */
export interface ServerVersion {
  readonly flavour: 'mariadb' | 'mysql'
  readonly major: number
  readonly minor: number
  readonly patch: number
}

const VERSION = /(\d+)\.(\d+)\.(\d+)/

/**
 * Parses `SELECT VERSION()` (or a handshake's server version): MariaDB when the text contains
 * `MariaDB` (case-insensitive), else MySQL (Percona Server and other MySQL builds included).
 * Caveat: a MariaDB handshake below 11.0 starts with a fake `5.5.5-` prefix; it is skipped, so the
 * real version is read. Unparsable versions read as `0.0.0`.
 *
 * @example
 * ```ts
 * parseServerVersion('10.11.19-MariaDB-0+deb12u1') // { flavour: 'mariadb', major: 10, minor: 11, patch: 19 }
 * parseServerVersion('8.0.36-0ubuntu0.22.04.1')    // { flavour: 'mysql', major: 8, minor: 0, patch: 36 }
 * ```
 */
export function parseServerVersion(version: string): ServerVersion {
  const mariadb = /mariadb/i.test(version)
  const text = mariadb ? version.replace(/^5\.5\.5-/, '') : version
  const m = VERSION.exec(text)
  return {
    flavour: mariadb ? 'mariadb' : 'mysql',
    major: m ? Number(m[1]) : 0,
    minor: m ? Number(m[2]) : 0,
    patch: m ? Number(m[3]) : 0,
  }
}

/**
 * Whether `v` is at least `major.minor.patch`.
 *
 * @example
 * ```ts
 * versionAtLeast(parseServerVersion('8.0.22'), 8, 0, 22) // true
 * ```
 */
export function versionAtLeast(v: ServerVersion, major: number, minor: number, patch: number): boolean {
  if (v.major !== major) return v.major > major
  if (v.minor !== minor) return v.minor > minor
  return v.patch >= patch
}
