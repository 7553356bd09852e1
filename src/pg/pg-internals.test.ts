import { EventEmitter } from 'node:events'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import net from 'node:net'
import pg from 'pg'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ConfigError } from '../errors/config-error.js'
import {
  backendKey,
  checkPgClient,
  clientClosing,
  destroyClient,
  markPoolEnding,
  onParameterStatus,
  pgVersion,
  refClient,
  transactionStatus,
} from './pg-internals.js'

const installed = (
  JSON.parse(readFileSync(createRequire(import.meta.url).resolve('pg/package.json'), 'utf8')) as {
    version: string
  }
).version

/** One backend message: type byte, int32 length, payload. */
function message(type: string, payload: Buffer): Buffer {
  const head = Buffer.alloc(5)
  head.write(type, 0, 'latin1')
  head.writeInt32BE(payload.length + 4, 1)
  return Buffer.concat([head, payload])
}
const cstr = (s: string) => Buffer.from(`${s}\0`, 'utf8')
const int32 = (n: number) => {
  const b = Buffer.alloc(4)
  b.writeInt32BE(n)
  return b
}
const ready = (status: 'I' | 'T' | 'E') => message('Z', Buffer.from(status, 'latin1'))
const parameterStatus = (name: string, value: string) =>
  message('S', Buffer.concat([cstr(name), cstr(value)]))
const complete = (tag: string) => message('C', cstr(tag))

/**
 * A minimal PostgreSQL backend on a loopback socket, enough for a real `pg.Client` to connect and
 * run simple queries: trust login, BackendKeyData, ParameterStatus, and per-query replies
 * (BEGIN → 'T', a query containing "fail" → an error, 'E' inside a transaction, ROLLBACK/COMMIT
 * → 'I', SET application_name → a ParameterStatus, "sleep" → never answered).
 */
async function fakeBackend(pid: number, key: number): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    let buf = Buffer.alloc(0)
    let started = false
    let tx: 'I' | 'T' | 'E' = 'I'
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk])
      for (;;) {
        if (!started) {
          if (buf.length < 4) return
          const len = buf.readInt32BE(0)
          if (buf.length < len) return
          buf = buf.subarray(len)
          started = true
          socket.write(
            Buffer.concat([
              message('R', int32(0)),
              parameterStatus('server_version', '17.0'),
              parameterStatus('in_hot_standby', 'off'),
              message('K', Buffer.concat([int32(pid), int32(key)])),
              ready('I'),
            ]),
          )
          continue
        }
        if (buf.length < 5) return
        const type = String.fromCharCode(buf[0] as number)
        const len = buf.readInt32BE(1)
        if (buf.length < len + 1) return
        const body = buf.subarray(5, len + 1)
        buf = buf.subarray(len + 1)
        if (type === 'X') {
          socket.end()
          return
        }
        if (type !== 'Q') continue
        const sql = body.toString('utf8').replace(/\0$/, '')
        if (sql.includes('sleep')) continue
        if (sql.includes('fail')) {
          if (tx === 'T') tx = 'E'
          const fields = Buffer.concat([
            Buffer.from('S'),
            cstr('ERROR'),
            Buffer.from('C'),
            cstr('42000'),
            Buffer.from('M'),
            cstr('boom'),
            Buffer.from([0]),
          ])
          socket.write(Buffer.concat([message('E', fields), ready(tx)]))
        } else if (sql === 'BEGIN') {
          tx = 'T'
          socket.write(Buffer.concat([complete('BEGIN'), ready(tx)]))
        } else if (sql === 'ROLLBACK' || sql === 'COMMIT') {
          tx = 'I'
          socket.write(Buffer.concat([complete(sql), ready(tx)]))
        } else if (sql.startsWith('SET application_name')) {
          socket.write(
            Buffer.concat([complete('SET'), parameterStatus('application_name', 'changed'), ready(tx)]),
          )
        } else {
          socket.write(Buffer.concat([complete('SELECT 0'), ready(tx)]))
        }
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

const backends: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close()
})

async function connected(): Promise<{ client: pg.Client; statuses: Array<[string, string]> }> {
  const backend = await fakeBackend(4242, -1834723411)
  backends.push(backend)
  const client = new pg.Client({ host: '127.0.0.1', port: backend.port, user: 'app', database: 'app' })
  const statuses: Array<[string, string]> = []
  onParameterStatus(client, (name, value) => statuses.push([name, value]))
  await client.connect()
  return { client, statuses }
}

