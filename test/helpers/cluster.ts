/**
 * Several gateway processes on the shared Postgres and Redis: each run gets its own schema (search_path in the
 * connection string) and its own Redis key prefix (storage.kvPrefix), both removed when it ends.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { startGatewayProcess, type GatewayProcess } from './process.ts';

export interface SharedStores {
  schema: string;
  prefix: string;
  /** The database URL with this run's schema first on the search path (libpq's `options`). */
  databaseUrl: string;
}

async function inDatabase(databaseUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(sql).finally(() => client.end());
}

/** Creates this run's schema; the prefix needs nothing until keys are written under it. */
export async function createSharedStores(databaseUrl: string): Promise<SharedStores> {
  const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
  await inDatabase(databaseUrl, `CREATE SCHEMA "${schema}"`);
  const parsed = new URL(databaseUrl);
  parsed.searchParams.set('options', `-c search_path=${schema},public`);
  return { schema, prefix: `aigw-test-${randomUUID()}:`, databaseUrl: parsed.toString() };
}

export async function dropSharedStores(stores: SharedStores | undefined, databaseUrl: string, redisUrl: string): Promise<void> {
  if (!stores) return;
  await inDatabase(databaseUrl, `DROP SCHEMA IF EXISTS "${stores.schema}" CASCADE`);
  const redis = new Redis(redisUrl);
  try {
    const leftover = await redis.keys(stores.prefix + '*');
    if (leftover.length > 0) await redis.del(...leftover);
  } finally {
    redis.disconnect();
  }
}

/**
 * Starts `count` processes on one config at once (they race to migrate, as real replicas do). The ones that
 * started are pushed into `into` before any failure is thrown, so that the caller's cleanup stops them.
 */
export async function startGateways(count: number, configFile: string, env: NodeJS.ProcessEnv, into: GatewayProcess[]): Promise<string[]> {
  const started = await Promise.allSettled(Array.from({ length: count }, () => startGatewayProcess(configFile, env)));
  for (const s of started) if (s.status === 'fulfilled') into.push(s.value);
  for (const s of started) if (s.status === 'rejected') throw s.reason;
  return into.map((p) => p.url);
}

export async function stopGateways(processes: readonly GatewayProcess[]): Promise<void> {
  for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
  await Promise.all(processes.map((p) => p.exited));
}
