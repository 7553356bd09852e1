import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto'

/**
 * Builds a PostgreSQL SCRAM-SHA-256 password verifier (`SCRAM-SHA-256$4096:salt$StoredKey:ServerKey`)
 * on the client, so `CREATE ROLE ... PASSWORD '<verifier>'` never sends the plain password to the
 * server, where a failed statement could write it to the server log.
 *
 * The password is used as given (no SASLprep): identical for ASCII passwords, and what the `pg`
 * client does; `psql` may disagree for non-ASCII ones.
 *
 * @example
 * ```ts
 * scramSha256Verifier('app-secret') // 'SCRAM-SHA-256$4096:...'
 * ```
 */
export function scramSha256Verifier(password: string, iterations = 4096): string {
  const salt = randomBytes(16)
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256')
  const clientKey = createHmac('sha256', salted).update('Client Key').digest()
  const storedKey = createHash('sha256').update(clientKey).digest()
  const serverKey = createHmac('sha256', salted).update('Server Key').digest()
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`
}
