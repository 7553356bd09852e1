import type { Router } from '../router/router.js'
import { type RouterSource, resolveRouter } from './use-router.js'

/**
 * A method decorator that works in both TypeScript decorator modes: standard (TC39, TypeScript 5
 * with `experimentalDecorators: false`, called as `(method, context)`) and legacy
 * (`experimentalDecorators: true`, NestJS's default, called as `(prototype, name, descriptor)`).
 * The mode is detected from the arguments at runtime.
 */
export interface RoutedMethodDecorator<Method extends AnyMethod = AnyMethod> {
  /** Standard (TC39) decorator. */
  <M extends Method>(value: M, context: ClassMethodDecoratorContext<ThisParameterType<M>, M>): M
  /** Legacy (`experimentalDecorators`) decorator. */
  <M extends Method>(
    target: object,
    propertyKey: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ): TypedPropertyDescriptor<M>
}

/** Any method: the constraint of the decorators that keep a method's return type as is. */
// biome-ignore lint/suspicious/noExplicitAny: the widest method type, so every method is assignable
export type AnyMethod = (this: any, ...args: any[]) => unknown

/** A method returning a promise (or any thenable): what `@Transactional()` and `@WithShard()` decorate. */
// biome-ignore lint/suspicious/noExplicitAny: the widest method type, so every async method is assignable
export type AsyncMethod = (this: any, ...args: any[]) => PromiseLike<unknown>

/** Runs one call of the decorated method (`call`) inside the router's scope. */
export type Around = (router: Router, call: () => unknown, thisArg: unknown, args: unknown[]) => unknown

type Reflector = {
  getOwnMetadataKeys?: (target: object) => unknown[]
  getOwnMetadata?: (key: unknown, target: object) => unknown
  defineMetadata?: (key: unknown, value: unknown, target: object) => void
}

/**
 * Gives the wrapper the original's identity: its `name` and `length`, and (when `reflect-metadata`
 * is loaded) every metadata key other decorators stored on the original function, such as NestJS's
 * route path and guards when our decorator is written above theirs.
 */
function copyIdentity(original: Function, wrapper: Function): void {
  Object.defineProperty(wrapper, 'name', { value: original.name, configurable: true })
  Object.defineProperty(wrapper, 'length', { value: original.length, configurable: true })
  const reflect = Reflect as unknown as Reflector
  if (
    typeof reflect.getOwnMetadataKeys !== 'function' ||
    typeof reflect.getOwnMetadata !== 'function' ||
    typeof reflect.defineMetadata !== 'function'
  ) {
    return
  }
  for (const key of reflect.getOwnMetadataKeys(original)) {
    reflect.defineMetadata(key, reflect.getOwnMetadata(key, original), wrapper)
  }
}

function isTc39Context(value: unknown): value is { kind: string; name: string | symbol } {
  return typeof value === 'object' && value !== null && 'kind' in value && 'name' in value
}

/**
 * Builds a routemate method decorator: every call of the decorated method runs through `around`
 * with the router found at call time (explicit `source`, else the registered one). With `async`,
 * the wrapper always returns a promise (and reports a missing router or a throwing `around` as a
 * rejection); otherwise it returns what `around` returns and throws synchronously.
 *
 * Internal: the public decorators are `Transactional`, `ReadOnly`, `UsePrimary`, `WithShard`.
 */
export function routedMethod<Method extends AnyMethod>(
  decorator: string,
  source: RouterSource | undefined,
  async: boolean,
  around: Around,
): RoutedMethodDecorator<Method> {
  const wrap = (original: unknown, key: string | symbol): Function => {
    if (typeof original !== 'function') {
      throw new TypeError(`@${decorator}() decorates methods only; "${String(key)}" is not a method`)
    }
    const method = typeof key === 'symbol' ? `[${key.description ?? ''}]` : key
    const call = function (this: unknown, args: unknown[]): unknown {
      const router = resolveRouter(source, decorator, method)
      return around(router, () => original.apply(this, args), this, args)
    }
    const wrapper = async
      ? function (this: unknown, ...args: unknown[]): Promise<unknown> {
          try {
            return Promise.resolve(call.call(this, args))
          } catch (err) {
            return Promise.reject(err)
          }
        }
      : function (this: unknown, ...args: unknown[]): unknown {
          return call.call(this, args)
        }
    copyIdentity(original, wrapper)
    return wrapper
  }

  function decorate(target: unknown, context: unknown, descriptor?: PropertyDescriptor): unknown {
    if (isTc39Context(context)) {
      if (context.kind !== 'method') {
        throw new TypeError(`@${decorator}() decorates methods only, not a ${context.kind}`)
      }
      return wrap(target, context.name)
    }
    const key = context
    const objectTarget = (typeof target === 'object' || typeof target === 'function') && target !== null
    if (!objectTarget || (typeof key !== 'string' && typeof key !== 'symbol')) {
      throw new TypeError(`@${decorator}() must decorate a class method`)
    }
    const desc = descriptor ?? Object.getOwnPropertyDescriptor(target, key)
    if (desc === undefined || typeof desc.value !== 'function') {
      throw new TypeError(`@${decorator}() decorates methods only; "${String(key)}" is not a method`)
    }
    return { ...desc, value: wrap(desc.value, key) }
  }
  return decorate as RoutedMethodDecorator<Method>
}
