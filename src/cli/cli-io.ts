/** Where the CLI writes, and what it knows of its terminal. `process` provides it in `main.ts`; tests capture it. */
export interface CliIo {
  readonly stdout: { write(chunk: string): unknown }
  readonly stderr: { write(chunk: string): unknown }
  /** Whether stdout is a terminal (colours, spinner). */
  readonly isTTY: boolean
  /** Environment: `NO_COLOR`, `FORCE_COLOR`, `ROUTEMATE_CONFIG` and `${VAR}` references of config files. */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Working directory for relative paths and default config file names. Default: `process.cwd()`. */
  readonly cwd?: string
}
