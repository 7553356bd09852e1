import {
  type DynamicModule,
  type FactoryProvider,
  Inject,
  Module,
  type ModuleMetadata,
  type OnApplicationShutdown,
  type OnModuleInit,
  type Provider,
} from '@nestjs/common'
import { useRouter } from '../decorators/use-router.js'
import type { RouterOptions } from '../router/options.js'
import { createRouter, Router } from '../router/router.js'
import { RoutemateHealthIndicator } from './routemate-health-indicator.js'
import { ROUTEMATE_OPTIONS, ROUTEMATE_ROUTER } from './tokens.js'

/** Options of `RoutemateModule.forRoot`: the router's options, plus `global`. */
export interface RoutemateModuleOptions extends RouterOptions {
  /** Make the router and the health indicator injectable in every module. Default: `true`. */
  global?: boolean
}

/** Options of `RoutemateModule.forRootAsync`: a factory (with its injected dependencies) resolving the router's options. */
export interface RoutemateModuleAsyncOptions {
  /** Modules exporting what the factory injects (e.g. `ConfigModule`). */
  imports?: ModuleMetadata['imports']
  /** Tokens injected into `useFactory`, in order. */
  inject?: FactoryProvider['inject']
  /** Returns (or resolves to) the router's options. */
  // biome-ignore lint/suspicious/noExplicitAny: the injected dependencies are whatever `inject` names
  useFactory: (...args: any[]) => RouterOptions | Promise<RouterOptions>
  /** Make the router and the health indicator injectable in every module. Default: `true`. */
  global?: boolean
}

/** The decorator registration of each router the module made, undone on shutdown. */
const registrations = new WeakMap<Router, () => void>()

function makeRouter(options: RouterOptions): Router {
  const router = createRouter(options)
  // Registered at once (not in onModuleInit), so decorated methods work even when called from
  // another provider's constructor or onModuleInit.
  registrations.set(router, useRouter(router))
  return router
}

function routerOptions(options: RouterOptions & { global?: boolean }): RouterOptions {
  const { global: _global, ...rest } = options
  return rest
}

function dynamicModule(
  global: boolean,
  providers: Provider[],
  imports: ModuleMetadata['imports'] = [],
): DynamicModule {
  return {
    module: RoutemateModule,
    global,
    imports,
    providers: [...providers, { provide: Router, useExisting: ROUTEMATE_ROUTER }, RoutemateHealthIndicator],
    exports: [ROUTEMATE_ROUTER, Router, RoutemateHealthIndicator],
  }
}

/**
 * The NestJS module of routemate: provides one `Router` (token `ROUTEMATE_ROUTER`, or the `Router`
 * class), waits for `router.ready()` while the application initialises, registers the router for
 * the decorators (`@Transactional()`, `@ReadOnly()`, ...) and closes it when the application shuts
 * down (`app.close()`, or a signal with `app.enableShutdownHooks()`).
 *
 * Global by default (`global: false` to import it where needed). Also provides
 * `RoutemateHealthIndicator` for `@nestjs/terminus`. Each `forRoot` makes its own router; the
 * decorators use the one registered last (pass `router` to a decorator to choose).
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [RoutemateModule.forRoot({ driver: pgDriver(), primary: PRIMARY_URL, replicas: [R1_URL] })],
 *   providers: [UserService],
 * })
 * export class AppModule {}
 * ```
 */
export class RoutemateModule implements OnModuleInit, OnApplicationShutdown {
  readonly #router: Router

  constructor(router: Router) {
    this.#router = router
  }

  /**
   * Provides a router made from `options` (validated when the module is instantiated: a
   * `ConfigError` stops the application from starting).
   */
  static forRoot(options: RoutemateModuleOptions): DynamicModule {
    return dynamicModule(options.global ?? true, [
      { provide: ROUTEMATE_ROUTER, useFactory: () => makeRouter(routerOptions(options)) },
    ])
  }

  /**
   * Provides a router made from the options a factory resolves, with injected dependencies.
   *
   * @example
   * ```ts
   * RoutemateModule.forRootAsync({
   *   imports: [ConfigModule],
   *   inject: [ConfigService],
   *   useFactory: (config: ConfigService) => ({ driver: pgDriver(), primary: config.get('DATABASE_URL') }),
   * })
   * ```
   */
  static forRootAsync(options: RoutemateModuleAsyncOptions): DynamicModule {
    return dynamicModule(
      options.global ?? true,
      [
        { provide: ROUTEMATE_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] },
        {
          provide: ROUTEMATE_ROUTER,
          useFactory: (resolved: RouterOptions) => makeRouter(resolved),
          inject: [ROUTEMATE_OPTIONS],
        },
      ],
      options.imports,
    )
  }

  /** Waits for the first health probe of every node. */
  async onModuleInit(): Promise<void> {
    await this.#router.ready()
  }

  /** Unregisters the router from the decorators and closes it (drains, ends every pool). */
  async onApplicationShutdown(): Promise<void> {
    registrations.get(this.#router)?.()
    registrations.delete(this.#router)
    await this.#router.close()
  }
}
Inject(ROUTEMATE_ROUTER)(RoutemateModule, undefined, 0)
Module({})(RoutemateModule)
