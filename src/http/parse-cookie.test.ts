import { describe, expect, it } from 'vitest'
import { parseCookie } from './parse-cookie.js'

describe('parseCookie', () => {
  it('finds a cookie among others, spaces tolerated', () => {
    expect(parseCookie('a=1; rm=rm1.abc_-; b=2', 'rm')).toBe('rm1.abc_-')
    expect(parseCookie('rm=x', 'rm')).toBe('x')
    expect(parseCookie('  a=1 ;rm = v ; b=2', 'rm')).toBe('v')
    expect(parseCookie('a=1;rm=last', 'rm')).toBe('last')
  })

  it('returns undefined when absent, for an empty header and for undefined', () => {
    expect(parseCookie('a=1; b=2', 'rm')).toBeUndefined()
    expect(parseCookie('', 'rm')).toBeUndefined()
    expect(parseCookie(undefined, 'rm')).toBeUndefined()
    expect(parseCookie('rm', 'rm')).toBeUndefined()
    expect(parseCookie('rm;a=1', 'rm')).toBeUndefined()
  })

  it('matches the whole name only', () => {
    expect(parseCookie('xrm=1; rmx=2', 'rm')).toBeUndefined()
    expect(parseCookie('xrm=1; rm=3', 'rm')).toBe('3')
  })

  it('first occurrence wins', () => {
    expect(parseCookie('rm=first; rm=second', 'rm')).toBe('first')
  })

  it('keeps "=" inside the value, unquotes and percent-decodes, leaves bad encodings as is', () => {
    expect(parseCookie('rm=a=b==', 'rm')).toBe('a=b==')
    expect(parseCookie('rm="quoted"', 'rm')).toBe('quoted')
    expect(parseCookie('rm=a%20b', 'rm')).toBe('a b')
    expect(parseCookie('rm=%E0%A4%A', 'rm')).toBe('%E0%A4%A')
    expect(parseCookie('rm=', 'rm')).toBe('')
  })

  it('reads an array of headers (the first that has it)', () => {
    expect(parseCookie(['a=1', 'rm=2; rm=3'], 'rm')).toBe('2')
    expect(parseCookie([], 'rm')).toBeUndefined()
  })

  it('is linear on a huge hostile header', () => {
    const header = `${';'.repeat(1_000_000)}${'='.repeat(1_000_000)}; rm=ok`
    const started = performance.now()
    expect(parseCookie(header, 'rm')).toBe('ok')
    expect(parseCookie(`${'a;'.repeat(500_000)}x=1`, 'rm')).toBeUndefined()
    expect(performance.now() - started).toBeLessThan(200)
  })
})
