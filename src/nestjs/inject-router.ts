import { Inject } from '@nestjs/common'
import { ROUTEMATE_ROUTER } from './tokens.js'

/**
 * Injects the `Router` that `RoutemateModule` provides: `@Inject(ROUTEMATE_ROUTER)` by name.
 *
 * Needs NestJS's legacy decorators (`experimentalDecorators`). Injecting by type
 * (`constructor(private readonly router: Router)`) works too when `emitDecoratorMetadata` is on
 * and `Router` is imported as a value.
 *
 * @example
 * ```ts
 * @Injectable()
 * export class UserService {
 *   constructor(@InjectRouter() private readonly router: Router) {}
 * }
 * ```
 */
export function InjectRouter(): PropertyDecorator & ParameterDecorator {
  return Inject(ROUTEMATE_ROUTER)
}