describe('checkPgClient', () => {
  it("accepts pg's JavaScript client and reports pg's version and what it supports", () => {
    expect(checkPgClient(pg.Client, 'driver', pg)).toEqual({ version: installed, transactionStatus: true })
  })

  it('rejects a client class lacking the internals, naming the path, what is missing and the version', () => {
    class Bare extends EventEmitter {}
    let err: unknown
    try {
      checkPgClient(Bare as unknown as new () => pg.Client, 'replicas[0].pool.Client', pg)
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(ConfigError)
    expect((err as ConfigError).path).toBe('replicas[0].pool.Client')
    expect((err as Error).message).toContain(
      `(pg ${installed}) lacks connection.stream.destroy(), connection.on(), _queryable`,
    )
    expect((err as Error).message).not.toContain('pg.native')
  })

  it('rejects a pg.native client with a reason', () => {
    class NativeLike extends EventEmitter {
      native = {}
      _queryable = true
      _ending = false
    }
    expect(() => checkPgClient(NativeLike as unknown as new () => pg.Client, 'driver')).toThrow(
      /lacks connection\.stream\.destroy\(\), connection\.on\(\), processID, secretKey; it is a client of pg\.native/,
    )
  })

  it('reports a missing getTransactionStatus (an older pg) as unsupported, not as an error', () => {
    class OldClient extends pg.Client {
      constructor() {
        super()
        Object.defineProperty(this, 'getTransactionStatus', { value: undefined })
        delete (this as { _txStatus?: unknown })._txStatus
      }
    }
    expect(checkPgClient(OldClient, 'driver', pg).transactionStatus).toBe(false)
  })

  it('checks each class once', () => {
    let made = 0
    class Counted extends pg.Client {
      constructor() {
        super()
        made++
      }
    }
    checkPgClient(Counted, 'driver', pg)
    checkPgClient(Counted, 'driver', pg)
    expect(made).toBe(1)
  })

  it('pgDriver checks the pg module it is given', async () => {
    const { pgDriver } = await import('./pg-driver.js')
    const fakePg = { Client: class extends EventEmitter {} } as unknown as typeof pg
    expect(() => pgDriver({ pg: fakePg })).toThrow(ConfigError)
    expect(() => pgDriver({ pg: fakePg })).toThrow(/^pg: routemate needs the JavaScript client of pg/)
    expect(() => pgDriver()).not.toThrow()
  })
})

describe('pgVersion', () => {
  it('finds the version of the pg package a module or a class comes from', () => {
    expect(pgVersion(pg)).toBe(installed)
    expect(pgVersion({ Client: pg.Client })).toBe(installed)
  })

  it('says unknown for anything else', () => {
    expect(pgVersion({})).toBe('unknown')
    expect(pgVersion(undefined)).toBe('unknown')
  })
})

describe('pg internals on a real pg.Client', () => {
  it('clientClosing: false for a new client, true once end() was called', async () => {
    const client = new pg.Client()
    expect(clientClosing(client)).toBe(false)
    await client.end()
    expect(clientClosing(client)).toBe(true)
  })

  it('destroyClient and refClient reach the socket', () => {
    const client = new pg.Client()
    const stream = client.connection.stream as net.Socket
    const destroy = vi.spyOn(stream, 'destroy')
    const ref = vi.spyOn(stream, 'ref')
    const unref = vi.spyOn(stream, 'unref')
    refClient(client, false)
    refClient(client, true)
    destroyClient(client)
    expect([unref.mock.calls.length, ref.mock.calls.length, destroy.mock.calls.length]).toEqual([1, 1, 1])
  })

  it('backendKey: undefined before connecting, the BackendKeyData values after', async () => {
    expect(backendKey(new pg.Client())).toBeUndefined()
    const { client } = await connected()
    expect(backendKey(client)).toEqual({ processID: 4242, secretKey: -1834723411 })
    await client.end()
  })

  it('transactionStatus follows ReadyForQuery: I, T after BEGIN, E after an error in it, I after ROLLBACK', async () => {
    expect(transactionStatus(new pg.Client())).toBeUndefined()
    const { client } = await connected()
    expect(transactionStatus(client)).toBe('I')
    await client.query('BEGIN')
    expect(transactionStatus(client)).toBe('T')
    await expect(client.query('SELECT fail')).rejects.toThrow('boom')
    expect(transactionStatus(client)).toBe('E')
    await client.query('ROLLBACK')
    expect(transactionStatus(client)).toBe('I')
    await client.end()
  })

  it('onParameterStatus sees the startup values and later changes, until removed', async () => {
    const { client, statuses } = await connected()
    expect(statuses).toEqual([
      ['server_version', '17.0'],
      ['in_hot_standby', 'off'],
    ])
    const later: Array<[string, string]> = []
    const off = onParameterStatus(client, (name, value) => later.push([name, value]))
    await client.query("SET application_name = 'changed'")
    expect(later).toEqual([['application_name', 'changed']])
    off()
    await client.query("SET application_name = 'again'")
    expect(later).toHaveLength(1)
    expect(statuses).toHaveLength(4)
    await client.end()
  })

  it('destroyClient fails a query pending on the connection at once', async () => {
    const { client } = await connected()
    client.on('error', () => {})
    const pending = client.query('SELECT sleep')
    destroyClient(client)
    await expect(pending).rejects.toThrow(/Connection terminated/)
    expect(clientClosing(client)).toBe(true)
  })

  it('markPoolEnding sets pg.Pool.ending', async () => {
    const pool = new pg.Pool()
    expect(pool.ending).toBe(false)
    markPoolEnding(pool)
    expect(pool.ending).toBe(true)
  })
})
