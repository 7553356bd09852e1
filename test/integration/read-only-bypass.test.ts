/**
 * The read-only guarantee under attack: nothing sent from a `readOnly` scope, a read-only
 * transaction or a `router.pool()` connection of a `readOnly` scope ever writes — on replicas and
 * on the primary when reads fall back to it. Each attempt below is a hostile caller's: session
 * `SET`s that would poison a pooled connection, transaction control, multi-statement texts,
 * privileged `SQL SECURITY DEFINER` routines, functions that change the session, `?options=` in
 * the URL. After every attempt the table is empty on every node and MariaDB replication still runs.
 */

import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRouter, type Router } from '../../src/index.js'
import { type DialectCase, dialectsFor, expectIdle, type TestCluster } from './support/dialects.js'

/** A hostile sequence: statements sent one after the other from the same kind of scope. */
interface Attempt {
  readonly name: string
  readonly via: 'read' | 'transaction' | 'connection'
  readonly statements: readonly string[]
  /** Nothing in it is refused by itself (it prepares the ground for the next attempt). */
  readonly harmless?: boolean
}

interface QueryableCluster extends TestCluster {
  query(name: string, sql: string, params?: unknown[], opts?: { superuser?: boolean }): Promise<unknown[]>
}

const T = 'bypass'

function pgAttempts(): Attempt[] {
  const hidden = `WITH x AS (INSERT INTO ${T} (v) VALUES ('hidden') RETURNING id) SELECT id FROM x`
  const flips = [
    'SET default_transaction_read_only = off',
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    'SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE',
    'SELECT rm_flip()',
    "DO $$ BEGIN PERFORM set_config('default_transaction_read_only', 'off', false); END $$",
    'RESET ALL',
    'DISCARD ALL',
  ]
  const a: Attempt[] = []
  for (const f of flips) {
    a.push({ name: `read: ${f} then a hidden write`, via: 'read', statements: [f, hidden, hidden, hidden] })
    a.push({ name: `connection: ${f} then a hidden write`, via: 'connection', statements: [f, hidden] })
  }
  a.push(
    {
      name: 'read: multi-statement BEGIN READ WRITE',
      via: 'read',
      statements: [`BEGIN READ WRITE; INSERT INTO ${T} (v) VALUES ('m'); COMMIT`],
    },
    {
      name: 'read: SELECT; COMMIT; SET ...; INSERT in one text',
      via: 'read',
      statements: [
        `SELECT 1; COMMIT; SET default_transaction_read_only = off; INSERT INTO ${T} (v) VALUES ('m')`,
      ],
    },
    {
      name: 'read: BEGIN, SET TRANSACTION READ WRITE, write, COMMIT',
      via: 'read',
      statements: ['BEGIN', 'SET TRANSACTION READ WRITE', hidden, 'COMMIT'],
    },
    {
      name: 'read: evident write behind a comment',
      via: 'read',
      statements: [`/* hi */ INSERT INTO ${T} (v) VALUES ('c')`],
    },
    {
      name: 'read: SECURITY DEFINER function that inserts',
      via: 'read',
      statements: ["SELECT rm_sneaky('d')"],
    },
    {
      name: 'read: procedure that flips, commits and inserts',
      via: 'read',
      statements: ['CALL rm_flip_commit_insert()', hidden],
    },
    {
      name: 'read: PREPARE then EXECUTE a write',
      via: 'read',
      statements: [`PREPARE w AS INSERT INTO ${T} (v) VALUES ('p')`, 'EXECUTE w'],
    },
    {
      name: 'transaction: SET TRANSACTION READ WRITE then a write',
      via: 'transaction',
      statements: ['SET TRANSACTION READ WRITE', hidden],
    },
    { name: 'transaction: COMMIT then a write', via: 'transaction', statements: ['COMMIT', hidden] },
    {
      name: 'transaction: flip the default, COMMIT, write',
      via: 'transaction',
      statements: ["SELECT set_config('default_transaction_read_only', 'off', false)", 'COMMIT', hidden],
    },
    {
      name: 'transaction: procedure that flips, commits and inserts',
      via: 'transaction',
      statements: ['CALL rm_flip_commit_insert()'],
    },
    {
      name: 'transaction: SET LOCAL transaction_read_only',
      via: 'transaction',
      statements: ['SET LOCAL transaction_read_only = off', hidden],
    },
    {
      name: 'connection: BEGIN; SET TRANSACTION READ WRITE; write; COMMIT',
      via: 'connection',
      statements: ['BEGIN', 'SET TRANSACTION READ WRITE', hidden, 'COMMIT'],
    },
    {
      name: 'connection: BEGIN READ WRITE; write; COMMIT',
      via: 'connection',
      statements: ['BEGIN READ WRITE', hidden, 'COMMIT'],
    },
    { name: 'connection: BEGIN left open', via: 'connection', statements: ['BEGIN'], harmless: true },
    {
      name: 'read: a write on the next checkout after a transaction was left open',
      via: 'read',
      statements: [hidden, hidden],
    },
    {
      name: 'connection: multi-statement text',
      via: 'connection',
      statements: [
        `SELECT 1; COMMIT; SET default_transaction_read_only = off; INSERT INTO ${T} (v) VALUES ('m')`,
      ],
    },
    { name: 'connection: COMMIT; then write', via: 'connection', statements: ['BEGIN', 'COMMIT', hidden] },
  )
  return a
}

