/**
 * Logging of router events: a pino-compatible {@link Logger} interface, {@link attachLogger} and
 * {@link consoleLogger}. routemate logs nothing unless a logger is attached.
 *
 * @module
 */
export { type AttachLoggerOptions, attachLogger, EVENT_LOG_LEVELS } from './attach-logger.js'
export { consoleLogger } from './console-logger.js'
export type { LogFn, Logger, LogLevel } from './logger.js'
