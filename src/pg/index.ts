export { type PgDriverOptions, pgDriver } from './pg-driver.js'
export { classifyPgError } from './pg-errors.js'
export { lsnReached } from './pg-position.js'
