import type { Dialect } from './driver.js'

/**
 * A driver with every required member, for tests of config parsing (which never calls it).
 *
 * @example
 * ```ts
 * resolveConfig({ driver: configDriver('mysql'), primary: 'mysql://app@db/app' })
 * ```
 */
export function configDriver(dialect: Dialect = 'postgres') {
  return {
    dialect,
    name: 'fake',
    createPool: () => {
      throw new Error('not used')
    },
    execute: async () => ({ rows: [], rowCount: 0 }),
    probe: async () => ({ role: 'primary' as const }),
    positionReached: () => true,
    positionAfterWrite: async () => '0/0',
    waitForPosition: async () => '0/0',
    beginSql: () => 'BEGIN',
    savepointSql: () => 'SAVEPOINT x',
    classify: () => 'statement' as const,
  }
}
