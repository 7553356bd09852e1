/**
 * Declarative routing scopes for class methods: `@Transactional()`, `@ReadOnly()`,
 * `@UsePrimary()`, `@WithShard()`, and `useRouter` to register the router they use.
 *
 * @packageDocumentation
 */
export { NoRouterError } from './no-router-error.js'
export { ReadOnly, type ScopeDecoratorOptions } from './read-only.js'
export type { AnyMethod, AsyncMethod, RoutedMethodDecorator } from './routed-method.js'
export { Transactional, type TransactionalOptions } from './transactional.js'
export { UsePrimary } from './use-primary.js'
export { type RouterSource, useRouter } from './use-router.js'
export { WithShard } from './with-shard.js'
