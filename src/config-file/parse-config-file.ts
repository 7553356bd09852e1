import type { Document, Pair } from 'yaml'
import { keyPath } from '../router/config-checks.js'
import { checkTokens, checkYamlLimits } from './check-yaml-limits.js'
import type { ConfigFileContext, YamlModule } from './config-file-context.js'
import { CONFIG_FILE_LIMITS } from './config-file-limits.js'
import { interpolate } from './interpolate.js'
import { readConfigText } from './read-config-text.js'

/** Names of environment variables whose values are treated as secrets, wherever they end up. */
const SECRET_NAME = /pass|pwd|secret|token|key|auth|cred/i

/** Plain numbers and booleans a whole-reference plain scalar may turn into. */
const NUMBER = /^[-+]?(\.\d+|\d+(\.\d*)?)([eE][-+]?\d+)?$/

/** A config file turned into data (see {@link parseConfigFile}). */
export interface ParsedConfigFile {
  /** The options, with `${ENV}` references replaced. */
  readonly data: Record<string, unknown>
  /** Paths of the options whose references could not be replaced (already reported). */
  readonly failedPaths: readonly string[]
}

/**
 * Reads and parses a config file into plain data, with `${ENV}` references replaced: YAML by the
 * `yaml` package (anchors, aliases and `<<` merge keys allowed), JSON checked strictly by
 * `JSON.parse` and then parsed by `yaml` too (JSON is YAML 1.2) for positions. Integers beyond
 * 2^53 stay bigints; others are numbers. Within {@link CONFIG_FILE_LIMITS}: a larger file is
 * refused unread, deeper nesting and alias bombs before the data is built.
 *
 * Problems are recorded in `ctx`, every one of a kind in one pass: syntax errors and YAML warnings
 * (unknown tags...), alias problems, bad references. It throws (a `ConfigFileError` with all of
 * them) when the file cannot be turned into data: unreadable, too large, empty, a syntax or alias
 * problem, a top level that is not a mapping. Bad references and duplicate keys are only
 * recorded: the caller goes on to validate the options, then throws everything together.
 *
 * A plain (unquoted) YAML scalar that is exactly one reference takes the type of its value
 * (`maxReplicationLagMs: ${MAX_LAG:-5000}` is a number); quoted scalars stay strings.
 */
export async function parseConfigFile(ctx: ConfigFileContext): Promise<ParsedConfigFile> {
  const { found } = ctx
  let text = await readConfigText(ctx)
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
  ctx.text = text
  ctx.addSecretsFrom(text)
  const yaml = await loadYaml(ctx)
  ctx.yaml = yaml
  ctx.lines = new yaml.LineCounter()
  const json = found.format === 'json'
  let broken = json && !checkJson(ctx, text)
  if (!checkTokens(ctx, yaml, text)) ctx.throwIfProblems()
  let doc: Document
  try {
    doc = yaml.parseDocument(text, {
      lineCounter: ctx.lines,
      prettyErrors: false,
      intAsBigInt: true,
      merge: !json,
      uniqueKeys: true,
    })
  } catch (cause) {
    throw ctx.fail('', `the ${json ? 'JSON' : 'YAML'} parser failed: ${messageOf(cause)}`, 'none', cause)
  }
  if (!(json && broken)) broken = reportParseErrors(ctx, doc) || broken
  ctx.doc = doc
  const sound = checkYamlLimits(ctx, yaml, doc)
  const top = doc.contents
  const failedPaths: string[] = []
  // Even in a broken document the scalars are the file's: report their bad references too.
  if (yaml.isMap(top)) interpolateNode(ctx, yaml, top, '', failedPaths)
  if (broken || !sound) ctx.throwIfProblems()
  if (top === null || (yaml.isScalar(top) && top.value === null)) {
    throw ctx.fail(
      '',
      'the file is empty; expected a mapping of router options (driver, primary, replicas, ...)',
      'none',
    )
  }
  if (!yaml.isMap(top)) {
    const got = yaml.isSeq(top) ? 'a list' : yaml.isScalar(top) ? `a ${typeof top.value}` : 'something else'
    throw ctx.fail(
      '',
      `expected a mapping of router options (driver, primary, ...) at the top level, got ${got}`,
      ctx.position(top.range?.[0] ?? 0) ?? 'none',
    )
  }
  let js: unknown
  try {
    // Aliases are bounded by checkYamlLimits; yaml's own count is a backstop.
    js = doc.toJS({ maxAliasCount: CONFIG_FILE_LIMITS.maxExpandedValues })
  } catch (cause) {
    throw ctx.fail('', `cannot turn the YAML into data: ${messageOf(cause)}`, 'none', cause)
  }
  return { data: normalize(js) as Record<string, unknown>, failedPaths }
}

function messageOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause)
}

/**
 * Records the parser's errors and warnings (only the first syntax error of a line: the parser's
 * next ones there follow from it); returns whether the document's structure is unsound (not just
 * duplicate keys).
 */
function reportParseErrors(ctx: ConfigFileContext, doc: Document): boolean {
  const kind = ctx.found.format === 'json' ? 'JSON' : 'YAML'
  let broken = false
  let exhausted = false
  const lines = new Set<number>()
  for (const error of [...doc.errors, ...doc.warnings]) {
    const where = ctx.position(error.pos[0]) ?? 'none'
    if (error.code === 'DUPLICATE_KEY') {
      ctx.report('', `duplicate key ${JSON.stringify(keyAt(ctx.text ?? '', error.pos[0]))}`, where)
      continue
    }
    broken = true
    const line = where === 'none' ? 0 : where.line
    if (error.name === 'YAMLParseError' && lines.has(line)) continue
    lines.add(line)
    if (error.code === 'RESOURCE_EXHAUSTION') {
      // The parser ran out of stack: once is enough (the depth check names the first level too deep).
      if (!exhausted)
        ctx.report(
          '',
          `nested too deeply for the parser (at most ${CONFIG_FILE_LIMITS.maxDepth} levels)`,
          where,
        )
      exhausted = true
    } else {
      const label = error.name === 'YAMLWarning' ? `${kind} error` : `${kind} syntax error`
      ctx.report('', `${label}: ${error.message}`, where)
    }
  }
  return broken
}