function mariaAttempts(): Attempt[] {
  const hidden = "CALL rm_pr('hidden')"
  const flips = [
    'SET SESSION TRANSACTION READ WRITE',
    'SET @@session.tx_read_only = 0',
    'SET tx_read_only = OFF',
    '/*! SET SESSION TRANSACTION READ WRITE */',
    'CALL rm_pflip()',
    'DO rm_flip()',
    'RESET QUERY CACHE',
  ]
  const a: Attempt[] = []
  for (const f of flips) {
    a.push({
      name: `read: ${f} then a DEFINER routine write`,
      via: 'read',
      statements: [f, hidden, hidden, hidden],
    })
    a.push({
      name: `connection: ${f} then a DEFINER routine write`,
      via: 'connection',
      statements: [f, hidden],
    })
  }
  a.push(
    {
      name: 'read: SQL SECURITY DEFINER procedure that inserts',
      via: 'read',
      statements: ["CALL rm_pr('x')"],
    },
    { name: 'read: DEFINER function that inserts', via: 'read', statements: ["SELECT rm_fins('f')"] },
    {
      name: 'read: SET STATEMENT tx_read_only=0 FOR INSERT',
      via: 'read',
      statements: [`SET STATEMENT tx_read_only=0 FOR INSERT INTO ${T} (v) VALUES ('s')`],
    },
    {
      name: 'read: multi-statement text',
      via: 'read',
      statements: [`SELECT 1; SET SESSION TRANSACTION READ WRITE; INSERT INTO ${T} (v) VALUES ('m')`],
    },
    {
      name: 'read: START TRANSACTION READ WRITE, write, COMMIT',
      via: 'read',
      statements: ['START TRANSACTION READ WRITE', hidden, 'COMMIT'],
    },
    {
      name: 'read: executable-comment INSERT',
      via: 'read',
      statements: [`/*!50000 INSERT INTO ${T} (v) VALUES ('e') */`],
    },
    {
      name: 'read: PREPARE then EXECUTE a write',
      via: 'read',
      statements: [`PREPARE w FROM 'INSERT INTO ${T} (v) VALUES (1)'`, 'EXECUTE w'],
    },
    { name: 'read: XA START then write', via: 'read', statements: ["XA START 'x'", hidden] },
    {
      name: 'read: LOCK TABLES ... WRITE',
      via: 'read',
      statements: [`LOCK TABLES ${T} WRITE`, hidden, 'UNLOCK TABLES'],
    },
    { name: 'read: USE another database, then write', via: 'read', statements: ['USE mysql', hidden] },
    {
      name: 'transaction: SET TRANSACTION READ WRITE then a write',
      via: 'transaction',
      statements: ['SET TRANSACTION READ WRITE', hidden],
    },
    { name: 'transaction: COMMIT then a write', via: 'transaction', statements: ['COMMIT', hidden] },
    {
      name: 'transaction: SET SESSION TRANSACTION READ WRITE, COMMIT, write',
      via: 'transaction',
      statements: ['SET SESSION TRANSACTION READ WRITE', 'COMMIT', hidden],
    },
    { name: 'transaction: DEFINER procedure that inserts', via: 'transaction', statements: [hidden] },
    {
      name: 'connection: START TRANSACTION READ WRITE; write; COMMIT',
      via: 'connection',
      statements: ['START TRANSACTION READ WRITE', hidden, 'COMMIT'],
    },
    {
      name: 'connection: START TRANSACTION; SET TRANSACTION READ WRITE; write',
      via: 'connection',
      statements: ['START TRANSACTION', 'SET TRANSACTION READ WRITE', hidden, 'COMMIT'],
    },
    {
      name: 'connection: transaction left open',
      via: 'connection',
      statements: ['START TRANSACTION'],
      harmless: true,
    },
    {
      name: 'read: a write on the next checkout after a transaction was left open',
      via: 'read',
      statements: [hidden, hidden],
    },
  )
  return a
}

