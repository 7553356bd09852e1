/**
 * The injection token of the `Router` that `RoutemateModule` provides (the `Router` class is a
 * token for the same instance too).
 *
 * @example
 * ```ts
 * constructor(@Inject(ROUTEMATE_ROUTER) private readonly router: Router) {}
 * // or: constructor(@InjectRouter() private readonly router: Router) {}
 * ```
 */
export const ROUTEMATE_ROUTER = 'ROUTEMATE_ROUTER'

/** The injection token of the router options `RoutemateModule.forRootAsync` resolves. Internal. */
export const ROUTEMATE_OPTIONS = 'ROUTEMATE_OPTIONS'
