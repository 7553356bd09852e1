import type { Document, LineCounter, Node, Pair } from 'yaml'

/** The yaml functions the locator needs (the module is loaded lazily). */
export interface YamlIdentity {
  isMap(node: unknown): node is { items: Pair<unknown, unknown>[] }
  isSeq(node: unknown): node is { items: unknown[] }
  isScalar(node: unknown): node is { value: unknown; range?: [number, number, number] | null }
  isAlias(node: unknown): node is { resolve(doc: Document): unknown }
}

/** A 1-based position in a file. */
export interface FilePosition {
  readonly line: number
  readonly column: number
}

/**
 * Maps an option path as `ConfigError` names it (`replicas[1].url`, `shards.eu.1.primary`,
 * `pool["max-size"]`) back to a position in the parsed document: the value's position, or the
 * key's with `at: 'key'` (unknown options) or when the value is empty. A path that does not exist
 * in the file (a required option left out) gives the position of its deepest existing ancestor.
 * Shard names may contain dots: the longest matching key wins.
 *
 * @example
 * ```ts
 * locatePath(yaml, doc, lines, 'replicas[1].url') // { line: 7, column: 10 }
 * ```
 */
export function locatePath(
  yaml: YamlIdentity,
  doc: Document,
  lines: LineCounter,
  path: string,
  at: 'key' | 'value' = 'value',
): FilePosition | undefined {
  let node: unknown = doc.contents
  let rest = path
  let pos = offsetOf(node)
  while (rest !== '') {
    if (yaml.isAlias(node)) node = node.resolve(doc)
    if (rest.startsWith('.')) rest = rest.slice(1)
    let next: unknown
    let keyNode: unknown
    if (yaml.isMap(node)) {
      const match = matchKey(yaml, node.items, rest)
      if (match === undefined) break
      rest = rest.slice(match.consumed)
      keyNode = match.pair.key
      next = match.pair.value
    } else if (yaml.isSeq(node)) {
      const m = /^\[(\d+)\]/.exec(rest)
      const item = m === null ? undefined : node.items[Number(m[1])]
      if (m === null || item === undefined) break
      rest = rest.slice(m[0].length)
      next = item
    } else {
      break
    }
    const valuePos = isEmpty(yaml, next) ? undefined : offsetOf(next)
    const keyPos = offsetOf(keyNode)
    pos = rest === '' && at === 'key' ? (keyPos ?? valuePos ?? pos) : (valuePos ?? keyPos ?? pos)
    node = next
  }
  if (pos === undefined) return undefined
  const { line, col } = lines.linePos(pos)
  return { line, column: col }
}

function matchKey(
  yaml: YamlIdentity,
  pairs: readonly Pair<unknown, unknown>[],
  rest: string,
): { pair: Pair<unknown, unknown>; consumed: number } | undefined {
  const quoted = /^\[("(?:[^"\\]|\\.)*")\]/.exec(rest)
  if (quoted !== null) {
    const key = JSON.parse(quoted[1]!) as string
    const pair = pairs.find((p) => keyText(yaml, p.key) === key)
    return pair === undefined ? undefined : { pair, consumed: quoted[0].length }
  }
  let best: { pair: Pair<unknown, unknown>; consumed: number } | undefined
  for (const pair of pairs) {
    const key = keyText(yaml, pair.key)
    if (key === undefined || !rest.startsWith(key)) continue
    const after = rest.charAt(key.length)
    if (after !== '' && after !== '.' && after !== '[') continue
    if (best === undefined || key.length > best.consumed) best = { pair, consumed: key.length }
  }
  return best
}

function keyText(yaml: YamlIdentity, key: unknown): string | undefined {
  if (yaml.isScalar(key)) return String(key.value)
  return typeof key === 'string' ? key : undefined
}

function isEmpty(yaml: YamlIdentity, node: unknown): boolean {
  if (node === null || node === undefined) return true
  if (!yaml.isScalar(node)) return false
  const range = node.range
  return node.value === null && (range == null || range[0] === range[1])
}

function offsetOf(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range
  return range == null ? undefined : range[0]
}