/** Schema: the table, and routines a privileged account made (as a DBA would) that an attacker may call. */
function setup(d: DialectCase): string[] {
  if (d.dialect === 'postgres') {
    return [
      `CREATE TABLE IF NOT EXISTS ${T} (id serial PRIMARY KEY, v text)`,
      `CREATE OR REPLACE FUNCTION rm_sneaky(x text) RETURNS int LANGUAGE sql SECURITY DEFINER AS $$ INSERT INTO ${T} (v) VALUES (x) RETURNING 1 $$`,
      "CREATE OR REPLACE FUNCTION rm_flip() RETURNS text LANGUAGE sql AS $$ SELECT set_config('default_transaction_read_only', 'off', false) $$",
      `CREATE OR REPLACE PROCEDURE rm_flip_commit_insert() LANGUAGE plpgsql SECURITY DEFINER AS $$ BEGIN PERFORM set_config('default_transaction_read_only', 'off', false); COMMIT; INSERT INTO ${T} (v) VALUES ('proc'); END $$`,
      `GRANT ALL ON ${T} TO PUBLIC`,
    ]
  }
  return [
    `CREATE TABLE IF NOT EXISTS ${T} (id INT AUTO_INCREMENT PRIMARY KEY, v TEXT)`,
    `CREATE OR REPLACE DEFINER=root@'127.0.0.1' PROCEDURE rm_pr(x TEXT) SQL SECURITY DEFINER INSERT INTO ${T} (v) VALUES (x)`,
    `CREATE OR REPLACE DEFINER=root@'127.0.0.1' FUNCTION rm_fins(x TEXT) RETURNS INT DETERMINISTIC MODIFIES SQL DATA SQL SECURITY DEFINER BEGIN INSERT INTO ${T} (v) VALUES (x); RETURN 1; END`,
    `CREATE OR REPLACE DEFINER=root@'127.0.0.1' PROCEDURE rm_pflip() SQL SECURITY DEFINER SET SESSION TRANSACTION READ WRITE`,
    `CREATE OR REPLACE DEFINER=root@'127.0.0.1' FUNCTION rm_flip() RETURNS INT DETERMINISTIC SQL SECURITY DEFINER BEGIN SET SESSION TRANSACTION READ WRITE; RETURN 1; END`,
  ]
}

/** Runs one attempt; every statement's error is expected (and recorded), none may write. */
async function run(d: DialectCase, router: Router, a: Attempt): Promise<string[]> {
  const errors: string[] = []
  const each = async (q: (sql: string) => Promise<unknown>) => {
    for (const sql of a.statements) {
      try {
        await q(sql)
      } catch (err) {
        errors.push(`${(err as Error).name}: ${(err as Error).message}`)
      }
    }
  }
  if (a.via === 'read') await router.readOnly(() => each((sql) => router.query(sql)))
  else if (a.via === 'transaction') {
    await router
      .transaction((tx) => each((sql) => tx.query(sql)), { readOnly: true })
      .catch((err: Error) => errors.push(`transaction: ${err.name}: ${err.message}`))
  } else {
    await router.readOnly(async () => {
      const client = await d.checkout(router)
      try {
        await each((sql) => client.query(sql))
      } finally {
        client.release()
      }
    })
  }
  return errors
}

