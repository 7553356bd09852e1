/** Bad config files and the one message each must give (used by load-config.test.ts). */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts with ${ENV} references

/** A password that must never appear in a message. */
export const SECRET = 's3cr3t-Pa55'

export interface BadFile {
  readonly title: string
  readonly name: string
  readonly text: string
  readonly env?: Record<string, string>
  /** The whole expected message. */
  readonly message: string
}

const PG = `postgres://app:${SECRET}@db1:5432/app`
const PG2 = `postgres://app:${SECRET}@db2:5432/app`

export const BAD_FILES: readonly BadFile[] = [
  {
    title: 'a number given as a string',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nmaxReplicationLagMs: "5000"\n`,
    message: 'routemate.config.yaml:3:22 maxReplicationLagMs: expected a number >= 0, got "5000"',
  },
  {
    title: 'a boolean given as a word',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nfallbackToPrimary: yes\n`,
    message: 'routemate.config.yaml:3:20 fallbackToPrimary: expected true or false, got "yes"',
  },
  {
    title: 'an unknown top-level key, with did-you-mean',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nreplica:\n  - ${PG2}\n`,
    message:
      'routemate.config.yaml:3:1 replica: unknown option "replica" (did you mean "replicas"?); expected one of: driver, primary, replicas, nodes, url, shards, sharding, balancer, healthCheck, maxReplicationLagMs, fallbackToPrimary, readYourWrites, tokens, retryReads, classify, queryTimeoutMs, connectTimeoutMs, pool',
  },
  {
    title: 'an unknown node key, with did-you-mean',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nreplicas:\n  - url: ${PG2}\n    wieght: 2\n`,
    message:
      'routemate.config.yaml:5:5 replicas[0].wieght: unknown option "wieght" (did you mean "weight"?); expected one of: name, url, weight, pool, queryTimeoutMs, connectTimeoutMs',
  },
  {
    title: 'a misspelled pg pool option, with did-you-mean',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nreplicas:\n  - url: ${PG2}\n    pool:\n      idleTimeoutMilis: 1000\n`,
    message:
      'routemate.config.yaml:6:7 replicas[0].pool.idleTimeoutMilis: unknown option "idleTimeoutMilis" (did you mean "idleTimeoutMillis"?); expected a pg.Pool option (Client, allowExitOnIdle, connectionTimeoutMillis, idleTimeoutMillis, log, max, maxLifetimeSeconds, maxUses, maxWaiting, min, onConnect, Promise, verify) or a pg.Client option (application_name, binary, client_encoding, enableChannelBinding, fallback_application_name, idle_in_transaction_session_timeout, keepAlive, keepAliveInitialDelayMillis, lock_timeout, options, password, pipeline, query_timeout, replication, scramMaxIterations, ssl, sslnegotiation, statement_timeout, stream, types); an option of a newer pg can be allowed with pgDriver({ extraPoolOptions: ["idleTimeoutMilis"] })',
  },
  {
    title: 'an unquoted numeric password in pool options',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: postgres://app@db1:5432/app\npool:\n  password: 123456\n`,
    message:
      'routemate.config.yaml:4:13 pool.password: expected a string (quote it in a YAML or JSON file) or a function returning one, got a number',
  },
  {
    title: 'a missing environment variable in a URL',
    name: 'routemate.config.yaml',
    text: 'driver: pg\nprimary:\n  name: main\n  url: postgres://app:${DB_PASSWORD}@db1:5432/app\n',
    message:
      'routemate.config.yaml:4:23 primary.url: environment variable DB_PASSWORD is not set (use ${DB_PASSWORD:-default} for a default)',
  },
  {
    title: 'a missing environment variable in a JSON file',
    name: 'routemate.config.json',
    text: '{\n  "driver": "pg",\n  "primary": "postgres://app:pw@${DB_HOST}/app"\n}\n',
    message:
      'routemate.config.json:3:33 primary: environment variable DB_HOST is not set (use ${DB_HOST:-default} for a default)',
  },
  {
    title: 'a URL of the other dialect (password redacted)',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: mysql://app:${SECRET}@db1:3306/app\n`,
    message:
      'routemate.config.yaml:2:10 primary: expected a postgres:// URL (or postgresql://), got "mysql://app:***@db1:3306/app" (the driver speaks postgres, not mysql)',
  },
  {
    title: 'a URL that does not parse (password redacted)',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nreplicas: ["postgres://app:${SECRET}@db 2/app"]\n`,
    message:
      'routemate.config.yaml:3:12 replicas[0]: expected a postgres:// URL (or postgresql://) that parses; reserved characters in a password must be percent-encoded, e.g. with encodeURIComponent(password) ("@" is %40, ":" %3A, "/" %2F, "?" %3F, "#" %23, "%" %25, a space %20); got "postgres://***@db 2/app"',
  },
  {
    title: 'a password from the environment in a bad node name',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nreplicas:\n  - url: ${PG2}\n    name: \${DB_PASSWORD}\n`,
    env: { DB_PASSWORD: `${SECRET} !` },
    message:
      'routemate.config.yaml:5:11 replicas[0].name: expected a name of 1 to 64 characters from [A-Za-z0-9_.:-], got "***"',
  },
  {
    title: 'a YAML syntax error',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nreplicas:\n  - ${PG2}\n - oops\n`,
    message:
      'routemate.config.yaml:5:1 YAML syntax error: A block sequence may not be used as an implicit map key',
  },
  {
    title: 'YAML indented with a tab',
    name: 'routemate.config.yml',
    text: `driver: pg\nprimary:\n\turl: ${PG}\n`,
    message: 'routemate.config.yml:3:1 YAML syntax error: Tabs are not allowed as indentation',
  },
  {
    title: 'a duplicate YAML key',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nprimary: ${PG2}\n`,
    message: 'routemate.config.yaml:3:1 duplicate key "primary"',
  },
  {
    title: 'a JSON trailing comma',
    name: 'routemate.config.json',
    text: `{\n  "driver": "pg",\n  "primary": "${PG}",\n}\n`,
    message: 'routemate.config.json:4:1 JSON syntax error: expected double-quoted property name',
  },
  {
    title: 'JSON cut short',
    name: 'routemate.config.json',
    text: `{\n  "driver": "pg",\n  "primary": "${PG}"\n`,
    message: "routemate.config.json:4:1 JSON syntax error: expected ',' or '}' after property value",
  },
  {
    title: 'an unknown driver',
    name: 'routemate.config.yaml',
    text: `driver: postgres\nprimary: ${PG}\n`,
    message:
      'routemate.config.yaml:1:9 driver: unknown driver "postgres" (did you mean "pg"?); expected "pg" or "mysql2"',
  },
  {
    title: 'no driver',
    name: 'routemate.config.yaml',
    text: `primary: ${PG}\n`,
    message: 'routemate.config.yaml: driver: required; expected "pg" or "mysql2"',
  },
  {
    title: 'a balancer given as an object',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nbalancer:\n  pick: first\n`,
    message:
      'routemate.config.yaml:4:3 balancer: expected one of "round-robin", "weighted-round-robin", "random", "least-outstanding", got an object (a custom balancer cannot come from a config file; pass it to createRouter() in code)',
  },
  {
    title: 'a misspelt balancer name',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nbalancer: round_robin\n`,
    message:
      'routemate.config.yaml:3:11 balancer: expected one of "round-robin", "weighted-round-robin", "random", "least-outstanding", a Balancer object or a factory function, got "round_robin" (did you mean "round-robin"?)',
  },
  {
    title: 'duplicate node names',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: { name: db, url: "${PG}" }\nreplicas:\n  - { name: db, url: "${PG2}" }\n`,
    message: 'routemate.config.yaml:4:13 replicas[0].name: duplicate name "db", already used by primary.name',
  },
  {
    title: 'the same server twice',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nreplicas: ["${PG}"]\n`,
    message:
      'routemate.config.yaml:3:12 replicas[0]: same server as primary (db1:5432/app); each node must be a distinct server',
  },
  {
    title: 'a probe timeout not below the interval',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nhealthCheck:\n  intervalMs: 300\n  timeoutMs: 300\n`,
    message:
      'routemate.config.yaml:5:14 healthCheck.timeoutMs: expected an integer below healthCheck.intervalMs (300), got 300',
  },
  {
    title: 'sharding with the lookup strategy',
    name: 'routemate.config.yaml',
    text: `driver: pg\nshards:\n  s0: { primary: "${PG}" }\n  s1: { primary: "${PG2}" }\nsharding:\n  strategy: lookup\n`,
    message:
      'routemate.config.yaml:6:13 sharding.strategy: "lookup" needs a Map or a function, which cannot come from a config file; pass it to createRouter() in code; in a file use one of "hash", "jump", "range", "java-hashcode"',
  },
  {
    title: 'sharding with a lookup table',
    name: 'routemate.config.yaml',
    text: `driver: pg\nshards:\n  s0: { primary: "${PG}" }\n  s1: { primary: "${PG2}" }\nsharding:\n  strategy: hash\n  lookup: { a: s0 }\n`,
    message:
      'routemate.config.yaml:7:3 sharding.lookup: a lookup is a Map or a function, which cannot come from a config file; pass it to createRouter() in code',
  },
  {
    title: 'an unknown sharding strategy',
    name: 'routemate.config.yaml',
    text: `driver: pg\nshards:\n  s0: { primary: "${PG}" }\nsharding: { strategy: jumps }\n`,
    message:
      'routemate.config.yaml:4:23 sharding.strategy: unknown strategy "jumps" (did you mean "jump"?); expected one of "hash", "jump", "range", "java-hashcode"',
  },
  {
    title: 'a shard without a primary',
    name: 'routemate.config.yaml',
    text: `driver: pg\nshards:\n  s0:\n    replicas: ["${PG}"]\nsharding: { strategy: hash }\n`,
    message:
      'routemate.config.yaml:4:5 shards.s0.primary: required; expected a postgres:// URL (or postgresql://) or a node object { url, ... } (or "nodes" to discover roles)',
  },
  {
    title: 'shards and primary together',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG2}\nshards:\n  s0: { primary: "${PG}" }\nsharding: { strategy: hash }\n`,
    message:
      'routemate.config.yaml:2:10 primary: not allowed with "shards": give each shard its own primary and replicas',
  },
  {
    title: 'replicas given as one string',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nreplicas: ${PG2}\n`,
    message:
      'routemate.config.yaml:3:11 replicas: expected an array of URLs or node objects, got "postgres://app:***@db2:5432/app"',
  },
  {
    title: 'a bad read-your-writes mode',
    name: 'routemate.config.json',
    text: `{"driver": "pg", "primary": "${PG}",\n "readYourWrites": {"mode": "positon"}}\n`,
    message:
      'routemate.config.json:2:29 readYourWrites.mode: expected "window" or "position", got "positon" (did you mean "position"?)',
  },
  {
    title: 'an integer too large for a timer',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nhealthCheck: { intervalMs: 99999999999999999999 }\n`,
    message:
      'routemate.config.yaml:3:28 healthCheck.intervalMs: expected an integer >= 2, got 99999999999999999999n',
  },
  {
    title: 'a malformed reference',
    name: 'routemate.config.yaml',
    text: `driver: pg\nprimary: ${PG}\nreplicas: ["postgres://app:\${1PW}@db2/app"]\n`,
    message:
      'routemate.config.yaml:3:28 replicas[0]: expected ${NAME} or ${NAME:-default} (NAME: letters, digits and _, not starting with a digit), got "${1PW}"',
  },
  {
    title: 'an unterminated reference',
    name: 'routemate.config.yaml',
    text: 'driver: pg\nprimary: postgres://app:${DB_PASSWORD@db1/app\n',
    message: 'routemate.config.yaml:2:25 primary: unterminated "${": expected ${NAME} or ${NAME:-default}',
  },
  {
    title: 'an empty YAML file',
    name: 'routemate.config.yaml',
    text: '# nothing here yet\n',
    message:
      'routemate.config.yaml: the file is empty; expected a mapping of router options (driver, primary, replicas, ...)',
  },
  {
    title: 'an empty JSON file',
    name: 'routemate.config.json',
    text: '\n',
    message:
      'routemate.config.json: the file is empty; expected a mapping of router options (driver, primary, replicas, ...)',
  },
  {
    title: 'a list at the top level',
    name: 'routemate.config.yaml',
    text: `- driver: pg\n- primary: ${PG}\n`,
    message:
      'routemate.config.yaml:1:1 expected a mapping of router options (driver, primary, ...) at the top level, got a list',
  },
  {
    title: 'a string at the top level',
    name: 'routemate.config.json',
    text: `"${PG}"\n`,
    message:
      'routemate.config.json:1:1 expected a mapping of router options (driver, primary, ...) at the top level, got a string',
  },
  {
    title: 'a multi-host url with a bad port (password redacted)',
    name: 'routemate.config.yaml',
    text: `driver: pg\nurl: postgres://app:${SECRET}@db1:5432,db2:54x2/app?target_session_attrs=read-only\nmaxReplicationLagMs: -1\n`,
    message:
      'routemate.config.yaml: 2 errors\n' +
      '  routemate.config.yaml:2:6 url: bad port "54x2" in host 2 of 2 ("db2:54x2"): expected a number from 1 to 65535; a multi-host URL reads postgres://user@host1:5432,host2:5432/database\n' +
      '  routemate.config.yaml:3:22 maxReplicationLagMs: expected a number >= 0, got -1',
  },
  {
    title: 'a multi-host url with an unknown target_session_attrs',
    name: 'routemate.config.yaml',
    text: `driver: mysql2\nurl: "mariadb://app:\${DB_PASSWORD}@m1,m2/shop?target_session_attrs=readonly"\n`,
    env: { DB_PASSWORD: SECRET },
    message:
      'routemate.config.yaml:2:6 url: target_session_attrs: expected one of "any", "read-write", "read-only", "primary", "standby", "prefer-standby", got "readonly" (did you mean "read-only"?)',
  },
  {
    title: 'url and primary together',
    name: 'routemate.config.yaml',
    text: `driver: pg\nurl: postgres://app:${SECRET}@db1,db2/app\nprimary: ${PG}\n`,
    message:
      'routemate.config.yaml:3:10 primary: not allowed with "url": give either url (every host of a multi-host URL, roles discovered by the probes) or primary and replicas, or nodes',
  },
  {
    title: 'a __proto__ key',
    name: 'routemate.config.json',
    text: `{"driver": "pg", "primary": "${PG}", "__proto__": {"x": 1}}\n`,
    message:
      'routemate.config.json:1:72 __proto__: unknown option "__proto__"; expected one of: driver, primary, replicas, nodes, url, shards, sharding, balancer, healthCheck, maxReplicationLagMs, fallbackToPrimary, readYourWrites, tokens, retryReads, classify, queryTimeoutMs, connectTimeoutMs, pool',
  },
]
