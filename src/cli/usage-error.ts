/** A command line the CLI cannot run (exit status 2): unknown command or option, bad value. */
export class UsageError extends Error {
  /** The command whose `--help` to point at, if any. */
  readonly command: string | undefined

  constructor(message: string, command?: string) {
    super(message)
    this.name = 'UsageError'
    this.command = command
  }
}