describe.each(dialectsFor('read-only-bypass'))(
  'the read-only guarantee under attack ($name)',
  (d: DialectCase) => {
    let cluster: QueryableCluster
    let routers: Array<{ label: string; router: Router }>
    const attempts = d.dialect === 'postgres' ? pgAttempts() : mariaAttempts()

    const count = async (node: string): Promise<number> => {
      const rows = (await cluster.query(node, `SELECT COUNT(*) AS n FROM ${T}`, [], {
        superuser: true,
      })) as Array<{ n: unknown }>
      return Number(rows[0]?.n)
    }

    beforeAll(async () => {
      cluster = (await d.start(1)) as QueryableCluster
      for (const sql of setup(d)) await cluster.query('primary', sql, [], { superuser: true })
      if (d.dialect === 'postgres') {
        const app = new URL(cluster.primary.url).username
        await cluster.query('primary', `ALTER TABLE ${T} OWNER TO ${app}`, [], { superuser: true })
      }
      await cluster.waitForReplication()
      const common = {
        driver: d.driver(),
        healthCheck: { intervalMs: 500, timeoutMs: 400 },
        connectTimeoutMs: 2000,
      } as const
      const pool = d.poolMax(2)
      // A primary URL carrying its own `?options=` (pg) must not replace the read-only setting.
      const primaryUrl =
        d.dialect === 'postgres'
          ? `${cluster.primary.url}${cluster.primary.url.includes('?') ? '&' : '?'}options=${encodeURIComponent('-c statement_timeout=5000')}`
          : cluster.primary.url
      routers = [
        {
          label: 'reads on the replica',
          router: createRouter({
            ...common,
            primary: { name: 'primary', url: cluster.primary.url, pool },
            replicas: cluster.replicas.map((r) => ({ name: r.name, url: r.url, pool })),
          }),
        },
        {
          label: 'reads falling back to the primary',
          router: createRouter({
            ...common,
            primary: { name: 'primary', url: primaryUrl, pool },
            replicas: [],
          }),
        },
      ]
      for (const r of routers) await r.router.ready()
    })

    afterAll(async () => {
      for (const r of routers ?? []) await r.router.close()
      await cluster?.stop()
    })

    it(`has at least 30 attempts (${d.dialect === 'postgres' ? pgAttempts().length : mariaAttempts().length})`, () => {
      expect(attempts.length).toBeGreaterThanOrEqual(30)
    })

    for (const label of ['reads on the replica', 'reads falling back to the primary']) {
      it(`${label}: every attempt is refused, 0 rows written on any node, pools clean`, async () => {
        const { router } = routers.find((r) => r.label === label)!
        const refusals: string[] = []
        for (const a of attempts) {
          const errors = await run(d, router, a)
          // Statements after the poisoning one run on fresh reads: a write among them must fail too.
          for (const node of ['primary', ...cluster.replicas.map((r) => r.name)]) {
            expect(await count(node), `${a.name}: rows on ${node} (errors: ${errors.join(' | ')})`).toBe(0)
          }
          if (a.harmless !== true)
            expect(errors.length, `${a.name}: expected at least one refusal`).toBeGreaterThan(0)
          refusals.push(...errors)
        }
        // A plain read still works afterwards, on a read-only session.
        const ro = await router.readOnly(() =>
          router.query(
            d.dialect === 'postgres' ? 'SHOW default_transaction_read_only' : 'SELECT @@tx_read_only AS ro',
          ),
        )
        expect(String(Object.values(ro.rows[0] as object)[0])).toMatch(/^(on|1)$/)
        await expectIdle(router)
        expect(refusals.some((e) => e.startsWith('ReadOnlyViolationError'))).toBe(true)
      })
    }

    it('replication still runs after every attempt: a primary write reaches the replica', async () => {
      if (d.dialect === 'mysql') {
        const status = (await cluster.query('replica1', 'SHOW SLAVE STATUS', [], {
          superuser: true,
        })) as Array<Record<string, unknown>>
        expect(status[0]?.Slave_SQL_Running).toBe('Yes')
        expect(status[0]?.Slave_IO_Running).toBe('Yes')
        expect(status[0]?.Last_SQL_Errno).toBe(0)
      }
      const { router } = routers[0]!
      await router.query(`INSERT INTO ${T} (v) VALUES (${d.param(1)})`, ['marker'])
      await cluster.waitForReplication()
      expect(await count('replica1')).toBe(1)
      await router.query(`DELETE FROM ${T}`)
      await cluster.waitForReplication()
    })

    it('a plain read of a readOnly scope still runs where it should, with parameters and multi-row results', async () => {
      const { router } = routers[0]!
      const r = await router.readOnly(() =>
        router.query(`SELECT COUNT(*) AS n FROM ${T} WHERE v = ${d.param(1)}`, ['none']),
      )
      expect(Number((r.rows[0] as { n: unknown }).n)).toBe(0)
      if (d.name === 'postgres.js') {
        // postgres.js's own API: a statement with parameters is one statement, a ';' in a literal allowed
        const sql = router.pool() as import('postgres').Sql
        const res = await router.readOnly(() => sql.unsafe("SELECT $1::text || ';' AS s", ['a']))
        expect([...res]).toEqual([{ s: 'a;' }])
      }
      if (d.name === 'postgres') {
        // pg's own API (a config object with values) is one statement: allowed with a ';' in a literal
        const pool = router.pool() as pg.Pool
        const res = await router.readOnly(() =>
          pool.query({ text: "SELECT $1::text || ';' AS s", values: ['a'] }),
        )
        expect(res.rows[0]).toEqual({ s: 'a;' })
      }
    })
  },
)
