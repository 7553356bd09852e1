/**
 * Test-only helpers for the OpenTelemetry tests (unit and integration): a metric reader collected
 * by hand, and a minimal AsyncLocalStorage context manager (what `@opentelemetry/context-async-hooks`
 * provides, which is not installed here). Not exported by the package.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { type Context, type ContextManager, ROOT_CONTEXT } from '@opentelemetry/api'
import { MetricReader } from '@opentelemetry/sdk-metrics'

/** A metric reader the test collects explicitly. */
export class ManualReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** A minimal AsyncLocalStorage context manager. */
export class AlsContextManager implements ContextManager {
  readonly #als = new AsyncLocalStorage<Context>()
  active(): Context {
    return this.#als.getStore() ?? ROOT_CONTEXT
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#als.run(ctx, () => fn.call(thisArg, ...args))
  }
  bind<T>(_ctx: Context, target: T): T {
    return target
  }
  enable(): this {
    return this
  }
  disable(): this {
    this.#als.disable()
    return this
  }
}
