export { classifyPgError } from './pg-errors.js'
export { type PgDriverOptions, pgDriver } from './pg-driver.js'
export { lsnReached } from './pg-position.js'
