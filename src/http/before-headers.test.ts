import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { beforeHeaders, setOrAppendHeader } from './before-headers.js'

/** Serves one request with `handler` on a real socket and returns the response. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Response> {
  const server = createServer(handler)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  try {
    const { port } = server.address() as AddressInfo
    const res = await fetch(`http://127.0.0.1:${port}/`)
    await res.text()
    return res
  } finally {
    await new Promise((r) => server.close(r))
  }
}

describe('beforeHeaders', () => {
  it('runs once before implicit headers (end), in time to set a header', async () => {
    let calls = 0
    const res = await serve((_req, res) => {
      beforeHeaders(res, () => {
        calls++
        res.setHeader('x-late', 'yes')
      })
      res.end('ok')
    })
    expect(res.headers.get('x-late')).toBe('yes')
    expect(calls).toBe(1)
  })

  it('runs before the first write of a streamed body, not after', async () => {
    const seen: string[] = []
    const res = await serve((_req, res) => {
      beforeHeaders(res, () => {
        seen.push('headers')
        res.setHeader('x-late', 'yes')
      })
      res.write('a')
      seen.push('wrote')
      res.end('b')
    })
    expect(seen).toEqual(['headers', 'wrote'])
    expect(res.headers.get('x-late')).toBe('yes')
  })

  it('applies writeHead headers first, so a set-cookie is appended to, not lost', async () => {
    const res = await serve((_req, res) => {
      beforeHeaders(res, () => setOrAppendHeader(res, 'set-cookie', 'b=2'))
      res.setHeader('x-before', '1')
      res.writeHead(201, 'Made', { 'set-cookie': 'a=1', 'x-arg': 'yes' })
      res.end()
    })
    expect(res.status).toBe(201)
    expect(res.statusText).toBe('Made')
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2'])
    expect(res.headers.get('x-arg')).toBe('yes')
    expect(res.headers.get('x-before')).toBe('1')
  })

  it('handles writeHead(status, headers) and writeHead(status) forms', async () => {
    const a = await serve((_req, res) => {
      beforeHeaders(res, () => res.setHeader('x-late', 'a'))
      res.writeHead(202, { 'x-arg': '1' }).end()
    })
    expect([a.status, a.headers.get('x-arg'), a.headers.get('x-late')]).toEqual([202, '1', 'a'])
    const b = await serve((_req, res) => {
      beforeHeaders(res, () => res.setHeader('x-late', 'b'))
      res.writeHead(204).end()
    })
    expect([b.status, b.headers.get('x-late')]).toEqual([204, 'b'])
  })
})

describe('setOrAppendHeader', () => {
  it('appends set-cookie to one or many, sets other headers', async () => {
    const res = await serve((_req, res) => {
      setOrAppendHeader(res, 'set-cookie', 'a=1')
      setOrAppendHeader(res, 'set-cookie', 'b=2')
      setOrAppendHeader(res, 'set-cookie', 'c=3')
      setOrAppendHeader(res, 'x-token', 'one')
      setOrAppendHeader(res, 'x-token', 'two')
      res.end()
    })
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2', 'c=3'])
    expect(res.headers.get('x-token')).toBe('two')
  })
})
