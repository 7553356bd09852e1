/**
 * `routemate/prisma`: a Prisma client extension that runs every Prisma operation in its caller's
 * routemate scope, keeping Prisma's batching of `findUnique` calls within one scope.
 *
 * @example
 * ```ts
 * import { PrismaPg } from '@prisma/adapter-pg'
 * import { routemate } from 'routemate/prisma'
 * const prisma = new PrismaClient({ adapter: new PrismaPg(router.pool()) }).$extends(routemate(router))
 * ```
 *
 * @module
 */
export {
  type PrismaOperationParams,
  type RoutematePrismaExtension,
  routemate,
} from './routemate-extension.js'
