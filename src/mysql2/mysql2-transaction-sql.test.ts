import { describe, expect, it } from 'vitest'
import type { IsolationLevel } from '../router/driver.js'
import { beginStatements, savepointSql } from './mysql2-transaction-sql.js'

describe('beginStatements', () => {
  it('begins read-write or read-only', () => {
    expect(beginStatements({ readOnly: false })).toEqual(['START TRANSACTION'])
    expect(beginStatements({ readOnly: true })).toEqual(['START TRANSACTION READ ONLY'])
  })
  it('sets the isolation level first', () => {
    const levels: [IsolationLevel, string][] = [
      ['read uncommitted', 'READ UNCOMMITTED'],
      ['read committed', 'READ COMMITTED'],
      ['repeatable read', 'REPEATABLE READ'],
      ['serializable', 'SERIALIZABLE'],
    ]
    for (const [isolation, sql] of levels) {
      expect(beginStatements({ readOnly: false, isolation })).toEqual([
        `SET TRANSACTION ISOLATION LEVEL ${sql}`,
        'START TRANSACTION',
      ])
      expect(beginStatements({ readOnly: true, isolation })).toEqual([
        `SET TRANSACTION ISOLATION LEVEL ${sql}`,
        'START TRANSACTION READ ONLY',
      ])
    }
  })
  it('rejects unknown isolation levels', () => {
    for (const bad of ['snapshot', 'SERIALIZABLE', 'toString', '; DROP TABLE x']) {
      expect(() => beginStatements({ readOnly: false, isolation: bad as IsolationLevel }), bad).toThrow(
        TypeError,
      )
    }
  })
})

describe('savepointSql', () => {
  it('creates, releases and rolls back to savepoints', () => {
    expect(savepointSql('routemate_sp_1', 'create')).toBe('SAVEPOINT routemate_sp_1')
    expect(savepointSql('routemate_sp_1', 'release')).toBe('RELEASE SAVEPOINT routemate_sp_1')
    expect(savepointSql('routemate_sp_1', 'rollback')).toBe('ROLLBACK TO SAVEPOINT routemate_sp_1')
  })
  it('rejects names that are not plain identifiers', () => {
    for (const bad of ['', '1sp', 'a b', 'sp;DROP', 'x'.repeat(65)]) {
      expect(() => savepointSql(bad, 'create'), bad).toThrow(TypeError)
    }
  })
})
