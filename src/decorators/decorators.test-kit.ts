/**
 * Test helpers for the decorators (not part of the package): a fake router that records which
 * scope each call opened, manual application of a decorator in either mode, and compilation of
 * fixtures with the real TypeScript compiler in either mode.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import ts from 'typescript'
import type { Router } from '../router/router.js'

/** One scope the fake router opened. */
export interface FakeCall {
  readonly method: 'readOnly' | 'primary' | 'transaction' | 'withShard'
  readonly options?: unknown
  readonly key?: unknown
}

/** A minimal stand-in for `Router`: runs `fn` like the real one and records the scopes. */
export interface FakeRouter {
  readonly router: Router
  readonly calls: FakeCall[]
  /** The scopes open right now, outermost first (e.g. `['withShard', 'transaction']`). */
  active(): string[]
}

export function fakeRouter(): FakeRouter {
  const calls: FakeCall[] = []
  const als = new AsyncLocalStorage<string[]>()
  const enter = <T>(call: FakeCall, fn: () => T): T => {
    calls.push(call)
    return als.run([...(als.getStore() ?? []), call.method], fn)
  }
  const router = {
    readOnly: <T>(fn: () => T) => enter({ method: 'readOnly' }, fn),
    primary: <T>(fn: () => T) => enter({ method: 'primary' }, fn),
    transaction: async <T>(fn: (tx: unknown) => T, options?: unknown) =>
      await enter({ method: 'transaction', options }, () => fn({ fake: 'tx' })),
    withShard: async <T>(key: unknown, fn: () => T) => await enter({ method: 'withShard', key }, fn),
  }
  return { router: router as unknown as Router, calls, active: () => [...(als.getStore() ?? [])] }
}

type Decorator = (...args: never[]) => unknown

/** Applies method decorators the way TypeScript's legacy `__decorate` does (bottom-up, descriptor in, descriptor out). */
export function decorateLegacy(target: object, key: string | symbol, ...decorators: Decorator[]): void {
  let desc = Object.getOwnPropertyDescriptor(target, key) as PropertyDescriptor
  for (const d of [...decorators].reverse()) {
    desc = ((d as (...a: unknown[]) => unknown)(target, key, desc) as PropertyDescriptor | undefined) ?? desc
  }
  Object.defineProperty(target, key, desc)
}

/** Applies method decorators the way standard (TC39) decorators do (bottom-up, function in, function out). */
export function decorateTc39(
  target: object,
  key: string | symbol,
  options: { static?: boolean; kind?: string } = {},
  ...decorators: Decorator[]
): void {
  let fn = (target as Record<string | symbol, unknown>)[key]
  for (const d of [...decorators].reverse()) {
    const context = {
      kind: options.kind ?? 'method',
      name: key,
      static: options.static ?? false,
      private: false,
      metadata: {},
      access: { has: (o: object) => key in o, get: (o: Record<string | symbol, unknown>) => o[key] },
      addInitializer: () => {},
    }
    fn = (d as (...a: unknown[]) => unknown)(fn, context) ?? fn
  }
  Object.defineProperty(target, key, { value: fn, writable: true, configurable: true, enumerable: false })
}

/** The decorator modes TypeScript compiles. */
export type DecoratorMode = 'legacy' | 'tc39'

/**
 * Compiles a TypeScript fixture with the real compiler (`ts.transpileModule`, target ES2022) in
 * the given decorator mode, writes it to a temporary `.mjs` file and imports it. Legacy mode also
 * emits decorator metadata (`emitDecoratorMetadata`), like a NestJS project.
 */
export async function compileFixture(source: string, mode: DecoratorMode): Promise<Record<string, unknown>> {
  const legacy = mode === 'legacy'
  const out = ts.transpileModule(source, {
    reportDiagnostics: true,
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      experimentalDecorators: legacy,
      emitDecoratorMetadata: legacy,
      useDefineForClassFields: true,
    },
  })
  const errors = (out.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error)
  if (errors.length > 0) {
    throw new Error(errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n'))
  }
  const dir = await mkdtemp(join(tmpdir(), `routemate-decorators-${mode}-`))
  const file = join(dir, 'fixture.mjs')
  await writeFile(file, out.outputText)
  try {
    return (await import(/* @vite-ignore */ pathToFileURL(file).href)) as Record<string, unknown>
  } finally {
    await rm(dir, { recursive: true, force: true }) // loaded: the module stays in memory
  }
}

/** Library and source files parsed once for every `typeCheck` (parsing them is most of its time). */
const parsed = new Map<string, ts.SourceFile>()

/**
 * Type-checks a TypeScript fixture against the real sources in the given decorator mode and
 * returns the error messages (`[]` when it compiles). `files` maps file names to sources; write
 * imports of the decorators as `ROUTEMATE/decorators/index.js`.
 */
export function typeCheck(files: Record<string, string>, mode: DecoratorMode, srcDir: string): string[] {
  const legacy = mode === 'legacy'
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    experimentalDecorators: legacy,
    emitDecoratorMetadata: legacy,
  }
  const root = join(tmpdir(), `routemate-typecheck-${mode}`)
  const virtual = new Map(
    Object.entries(files).map(([name, text]) => [
      join(root, name),
      text.replaceAll('ROUTEMATE/', `${srcDir}/`),
    ]),
  )
  const host = ts.createCompilerHost(options)
  const readFile = host.readFile.bind(host)
  const fileExists = host.fileExists.bind(host)
  const getSourceFile = host.getSourceFile.bind(host)
  host.readFile = (f) => virtual.get(f) ?? readFile(f)
  host.fileExists = (f) => virtual.has(f) || fileExists(f)
  host.getSourceFile = (f, lang, onError, create) => {
    const text = virtual.get(f)
    if (text !== undefined) return ts.createSourceFile(f, text, lang)
    const key = `${f}:${JSON.stringify(lang)}`
    let file = parsed.get(key)
    if (file === undefined) {
      file = getSourceFile(f, lang, onError, create)
      if (file !== undefined) parsed.set(key, file)
    }
    return file
  }
  const program = ts.createProgram([...virtual.keys()], options, host)
  // Only the fixtures are checked (the sources they import are resolved as needed, not checked
  // whole: that was most of the time), plus the program's global and options diagnostics.
  const fixtures = [...virtual.keys()].flatMap((name) => program.getSourceFile(name) ?? [])
  return [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...fixtures.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]),
  ].map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
}
