/**
 * routemate for NestJS: `RoutemateModule` (provides the router, readies it on start, closes it on
 * shutdown), `@InjectRouter()`, `RoutemateHealthIndicator` for `@nestjs/terminus`, and the method
 * decorators (`@Transactional()`, `@ReadOnly()`, `@UsePrimary()`, `@WithShard()`).
 *
 * `@nestjs/common` and `@nestjs/core` are optional peer dependencies: only this entry point loads them.
 *
 * @packageDocumentation
 */
export {
  NoRouterError,
  ReadOnly,
  type ScopeDecoratorOptions,
  Transactional,
  type TransactionalOptions,
  UsePrimary,
  useRouter,
  WithShard,
} from '../decorators/index.js'
export { InjectRouter } from './inject-router.js'
export {
  type RoutemateHealth,
  RoutemateHealthIndicator,
  type RoutemateNodeHealth,
} from './routemate-health-indicator.js'
export {
  RoutemateModule,
  type RoutemateModuleAsyncOptions,
  type RoutemateModuleOptions,
} from './routemate-module.js'
export { ROUTEMATE_ROUTER } from './tokens.js'
