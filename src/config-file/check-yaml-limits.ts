import type { Alias, Document, Node, Pair } from 'yaml'
import type { ConfigFileContext, ProblemPlace, YamlModule } from './config-file-context.js'
import { CONFIG_FILE_LIMITS } from './config-file-limits.js'

/** The lexer's token before a plain or block scalar. */
const SCALAR = '\u001f'

/** Tokens of yaml's lexer that stand for no source text. */
const CONTROL_TOKENS = new Set(['\u0002', '\u0018', SCALAR, '\ufeff'])

/**
 * Refuses, from the lexer's tokens and before the text is parsed (the parser takes seconds over a
 * megabyte of `[` or of short list items), flow collections (`[...]`, `{...}`) nested deeper
 * than `maxDepth` and more than `maxExpandedValues` scalars. Returns false (with the problem
 * recorded where the limit is crossed) when the text is refused.
 */
export function checkTokens(ctx: ConfigFileContext, yaml: YamlModule, text: string): boolean {
  const { maxDepth, maxExpandedValues } = CONFIG_FILE_LIMITS
  let depth = 0
  let offset = 0
  let scalars = 0
  for (const token of new yaml.Lexer().lex(text)) {
    if (token === '[' || token === '{') {
      depth++
      if (depth > maxDepth) {
        ctx.report('', tooDeep(), ctx.position(offset) ?? 'none')
        return false
      }
    } else if (token === ']' || token === '}') {
      depth = Math.max(0, depth - 1)
    } else if (token === SCALAR || token.startsWith('"') || token.startsWith("'")) {
      scalars++
      if (scalars > maxExpandedValues) {
        ctx.report('', tooMany(), ctx.position(offset) ?? 'none')
        return false
      }
    }
    if (!CONTROL_TOKENS.has(token)) offset += token.length
  }
  return true
}

/** What the walk learnt about a node: its size and height with aliases expanded. */
interface Extent {
  readonly values: number
  readonly height: number
  /** An alias inside already nests too deep (reported). */
  readonly tooDeep?: boolean
}

const UNKNOWN: Extent = { values: 0, height: 0 }

/**
 * Checks a parsed document before it is turned into data, in one pass in file order without
 * recursion: every alias names an anchor set before it and not around it (no cycle, such as a
 * mapping merging itself with `<<: *h`); merge keys take mappings; nesting stays within
 * `maxDepth` and the values, once every alias is expanded, within `maxExpandedValues` (an alias
 * bomb fails at the alias that crosses the limit). Problems are recorded with their lines;
 * returns whether there was none.
 */
