import { open } from 'node:fs/promises'
import type { ConfigFileContext } from './config-file-context.js'
import { CONFIG_FILE_LIMITS } from './config-file-limits.js'

/**
 * Reads a config file's text, at most {@link CONFIG_FILE_LIMITS}.maxBytes of it: a larger file
 * is refused (with its size) without being read, and a device or a growing file cannot make it
 * read more. Throws a `ConfigFileError` when the file cannot be read or is too large.
 *
 * @example
 * ```ts
 * const text = await readConfigText(ctx) // ConfigFileError: routemate.config.yaml: the file is 1.2 MiB; ...
 * ```
 */
export async function readConfigText(ctx: ConfigFileContext): Promise<string> {
  const max = CONFIG_FILE_LIMITS.maxBytes
  let handle: Awaited<ReturnType<typeof open>> | undefined
  const chunks: Buffer[] = []
  let total = 0
  let size: number | undefined
  try {
    handle = await open(ctx.found.file, 'r')
    const stat = await handle.stat()
    if (stat.isFile()) size = stat.size
    while (total <= max && (size === undefined || size <= max)) {
      const chunk = Buffer.alloc(Math.min(64 * 1024, max + 1 - total))
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null)
      if (bytesRead === 0) break
      chunks.push(chunk.subarray(0, bytesRead))
      total += bytesRead
    }
  } catch (cause) {
    const code = (cause as { code?: string }).code ?? String(cause)
    throw ctx.fail('', `cannot read the file (${code})`, 'none', cause)
  } finally {
    await handle?.close().catch(() => {})
  }
  if (total > max || (size !== undefined && size > max)) {
    // A size that rounds to the limit (1.0 MiB) says "larger than" instead.
    const shown = size === undefined ? undefined : mib(size)
    const what =
      shown === undefined || Number(shown) <= max / MIB ? `larger than ${mib(max)} MiB` : `${shown} MiB`
    throw ctx.fail('', `the file is ${what}; a config file may be at most ${mib(max)} MiB`, 'none')
  }
  return Buffer.concat(chunks, total).toString('utf8')
}

const MIB = 1024 * 1024

function mib(bytes: number): string {
  const value = bytes / MIB
  return Number.isInteger(value) ? String(value) : value.toFixed(1)
}
