import fs from 'node:fs'

/**
 * The last `lines` lines of a text file such as a server log (reading at most its last 64 KiB);
 * `''` when it does not exist or cannot be read.
 *
 * @example
 * ```ts
 * readFileTail('/tmp/routemate-pg-x/primary/postgres.log', 20)
 * ```
 */
export function readFileTail(file: string, lines: number): string {
  try {
    const fd = fs.openSync(file, 'r')
    try {
      const size = fs.fstatSync(fd).size
      const length = Math.min(size, 64 * 1024)
      const buffer = Buffer.alloc(length)
      fs.readSync(fd, buffer, 0, length, size - length)
      return buffer.toString('utf8').trimEnd().split('\n').slice(-lines).join('\n')
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return ''
  }
}
