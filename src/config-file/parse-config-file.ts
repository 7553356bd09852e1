import { readFile } from 'node:fs/promises'
import type { Document, Pair } from 'yaml'
import { keyPath } from '../router/config-checks.js'
import type { ConfigFileContext, YamlModule } from './config-file-context.js'
import { interpolate } from './interpolate.js'

/** Names of environment variables whose values are treated as secrets, wherever they end up. */
const SECRET_NAME = /pass|pwd|secret|token|key|auth|cred/i

/** Plain numbers and booleans a whole-reference plain scalar may turn into. */
const NUMBER = /^[-+]?(\.\d+|\d+(\.\d*)?)([eE][-+]?\d+)?$/

/**
 * Reads and parses a config file into plain data, with `${ENV}` references replaced: YAML by the
 * `yaml` package, JSON checked strictly by `JSON.parse` and then parsed by `yaml` too (JSON is
 * YAML 1.2) for positions. Integers beyond 2^53 stay bigints; others are numbers. Throws a
 * located, redacted `ConfigFileError` for an unreadable or empty file, a syntax error, a top
 * level that is not a mapping, or a bad reference.
 *
 * A plain (unquoted) YAML scalar that is exactly one reference takes the type of its value
 * (`maxReplicationLagMs: ${MAX_LAG:-5000}` is a number); quoted scalars stay strings.
 */
export async function parseConfigFile(ctx: ConfigFileContext): Promise<Record<string, unknown>> {
  const { found } = ctx
  let text: string
  try {
    text = await readFile(found.file, 'utf8')
  } catch (cause) {
    const code = (cause as { code?: string }).code ?? String(cause)
    throw ctx.fail('', `cannot read the file (${code})`, 'none', cause)
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
  ctx.text = text
  ctx.addSecretsFrom(text)
  const yaml = await loadYaml(ctx)
  ctx.yaml = yaml
  ctx.lines = new yaml.LineCounter()
  if (found.format === 'json') checkJson(ctx, text)
  const doc = yaml.parseDocument(text, { lineCounter: ctx.lines, prettyErrors: false, intAsBigInt: true })
  const [error] = doc.errors
  if (error !== undefined) {
    const kind = found.format === 'json' ? 'JSON' : 'YAML'
    const reason =
      error.code === 'DUPLICATE_KEY'
        ? `duplicate key ${JSON.stringify(keyAt(text, error.pos[0]))}`
        : `${kind} syntax error: ${error.message}`
    throw ctx.fail('', reason, ctx.position(error.pos[0]) ?? 'none')
  }
  ctx.doc = doc
  const top = doc.contents
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
  interpolateNode(ctx, yaml, doc, top, '')
  const data = normalize(doc.toJS({ maxAliasCount: 100 }))
  return data as Record<string, unknown>
}

async function loadYaml(ctx: ConfigFileContext): Promise<YamlModule> {
  try {
    return await import('yaml')
  } catch (cause) {
    throw ctx.fail('', 'reading config files needs the "yaml" package: npm install yaml', 'none', cause)
  }
}

/** JSON.parse is the judge of JSON syntax (yaml accepts more); its message is kept free of file text. */
function checkJson(ctx: ConfigFileContext, text: string): void {
  if (text.trim() === '') return // reported as an empty file
  try {
    JSON.parse(text)
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
    throw ctx.fail('', `JSON syntax error: ${reason}`, ctx.position(offset) ?? 'none')
  }
}

function interpolateNode(
  ctx: ConfigFileContext,
  yaml: YamlModule,
  doc: Document,
  node: unknown,
  path: string,
): void {
  if (yaml.isMap(node)) {
    for (const pair of node.items as Pair<unknown, unknown>[]) {
      const key = yaml.isScalar(pair.key) ? String(pair.key.value) : String(pair.key)
      interpolateNode(ctx, yaml, doc, pair.value, keyPath(path, key))
    }
  } else if (yaml.isSeq(node)) {
    node.items.forEach((item, i) => {
      interpolateNode(ctx, yaml, doc, item, `${path}[${i}]`)
    })
  } else if (yaml.isScalar(node) && typeof node.value === 'string' && node.value.includes('$')) {
    const original = node.value
    const result = interpolate(original, ctx.env)
    if (!result.ok) {
      throw ctx.fail(
        path,
        result.message,
        referencePosition(ctx, node.range, original, result.index) ?? 'value',
      )
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

/** The position of the reference at `index` of a scalar's value: found in the source when it appears there literally. */
function referencePosition(
  ctx: ConfigFileContext,
  range: readonly number[] | null | undefined,
  value: string,
  index: number,
): { line: number; column: number } | undefined {
  if (range == null || ctx.doc === undefined) return undefined
  const source = ctx.text?.slice(range[0], range[1])
  const ref = value.slice(index, value.indexOf('}', index) + 1 || undefined)
  const at = source === undefined ? -1 : source.indexOf(ref)
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
