/**
 * A user's project folder for the README doc-tests: the packed tarball (`npm pack` of the built
 * package) unpacked as `node_modules/routemate`, the libraries the README uses linked from the
 * repository's `node_modules`, README blocks written as files, type-checked with `tsc --strict`
 * (ESM, NodeNext) as one program per set of compiler options, and run with `node`.
 */
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import ts from 'typescript'
import { REPO_ROOT } from '../../support/ensure-built.js'
import { DOCTEST_ENV } from './doctest-preludes.js'

/** What a user installs next to routemate for the README's sections. */
const LINKED = [
  'pg',
  'postgres',
  'kysely-postgres-js',
  '@types/pg',
  'mysql2',
  'mariadb',
  'kysely',
  'drizzle-orm',
  '@prisma/adapter-pg',
  '@prisma/adapter-mariadb',
  '@prisma/client',
  'typeorm',
  'sequelize',
  'yaml',
  'express',
  '@types/express',
  'fastify',
  'fastify-plugin',
  '@nestjs/common',
  '@nestjs/core',
  'reflect-metadata',
  'rxjs',
  '@opentelemetry/api',
  'pino',
  '@types/node',
]

/** `tsc --strict` for an ESM project on Node 20 (what `tsc --init` plus `"type": "module"` gives). */
const COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  moduleDetection: ts.ModuleDetectionKind.Force,
  types: ['node'],
  skipLibCheck: true,
  esModuleInterop: true,
  noEmitOnError: false,
}

/** A source file of the project: its name (`.ts`) and text. */
export interface ProjectFile {
  readonly name: string
  readonly text: string
  /** Compiler options on top of the defaults; files are compiled in one program per set. */
  readonly compilerOptions?: Readonly<Record<string, unknown>>
}

/** One type error, in a project file. */
export interface TypeProblem {
  readonly file: string
  /** 1-based line in the file. */
  readonly line: number
  readonly message: string
}

/** How a command ended. */
export interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** The project folder. */
export class DoctestProject {
  readonly dir: string

  private constructor(dir: string) {
    this.dir = dir
  }

  /** Makes the folder: `npm pack` of the built package unpacked, the libraries linked. */
  static create(): DoctestProject {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routemate-doctest-'))
    const pack = spawnSync(
      'npm',
      ['pack', '--ignore-scripts', '--pack-destination', dir, '--loglevel=error'],
      { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000 },
    )
    if (pack.status !== 0) throw new Error(`npm pack failed: ${pack.stdout}${pack.stderr}`)
    const tarball = path.join(dir, (pack.stdout.trim().split('\n').pop() as string).trim())
    const modules = path.join(dir, 'node_modules')
    const own = path.join(modules, 'routemate')
    fs.mkdirSync(own, { recursive: true })
    const tar = spawnSync('tar', ['-xzf', tarball, '-C', own, '--strip-components=1'], { encoding: 'utf8' })
    if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`)
    fs.rmSync(tarball)
    for (const name of LINKED) {
      const target = path.join(REPO_ROOT, 'node_modules', name)
      if (!fs.existsSync(target)) throw new Error(`${name} is not installed in the repository`)
      fs.mkdirSync(path.dirname(path.join(modules, name)), { recursive: true })
      fs.symlinkSync(target, path.join(modules, name), 'dir')
    }
    const bin = path.join(modules, '.bin')
    fs.mkdirSync(bin)
    fs.symlinkSync('../routemate/dist/cli/main.js', path.join(bin, 'routemate'))
    fs.chmodSync(path.join(own, 'dist/cli/main.js'), 0o755)
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      `${JSON.stringify({ name: 'readme-doctest', private: true, type: 'module' }, null, 2)}\n`,
    )
    fs.writeFileSync(path.join(dir, 'doctest-env.ts'), DOCTEST_ENV)
    return new DoctestProject(dir)
  }

  /** Writes a file of the project (relative path). */
  write(name: string, text: string): void {
    fs.mkdirSync(path.dirname(path.join(this.dir, name)), { recursive: true })
    fs.writeFileSync(path.join(this.dir, name), text)
  }

  /**
   * Type-checks the files (plus `doctest-env.ts`) and emits each `x.ts` as `x.js` beside it; one
   * program per set of compiler options. Returns every type error.
   */
  compile(files: readonly ProjectFile[]): TypeProblem[] {
    const groups = new Map<string, ProjectFile[]>()
    for (const f of files) {
      this.write(f.name, f.text)
      const key = JSON.stringify(f.compilerOptions ?? {})
      groups.set(key, [...(groups.get(key) ?? []), f])
    }
    const errors: TypeProblem[] = []
    for (const [key, group] of groups) {
      const options = { ...COMPILER_OPTIONS, ...(JSON.parse(key) as ts.CompilerOptions) }
      const roots = [...group.map((f) => path.join(this.dir, f.name)), path.join(this.dir, 'doctest-env.ts')]
      const program = ts.createProgram(roots, options)
      const diagnostics = [...ts.getPreEmitDiagnostics(program), ...program.emit().diagnostics]
      for (const d of diagnostics) {
        const message = ts.flattenDiagnosticMessageText(d.messageText, '\n')
        if (d.file === undefined || d.start === undefined) {
          errors.push({ file: '', line: 0, message: `TS${d.code}: ${message}` })
          continue
        }
        const { line } = d.file.getLineAndCharacterOfPosition(d.start)
        errors.push({
          file: path.relative(this.dir, d.file.fileName),
          line: line + 1,
          message: `TS${d.code}: ${message}`,
        })
      }
    }
    return errors
  }

  /** Runs a command (no shell) in the folder or a folder of it; never rejects on a non-zero exit. */
  run(
    command: string,
    args: readonly string[],
    env: Record<string, string> = {},
    timeoutMs = 60_000,
    cwd = '.',
  ): Promise<Ran> {
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        cwd: path.join(this.dir, cwd),
        env: { ...cleanEnv(), ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stdout = ''
      let stderr = ''
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        stdout += c
      })
      child.stderr.setEncoding('utf8').on('data', (c: string) => {
        stderr += c
      })
      const timer = setTimeout(() => {
        stderr += `\n[killed after ${timeoutMs} ms]`
        child.kill('SIGKILL')
      }, timeoutMs)
      child.once('error', (err) => {
        clearTimeout(timer)
        reject(err)
      })
      child.once('close', (code) => {
        clearTimeout(timer)
        resolve({ code, stdout, stderr })
      })
    })
  }

  /** Deletes the folder. */
  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true })
  }
}

/** The environment without npm script variables and the cluster variables of a parent run. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_/i.test(k) || k === 'NODE_OPTIONS' || k === 'DATABASE_URL' || k === 'REPLICA_URLS') continue
    env[k] = v
  }
  return env
}
