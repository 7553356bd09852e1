/**
 * The bounds a config file is read within, so that a hostile or broken file fails fast with a
 * located `ConfigFileError` instead of exhausting memory, time or the stack:
 *
 * - `maxBytes` (1 MiB): larger files are refused before they are read.
 * - `maxDepth` (64): mappings and lists nested deeper are refused (a router config needs about 6).
 * - `maxExpandedValues` (100 000): the values the file would have once every YAML alias is
 *   expanded; more is an alias bomb ("billion laughs").
 * - `maxErrors` (100): the problems reported for one file; the rest are left out.
 *
 * @example
 * ```ts
 * CONFIG_FILE_LIMITS.maxBytes // 1048576
 * ```
 */
export const CONFIG_FILE_LIMITS = Object.freeze({
  maxBytes: 1024 * 1024,
  maxDepth: 64,
  maxExpandedValues: 100_000,
  maxErrors: 100,
})
