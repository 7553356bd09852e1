import { describe, expect, it } from 'vitest'
import { nativeResult, toQueryResult } from './mysql2-result.js'

const FIELD_ID = { name: 'id', columnType: 3 }
const FIELD_V = { name: 'v', columnType: 253 }

describe('toQueryResult', () => {
  it('maps a result set', () => {
    const rows = [
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
    ]
    const fields = [FIELD_ID, FIELD_V]
    const res = toQueryResult(rows, fields)
    expect(res).toEqual({ rows, rowCount: 2, fields })
    expect(nativeResult(res)[0]).toBe(rows)
    expect(nativeResult(res)[1]).toBe(fields)
  })

  it('maps an empty result set', () => {
    expect(toQueryResult([], [FIELD_ID])).toEqual({ rows: [], rowCount: 0, fields: [FIELD_ID] })
  })

  it('maps rowsAsArray rows as one result set', () => {
    const rows = [[1, 'a']]
    expect(toQueryResult(rows, [FIELD_ID, FIELD_V])).toMatchObject({ rows, rowCount: 1 })
  })

  it('maps a ResultSetHeader', () => {
    const header = {
      fieldCount: 0,
      affectedRows: 3,
      insertId: 42,
      info: 'Records: 3  Duplicates: 0  Warnings: 0',
      serverStatus: 2,
      warningStatus: 0,
      changedRows: 0,
    }
    const res = toQueryResult(header, undefined)
    expect(res).toEqual({
      rows: [],
      rowCount: 3,
      insertId: 42,
      affectedRows: 3,
      changedRows: 0,
      info: 'Records: 3  Duplicates: 0  Warnings: 0',
      warningStatus: 0,
    })
    expect(nativeResult(res)[0]).toBe(header)
  })

  it('maps several results (multiple statements, CALL)', () => {
    const header = { affectedRows: 0, insertId: 0, changedRows: 0, info: '', warningStatus: 0 }
    const results = [[{ id: 1 }], header]
    const fields = [[FIELD_ID], undefined]
    expect(toQueryResult(results, fields)).toEqual({ rows: results, rowCount: null, fields })
    const two = [[{ id: 1 }], [{ v: 'x' }]]
    expect(toQueryResult(two, [[FIELD_ID], [FIELD_V]])).toMatchObject({ rowCount: null })
  })

  it('keeps the native pair out of enumeration', () => {
    const res = toQueryResult([{ id: 1 }], [FIELD_ID])
    expect(Object.keys(res)).toEqual(['rows', 'rowCount', 'fields'])
    expect(JSON.stringify(res)).toBe(
      '{"rows":[{"id":1}],"rowCount":1,"fields":[{"name":"id","columnType":3}]}',
    )
  })
})

describe('nativeResult', () => {
  it('rebuilds [rows, fields] from a foreign result', () => {
    expect(nativeResult({ rows: [{ a: 1 }], rowCount: 1, fields: [] })).toEqual([[{ a: 1 }], []])
  })
})

describe('toQueryResult of a result set', () => {
  it('is a plain object with exactly rows, rowCount and fields (made without an object literal)', () => {
    const rows = [{ a: 1 }]
    const fields = [{ name: 'a' }]
    const res = toQueryResult(rows, fields)
    expect(Object.getPrototypeOf(res)).toBe(Object.prototype)
    expect(Reflect.ownKeys(res)).toEqual(['rows', 'rowCount', 'fields'])
    expect(res).toStrictEqual({ rows, rowCount: 1, fields })
  })
})
