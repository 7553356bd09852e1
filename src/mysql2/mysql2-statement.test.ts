import { describe, expect, it } from 'vitest'
import { asPrepared, isPlainText, isPrepared, PreparedText, queryOptions, sqlOf } from './mysql2-statement.js'

describe('mysql2 statements', () => {
  it('isPlainText: text with an array of values or none, nothing else', () => {
    expect(isPlainText('SELECT ?', [1])).toBe(true)
    expect(isPlainText('SELECT 1', undefined)).toBe(true)
    expect(isPlainText('SELECT ?', [])).toBe(true)
    expect(isPlainText('SELECT ?', 1)).toBe(false) // a scalar: mysql2 wraps it, the options form keeps that
    expect(isPlainText('SELECT :id', { id: 1 })).toBe(false) // named placeholders
    expect(isPlainText('SELECT ?', null)).toBe(false)
    expect(isPlainText({ sql: 'SELECT ?' }, [1])).toBe(false)
    expect(isPlainText({ sql: 'SELECT ?', rowsAsArray: true }, undefined)).toBe(false)
  })

  it('PreparedText is prepared and keeps its text; asPrepared marks a copy, never the caller’s object', () => {
    const text = new PreparedText('SELECT ? AS x')
    expect(isPrepared(text)).toBe(true)
    expect(sqlOf(text)).toBe('SELECT ? AS x')
    expect(queryOptions(text, [1], 0)).toEqual({ sql: 'SELECT ? AS x', values: [1] })
    const options = { sql: 'SELECT 1', rowsAsArray: true }
    const marked = asPrepared(options)
    expect(isPrepared(marked)).toBe(true)
    expect(isPrepared(options)).toBe(false)
    expect(marked).toEqual(options)
    expect(isPrepared('SELECT 1')).toBe(false)
    expect(isPrepared({ sql: 'SELECT 1' })).toBe(false)
    expect(isPrepared(null)).toBe(false)
  })

  it('queryOptions builds fresh options: values given win, the timeout unless the statement sets one', () => {
    const stmt = { sql: 'SELECT ?', values: [1], timeout: 50 }
    const out = queryOptions(stmt, [2], 5000)
    expect(out).toEqual({ sql: 'SELECT ?', values: [2], timeout: 50 })
    expect(stmt.values).toEqual([1])
    expect(queryOptions('SELECT 1', undefined, 5000)).toEqual({ sql: 'SELECT 1', timeout: 5000 })
    expect(queryOptions({ text: 'SELECT 2' }, undefined, 0)).toEqual({ sql: 'SELECT 2' })
  })
})
