export { type PgDriver, type PgDriverOptions, type PgResultFields, pgDriver } from './pg-driver.js'
export { classifyPgError } from './pg-errors.js'
export { lsnReached } from './pg-position.js'