async function loadYaml(ctx: ConfigFileContext): Promise<YamlModule> {
  try {
    return await import('yaml')
  } catch (cause) {
    throw ctx.fail('', 'reading config files needs the "yaml" package: npm install yaml', 'none', cause)
  }
}

/**
 * JSON.parse is the judge of JSON syntax (yaml accepts more); its message is kept free of file
 * text. Records the (first) syntax error; returns whether there was none.
 */
function checkJson(ctx: ConfigFileContext, text: string): boolean {
  if (text.trim() === '') return true // reported as an empty file
  try {
    JSON.parse(text)
    return true
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause)
    const at = /at position (\d+)/.exec(message)
    const offset = at === null ? text.length : Number(at[1])
    let reason = message
      .replace(/^Unexpected token '(.)', .*$/s, 'unexpected "$1"')
      .replace(/,? ?".*" is not valid JSON$/s, '')
      .replace(/ in JSON at position \d+.*$/s, '')
      .replace(/^Unexpected end of JSON input$/, 'unexpected end of file')
    reason = reason.charAt(0).toLowerCase() + reason.slice(1)
    ctx.report('', `JSON syntax error: ${reason}`, ctx.position(offset) ?? 'none')
    return false
  }
}

/**
 * Replaces the references in every string scalar (aliases are not followed: the node they name is
 * replaced where it is written). Every bad reference is recorded, and its option's path added to
 * `failed`. The keys of a merge key's mapping belong to the mapping it is merged into.
 */
function interpolateNode(
  ctx: ConfigFileContext,
  yaml: YamlModule,
  node: unknown,
  path: string,
  failed: string[],
): void {
  if (yaml.isMap(node)) {
    for (const pair of node.items as Pair<unknown, unknown>[]) {
      const key = yaml.isScalar(pair.key) ? pair.key.value : pair.key
      const sub = typeof key === 'symbol' ? path : keyPath(path, String(key))
      interpolateNode(ctx, yaml, pair.value, sub, failed)
    }
  } else if (yaml.isSeq(node)) {
    node.items.forEach((item, i) => {
      interpolateNode(ctx, yaml, item, `${path}[${i}]`, failed)
    })
  } else if (yaml.isScalar(node) && typeof node.value === 'string' && node.value.includes('$')) {
    const original = node.value
    const result = interpolate(original, ctx.env)
    if (!result.ok) {
      failed.push(path)
      for (const bad of badReferences(original, ctx.env)) {
        ctx.report(path, bad.message, referencePosition(ctx, node.range, original, bad.index) ?? 'value')
      }
      return
    }
    result.names.forEach((name) => {
      const value = ctx.env[name]
      if (value !== undefined && SECRET_NAME.test(name)) ctx.addSecret(value)
    })
    ctx.addSecretsFrom(result.value)
    let value: unknown = result.value
    if (node.type === 'PLAIN' && /^\$\{[^}]*\}$/.test(original)) value = typed(result.value)
    node.value = value
  }
}

/** Every bad reference of a string: {@link interpolate} stops at the first, so go on after each. */
function badReferences(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
): { index: number; message: string }[] {
  const found: { index: number; message: string }[] = []
  let from = 0
  while (from < text.length) {
    const result = interpolate(text.slice(from), env)
    if (result.ok) break
    const index = from + result.index
    found.push({ index, message: result.message })
    const close = text.indexOf('}', index)
    if (close < 0) break
    from = close + 1
  }
  return found
}

/** The position of the reference at `index` of a scalar's value: found in the source when it appears there literally. */
function referencePosition(
  ctx: ConfigFileContext,
  range: readonly number[] | null | undefined,
  value: string,
  index: number,
): { line: number; column: number } | undefined {
  if (range == null) return undefined
  const source = ctx.text?.slice(range[0], range[1])
  const ref = value.slice(index, value.indexOf('}', index) + 1 || undefined)
  // The source is at least as long as the value before the reference (quotes, escapes, folding).
  let at = source === undefined ? -1 : source.indexOf(ref, index)
  if (at < 0 && source !== undefined) at = source.indexOf(ref)
  return ctx.position(range[0]! + Math.max(at, 0))
}

function typed(text: string): unknown {
  if (text === 'true') return true
  if (text === 'false') return false
  if (NUMBER.test(text)) return Number(text)
  return text
}

/** Bigints that fit a double exactly become numbers; the rest stay bigints (exact range bounds). */
function normalize(value: unknown): unknown {
  if (typeof value === 'bigint') {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : value
  }
  if (Array.isArray(value)) return value.map(normalize)
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      // defineProperty: a `__proto__` key stays an own (and so unknown) option
      Object.defineProperty(out, k, {
        value: normalize(v),
        enumerable: true,
        writable: true,
        configurable: true,
      })
    }
    return out
  }
  return value
}

/** The key written at `offset` (quotes removed), for a duplicate-key message. */
function keyAt(text: string, offset: number): string {
  const m = /^(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|([^:\n,{}]*))/.exec(text.slice(offset))
  return (m?.[1] ?? m?.[2] ?? m?.[3] ?? '').trim()
}
