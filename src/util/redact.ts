/**
 * Redacts the password of a connection URL (`postgres://app:secret@h/db` -> `postgres://app:***@h/db`),
 * including `password=` query parameters. Never throws; strings that are not URLs are scanned for
 * `user:password@` and `password=` patterns too.
 *
 * @example
 * ```ts
 * redactUrl('postgres://app:s3cret@db:5432/app') // 'postgres://app:***@db:5432/app'
 * ```
 */
export function redactUrl(url: string): string {
  return url
    .replace(/(\/\/[^:/?#@\s]*):([^@/\s]*)@/g, '$1:***@')
    .replace(/([?&;\s]|^)(password|pass|pwd)=([^&;\s]*)/gi, '$1$2=***')
}

/**
 * Redacts every occurrence of the given secrets (passwords taken from the configured URLs) in a
 * free text, such as a driver error message. Empty secrets are ignored.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text
  for (const s of secrets) if (s.length > 0) out = out.split(s).join('***')
  return out
}
