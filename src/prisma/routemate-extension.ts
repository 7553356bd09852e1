import type { AnyDriver } from '../router/driver.js'
import { currentScopeOf, type Router } from '../router/router.js'
import { ScopeBatcher, scopeKey } from './scope-batcher.js'

/** What Prisma passes to a `$allOperations` query hook (the part routemate uses). */
export interface PrismaOperationParams {
  /** The model (`undefined` for raw queries and other client-level operations). */
  readonly model?: string
  /** The operation: `findUnique`, `findMany`, `create`, `$queryRaw`... */
  readonly operation: string
  /** The operation's arguments. */
  readonly args: unknown
  /** Runs the operation (Prisma's lazy promise: it starts when awaited or `then`ed). */
  readonly query: (args: never) => PromiseLike<unknown>
  /** Prisma's internal request parameters (their `transaction`, if any). */
  readonly __internalParams?: { readonly transaction?: { readonly kind?: string } }
}

/**
 * The Prisma client extension made by {@link routemate}: pass it to `prisma.$extends(...)`.
 * Typed structurally, so this module needs no import of `@prisma/client`.
 */
export interface RoutematePrismaExtension {
  /** `'routemate'`. */
  readonly name: 'routemate'
  /** The query hook. */
  readonly query: {
    /** Runs every operation in its caller's routemate scope. */
    $allOperations(params: PrismaOperationParams): Promise<unknown>
  }
}

/** The scheduler of each router's extensions. */
const batchers = new WeakMap<object, ScopeBatcher>()

/** The operations Prisma batches across callers (its data loader groups them by tick). */
const BATCHED = new Set(['findUnique', 'findUniqueOrThrow'])

/**
 * A Prisma client extension (`prisma.$extends(routemate(router))`) that runs every Prisma
 * operation in the routemate scope of its own caller.
 *
 * Why: Prisma batches the `findUnique`/`findUniqueOrThrow` calls (and the operations of
 * `$transaction([...])`) made in one tick into one query, which runs in the async context of
 * whichever call came first, so without this extension `router.primary(() =>
 * prisma.user.findUnique(...))` issued in the same tick as a `router.readOnly(...)` one can be
 * served by a replica (and a read-your-writes session's read can go where its session would not
 * send it).
 *
 * How: those operations are grouped by scope (mode, transaction, shard, session), and each group is
 * handed to Prisma in a tick of its own, every call in its own caller's async context; calls whose
 * scopes agree still reach Prisma together and are still batched. Every other operation (writes,
 * `findMany`, raw queries, an interactive `$transaction`'s statements) is not batched across
 * callers by Prisma and runs as is, without delay. Cost: a batched read waits one tick, plus one
 * event-loop turn for each other scope ahead of it in that tick.
 *
 * Use the extended client everywhere: calls through the base client share its batches without
 * this protection. Works with PostgreSQL through `@prisma/adapter-pg` over `router.pool()`.
 *
 * @param router - The router whose `pool()` the client's driver adapter uses.
 * @returns An extension object for `prisma.$extends`.
 *
 * @example
 * ```ts
 * import { PrismaPg } from '@prisma/adapter-pg'
 * import { routemate } from 'routemate/prisma'
 * const prisma = new PrismaClient({ adapter: new PrismaPg(router.pool()) }).$extends(routemate(router))
 * await router.readOnly(() => prisma.user.findUnique({ where: { id: 1 } })) // a replica
 * ```
 */
export function routemate(router: Router<AnyDriver>): RoutematePrismaExtension {
  // One per router: clients extended twice (or two clients over one router) never mix scopes in a tick.
  let batcher = batchers.get(router)
  if (batcher === undefined) {
    batcher = new ScopeBatcher()
    batchers.set(router, batcher)
  }
  const scheduler = batcher
  return {
    name: 'routemate',
    query: {
      $allOperations(params: PrismaOperationParams): Promise<unknown> {
        const { operation, args, query } = params
        const run = query as (args: unknown) => PromiseLike<unknown>
        const tx = params.__internalParams?.transaction
        // An interactive transaction's statements run on its own connection, whatever the context.
        const batched = tx === undefined ? BATCHED.has(operation) : tx.kind === 'batch'
        if (!batched) return Promise.resolve(run(args))
        return new Promise<unknown>((resolve, reject) => {
          scheduler.defer(scopeKey(currentScopeOf(router)), () => {
            try {
              run(args).then(resolve, reject)
            } catch (err) {
              reject(err)
            }
          })
        })
      },
    },
  }
}