export function checkYamlLimits(ctx: ConfigFileContext, yaml: YamlModule, doc: Document): boolean {
  const before = ctx.problemCount
  const { maxDepth, maxExpandedValues } = CONFIG_FILE_LIMITS
  const anchors = new Map<string, Node>()
  const extents = new Map<unknown, Extent>()
  const open = new Set<unknown>()
  const tooDeepAliases = new Set<unknown>()
  let values = 0
  const at = (node: unknown): ProblemPlace => {
    const start = (node as Node).range?.[0]
    return (start === undefined ? undefined : ctx.position(start)) ?? 'none'
  }
  const stack: { node: unknown; depth: number; exit: boolean }[] = [
    { node: doc.contents, depth: 1, exit: false },
  ]
  while (stack.length > 0 && !ctx.full) {
    const { node, depth, exit } = stack.pop()!
    if (node === null || node === undefined) continue
    if (exit) {
      open.delete(node)
      let sum = 1
      let height = 0
      let deep = false
      for (const child of childrenOf(yaml, node)) {
        const extent = extentOf(yaml, child, anchors, extents)
        sum += extent.values
        height = Math.max(height, extent.height)
        deep ||= extent.tooDeep === true || tooDeepAliases.has(child)
      }
      extents.set(node, { values: sum, height: height + 1, tooDeep: deep })
      continue
    }
    const anchor = (node as { anchor?: string }).anchor
    if (anchor !== undefined) anchors.set(anchor, node as Node)
    if (yaml.isAlias(node)) {
      const target = anchors.get(node.source)
      if (target === undefined) {
        ctx.report('', `alias *${node.source} has no anchor &${node.source} before it`, at(node))
      } else if (open.has(target)) {
        ctx.report(
          '',
          `alias *${node.source} is inside the node &${node.source} it refers to: a cycle`,
          at(node),
        )
      } else {
        const extent = extents.get(target) ?? UNKNOWN
        values += extent.values
        if (values > maxExpandedValues) {
          ctx.report(
            '',
            `alias *${node.source} takes the file past ${maxExpandedValues} values once aliases are expanded (an alias bomb?)`,
            at(node),
          )
          break
        }
        if (depth - 1 + extent.height > maxDepth && extent.tooDeep !== true) {
          tooDeepAliases.add(node)
          ctx.report('', `alias *${node.source} nests values deeper than ${maxDepth} levels`, at(node))
        }
      }
      continue
    }
    values++
    if (values > maxExpandedValues) {
      ctx.report('', tooMany(), at(node))
      break
    }
    if (!yaml.isCollection(node)) {
      extents.set(node, { values: 1, height: 1 })
      continue
    }
    if (depth > maxDepth) {
      ctx.report('', tooDeep(), at(node))
      extents.set(node, UNKNOWN)
      continue
    }
    if (yaml.isMap(node)) checkMergeKeys(ctx, yaml, node.items as Pair[], anchors, at)
    open.add(node)
    stack.push({ node, depth, exit: true })
    const children = childrenOf(yaml, node)
    for (let i = children.length - 1; i >= 0; i--)
      stack.push({ node: children[i], depth: depth + 1, exit: false })
  }
  return ctx.problemCount === before && !ctx.full
}

function tooMany(): string {
  return `the file has more than ${CONFIG_FILE_LIMITS.maxExpandedValues} values`
}

function tooDeep(): string {
  return `nested deeper than ${CONFIG_FILE_LIMITS.maxDepth} levels`
}

/** Keys and values of a mapping, items of a list. */
function childrenOf(yaml: YamlModule, node: unknown): unknown[] {
  if (yaml.isMap(node)) return (node.items as Pair[]).flatMap((p) => [p.key, p.value])
  if (yaml.isSeq(node)) return node.items
  return []
}

function extentOf(
  yaml: YamlModule,
  node: unknown,
  anchors: ReadonlyMap<string, Node>,
  extents: ReadonlyMap<unknown, Extent>,
): Extent {
  if (node === null || node === undefined) return UNKNOWN
  if (yaml.isAlias(node)) {
    const target = anchors.get((node as Alias).source)
    return (target === undefined ? undefined : extents.get(target)) ?? UNKNOWN
  }
  return extents.get(node) ?? UNKNOWN
}

/** `<<` (a merge key) takes a mapping, an alias of one, or a list of those. */
function checkMergeKeys(
  ctx: ConfigFileContext,
  yaml: YamlModule,
  pairs: readonly Pair[],
  anchors: ReadonlyMap<string, Node>,
  at: (node: unknown) => ProblemPlace,
): void {
  const isMapLike = (item: unknown): boolean =>
    yaml.isMap(item) ||
    (yaml.isAlias(item) && (!anchors.has(item.source) || yaml.isMap(anchors.get(item.source))))
  for (const pair of pairs) {
    if (!yaml.isScalar(pair.key) || typeof pair.key.value !== 'symbol') continue
    const value = pair.value
    const ok = isMapLike(value) || (yaml.isSeq(value) && value.items.every(isMapLike))
    if (!ok) {
      ctx.report(
        '',
        'a merge key (<<) takes a mapping, an alias of one, or a list of those',
        at(value ?? pair.key),
      )
    }
  }
}
