import { describe, expect, it } from 'vitest'
import { Keyword, keywordAt } from './sql-keywords.js'
import { SqlLexer } from './sql-lexer.js'
import { TokenKind } from './sql-token.js'

const NAMES = Object.fromEntries(Object.entries(TokenKind).map(([k, v]) => [v, k]))

function tokens(dialect: 'postgres' | 'mysql', sql: string, otherEscapes = false): string[] {
  const lx = new SqlLexer(dialect)
  lx.reset(sql, otherEscapes)
  const out: string[] = []
  for (let k = lx.next(); k !== TokenKind.End; k = lx.next()) {
    out.push(`${NAMES[k]}:${sql.slice(lx.start, lx.end)}`)
    if (k === TokenKind.Unterminated || k === TokenKind.Opaque) break
  }
  return out
}

describe('SqlLexer', () => {
  it.each([
    ['SELECT a, "b""c" FROM t', ['Word:SELECT', 'Word:a', 'Punct:,', 'Quoted:"b""c"', 'Word:FROM', 'Word:t']],
    ["x = 'it''s' -- c\n/* a /* b */ c */ y", ['Word:x', 'Punct:=', "String:'it''s'", 'Word:y']],
    ['$1 $$a$$ $q$ $$ $q$ a$b $', ['Param:$1', 'String:$$a$$', 'String:$q$ $$ $q$', 'Word:a$b', 'Punct:$']],
    ["E'a\\'b' e'c'", ["String:'a\\'b'", "String:'c'"]],
    ['1.5e3 .5 1for 2e', ['Number:1.5e3', 'Number:.5', 'Number:1', 'Word:for', 'Number:2', 'Word:e']],
    ['a::int # b', ['Word:a', 'Punct::', 'Punct::', 'Word:int', 'Punct:#', 'Word:b']],
    ['café ? x', ['Word:café', 'Param:?', 'Word:x']],
    ["'open", ["Unterminated:'open"]],
    ['/* open /* nested */', ['Unterminated:']],
    ['$t$ open', ['Unterminated:$t$ open']],
  ])('postgres %j', (sql, expected) => {
    expect(tokens('postgres', sql)).toEqual(expected)
  })

  it.each([
    ['\'it\\\'s\' `a``b` "c\\"d"', ["String:'it\\'s'", 'Quoted:`a``b`', 'Quoted:"c\\"d"']],
    ['a # c\nb -- c\nc --d', ['Word:a', 'Word:b', 'Word:c', 'Punct:-', 'Punct:-', 'Word:d']],
    ['a /* x /* y */ b */', ['Word:a', 'Word:b', 'Punct:*', 'Punct:/']],
    ['a /*! FOR UPDATE */', ['Word:a', 'Opaque:/*! FOR UPDATE */']],
    ['a /*M!1 b */', ['Word:a', 'Opaque:/*M!1 b */']],
    ['a /*+ hint */ b', ['Word:a', 'Word:b']],
    ['$x @v', ['Word:$x', 'Punct:@', 'Word:v']],
    ["E'x'", ['Word:E', "String:'x'"]],
  ])('mysql %j', (sql, expected) => {
    expect(tokens('mysql', sql)).toEqual(expected)
  })

  it('flags backslashes in setting-dependent strings and reads them the other way on request', () => {
    const lx = new SqlLexer('mysql')
    lx.reset("'a\\' b'")
    lx.next()
    expect(lx.ambiguous).toBe(true)
    expect(tokens('mysql', "'a\\' b'", true)).toEqual(["String:'a\\'", 'Word:b', "Unterminated:'"])
    expect(tokens('postgres', "'a\\' b'", true)).toEqual(["String:'a\\' b'"])
    const pg = new SqlLexer('postgres')
    pg.reset("E'a\\'' \"x\\\"")
    pg.next()
    pg.next()
    expect(pg.ambiguous).toBe(false) // E'' strings and pg names never depend on the setting
    expect(pg.backslash).toBe(true)
  })

  it('keeps returning End at the end', () => {
    const lx = new SqlLexer('postgres')
    lx.reset('a')
    expect([lx.next(), lx.next(), lx.next()]).toEqual([TokenKind.Word, TokenKind.End, TokenKind.End])
  })
})

describe('keywordAt', () => {
  it('matches keywords in any case and nothing else', () => {
    expect(keywordAt('x For y', 2, 5)).toBe(Keyword.FOR)
    expect(keywordAt('sql_calc_found_rows', 0, 19)).toBe(Keyword.SQL_CALC_FOUND_ROWS)
    expect(keywordAt('fOR', 0, 3)).toBe(Keyword.FOR)
    expect(keywordAt('fox', 0, 3)).toBe(Keyword.NONE)
    expect(keywordAt('selected', 0, 8)).toBe(Keyword.NONE)
    expect(keywordAt('a_very_long_identifier_name', 0, 27)).toBe(Keyword.NONE)
    expect(keywordAt('&OR', 0, 3)).toBe(Keyword.NONE) // same slot as FOR (& and F share the low bits)
  })
})
