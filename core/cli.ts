/** aigw start | validate | migrate | keys create */
import { parseArgs } from 'node:util';
import { ConfigError } from './config/document.ts';
import { loadConfig, type LoadedConfig } from './config/load.ts';
import { createGateway } from './gateway.ts';
import { ApiKeyService } from './identity/api-keys.ts';
import { createLogger } from './logger.ts';
import { DataDirLock, readLock } from './store/data-dir-lock.ts';
import { openDatabase, type Database } from './store/database.ts';
import { openKv } from './store/kv.ts';
import { migrate } from './store/migrate.ts';

const USAGE = `usage: aigw <command> [options]

commands:
  start [--config FILE]            serve the gateway (default config: $AIGW_CONFIG or ./pipelines.yaml)
  validate [FILE]                  check a config file; exit 0 when valid, 1 with file:line:col errors
  migrate [--config FILE]          apply database migrations and exit
  keys create --name NAME [--capabilities chat,embeddings] [--tenant ID] [--expires-at ISO]
              [--allowed-ips IP,CIDR] [--config FILE] [--json]
                                   create an API key and print it (shown once)
`;

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start': return start(rest);
    case 'validate': return validate(rest);
    case 'migrate': return migrateCommand(rest);
    case 'keys': return keys(rest);
    case undefined: case '-h': case '--help': case 'help':
      process.stdout.write(USAGE);
      return command === undefined ? 1 : 0;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

function configOption(args: string[]) {
  return parseArgs({ args, options: { config: { type: 'string', short: 'c' } }, allowPositionals: false, strict: true });
}

async function start(args: string[]): Promise<number> {
  const { values } = configOption(args);
  const loaded = await loadConfig({ file: values.config });
  const logger = createLogger();
  const gateway = await createGateway(loaded, { logger });
  const url = await gateway.listen();
  const { storage } = loaded.config;
  logger.info({
    url: url.replace('127.0.0.1', loaded.config.server.host),
    database: storage.databaseUrl ? 'postgres' : `pglite (${storage.dataDir})`,
    kv: storage.redisUrl ? 'redis' : 'memory',
  }, 'aigw is listening');
  const keys = await gateway.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys');
  if (keys[0]?.n === 0) logger.info('no API keys yet: create one with `npx aigw keys create --name my-app`');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    gateway.close().then(
      () => { logger.info('stopped'); process.exit(0); },
      (err) => { logger.error({ err }, 'shutdown failed'); process.exit(1); },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  return new Promise<number>(() => {}); // runs until a signal
}

async function validate(args: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args, options: { config: { type: 'string', short: 'c' } }, allowPositionals: true });
  const file = positionals[0] ?? values.config;
  await loadConfig({ file });
  process.stdout.write(`${file ?? process.env.AIGW_CONFIG ?? 'pipelines.yaml'}: valid\n`);
  return 0;
}

/** Opens the database the config names: the embedded one under its data-folder lock. */
async function withDatabase<T>(loaded: LoadedConfig, fn: (db: Database) => Promise<T>): Promise<T> {
  const { storage } = loaded.config;
  const lock = storage.databaseUrl ? undefined : await DataDirLock.acquire(storage.dataDir);
  try {
    const db = await openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  } finally {
    await lock?.release();
  }
}

async function migrateCommand(args: string[]): Promise<number> {
  const { values } = configOption(args);
  const loaded = await loadConfig({ file: values.config });
  const result = await withDatabase(loaded, migrate);
  process.stdout.write(result.applied.length > 0 ? `applied: ${result.applied.join(', ')}\n` : `up to date (${result.current})\n`);
  return 0;
}

const list = (value: string | undefined) => value?.split(',').map((s) => s.trim()).filter(Boolean);

async function keys(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'create') throw new UsageError(`unknown keys command "${sub ?? ''}" (known: create)`);
  const { values } = parseArgs({
    args: rest,
    strict: true,
    options: {
      name: { type: 'string' }, capabilities: { type: 'string' }, tenant: { type: 'string' },
      'expires-at': { type: 'string' }, 'allowed-ips': { type: 'string' }, config: { type: 'string', short: 'c' },
      json: { type: 'boolean', default: false },
    },
  });
  if (!values.name) throw new UsageError('keys create needs --name');
  const input = {
    name: values.name,
    ...(values.tenant ? { tenantId: values.tenant } : {}),
    ...(values.capabilities ? { scopes: { capabilities: list(values.capabilities) } } : {}),
    ...(values['expires-at'] ? { expiresAt: values['expires-at'] } : {}),
    ...(values['allowed-ips'] ? { allowedIps: list(values['allowed-ips']) } : {}),
  };
  const loaded = await loadConfig({ file: values.config });
  const record = await createKey(loaded, input);
  if (values.json) process.stdout.write(JSON.stringify(record, null, 2) + '\n');
  else process.stdout.write(`${record.key}\n\nkey id ${record.id}, capabilities ${record.scopes.capabilities.join(',')}; the key is shown once: store it now.\n`);
  return 0;
}

interface CreatedKey {
  id: string;
  key: string;
  scopes: { capabilities: string[] };
}

/** With the embedded database held by a running gateway, the gateway creates the key; else the CLI does. */
async function createKey(loaded: LoadedConfig, input: Record<string, unknown>): Promise<CreatedKey> {
  const { storage } = loaded.config;
  const running = storage.databaseUrl ? null : await readLock(storage.dataDir);
  if (running?.url && running.controlToken) {
    const response = await fetch(`${running.url}/admin/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.controlToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
    const body = (await response.json()) as CreatedKey & { error?: { message: string; details?: unknown } };
    if (!response.ok) throw new Error(`${body.error?.message ?? response.statusText}${body.error?.details ? ` ${JSON.stringify(body.error.details)}` : ''}`);
    return body;
  }
  return withDatabase(loaded, async (db) => {
    await migrate(db);
    const kv = await openKv({ redisUrl: storage.redisUrl });
    try {
      return await new ApiKeyService(db, kv, loaded.config.auth.keyCacheTtlMs).create(input, 'cli');
    } finally {
      await kv.close();
    }
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof ConfigError) process.stderr.write(err.message + '\n');
    else if (err instanceof UsageError) process.stderr.write(`aigw: ${err.message}\n\n${USAGE}`);
    else process.stderr.write(`aigw: ${(err as Error).message ?? String(err)}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  },
);
