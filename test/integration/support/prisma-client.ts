/**
 * Generates the Prisma client of test/integration/prisma/schema.prisma for one test file, offline
 * (generating a client never runs the schema engine, so it may be /bin/false), into a directory of
 * its own (`prisma/gen-NAME/`, gitignored) so that test files running in parallel never write the
 * same files.
 */
import { execFile } from 'node:child_process'
import { copyFile, mkdir } from 'node:fs/promises'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'

const prismaDir = fileURLToPath(new URL('../prisma/', import.meta.url))

/** Generates the client into `prisma/gen-NAME/generated/` and imports its module. */
export async function generatePrismaClient<M>(name: string): Promise<M> {
  const dir = `${prismaDir}gen-${name}/`
  await mkdir(dir, { recursive: true })
  await copyFile(`${prismaDir}schema.prisma`, `${dir}schema.prisma`)
  await promisify(execFile)('npx', ['--no-install', 'prisma', 'generate', '--schema', 'schema.prisma'], {
    cwd: dir,
    env: {
      ...process.env,
      PRISMA_SCHEMA_ENGINE_BINARY: '/bin/false',
      CHECKPOINT_DISABLE: '1',
      PRISMA_HIDE_UPDATE_MESSAGE: '1',
    },
    timeout: 60_000,
  })
  return (await import(/* @vite-ignore */ pathToFileURL(`${dir}generated/client.ts`).href)) as M
}
