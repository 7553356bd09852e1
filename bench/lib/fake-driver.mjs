/**
 * An in-memory `Driver` for routemate benchmarks: no sockets, no I/O. Every pool hands out the same
 * dummy connection and `execute` returns the same already-resolved result, so the driver itself
 * allocates nothing per query: whatever a routed query costs beyond `directQuery` is the router's.
 */

const CONN = Object.freeze({ fake: true })
const CONN_PROMISE = Promise.resolve(CONN)
const RESULT = Object.freeze({ rows: Object.freeze([Object.freeze({ x: 1 })]), rowCount: 1 })
const RESULT_PROMISE = Promise.resolve(RESULT)
const COUNTS = Object.freeze({ total: 1, idle: 1, waiting: 0 })
const DONE = Promise.resolve()

class FakePool {
  acquire() {
    return CONN_PROMISE
  }
  release() {}
  destroy() {}
  end() {
    return DONE
  }
  counts() {
    return COUNTS
  }
}

/** URLs the fake driver accepts (the router validates them as PostgreSQL URLs; nothing connects). */
export const FAKE_PRIMARY = 'postgres://bench@primary.invalid:5432/app'
export const FAKE_REPLICAS = Object.freeze([
  'postgres://bench@replica1.invalid:5432/app',
  'postgres://bench@replica2.invalid:5432/app',
])

/** A routemate `Driver` whose every query succeeds at once with `{ rows: [{ x: 1 }], rowCount: 1 }`. */
export function fakeDriver() {
  return {
    dialect: 'postgres',
    name: 'fake',
    createPool: () => new FakePool(),
    execute: (_conn, _text, _params) => RESULT_PROMISE,
    probe: (node) =>
      Promise.resolve({ role: node.name === 'primary' ? 'primary' : 'replica', position: '0/0' }),
    positionReached: () => true,
    positionAfterWrite: () => Promise.resolve('0/0'),
    waitForPosition: () => Promise.resolve('0/0'),
    beginSql: () => 'BEGIN',
    savepointSql: (name, op) =>
      op === 'create'
        ? `SAVEPOINT ${name}`
        : op === 'release'
          ? `RELEASE SAVEPOINT ${name}`
          : `ROLLBACK TO ${name}`,
    classify: () => 'statement',
  }
}

/**
 * The same work as a routed query minus the routing: acquire a connection from the node's pool,
 * execute, release. This is what a hand-written caller of the driver would do.
 */
export async function directQuery(driver, pool, sql, params) {
  const conn = await pool.acquire()
  try {
    return await driver.execute(conn, sql, params)
  } finally {
    pool.release(conn, false)
  }
}
