/** aigw start | validate | migrate, and the admin commands of cli/admin-commands.ts */
import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { AdminCallError } from './cli/admin-client.ts';
import { ADMIN_GROUPS, ADMIN_USAGE, adminCommand, UsageError } from './cli/admin-commands.ts';
import { USAGE_COMMAND_USAGE, usageCommand } from './cli/usage-command.ts';
import { ConfigError } from './config/document.ts';
import { builtIns } from './cli/builtins.ts';
import type { AnyPluginDefinition } from './pipeline/plugin.ts';
import { loadConfig } from './boot/load.ts';
import { withRegion } from './doc-regions.ts';
import { docsCommand, DOCS_USAGE } from './cli/docs-command.ts';
import { renderProviderTable } from './dispatch/provider-table.ts';
import { createGateway } from './gateway.ts';
import { describeEmptyCredential, ensurePortFree, listenFailure } from './boot/startup-checks.ts';
import { createLogger } from './logger.ts';
import { migrate } from './store/migrate.ts';
import { openStores } from './store/open.ts';

const USAGE = `usage: aigw <command> [options]

commands:
  start [--config FILE]            serve the gateway (default config: $AIGW_CONFIG or ./pipelines.yaml)
  validate [FILE]                  check a config file; exit 0 when valid, 1 with file:line:col errors
  migrate [--config FILE]          apply database migrations and exit
  providers [--config FILE] [--write FILE]
                                   print the registered providers as a markdown table, or rewrite it in FILE
${DOCS_USAGE}${ADMIN_USAGE}${USAGE_COMMAND_USAGE}${(builtIns.plugins as readonly AnyPluginDefinition[]).flatMap((plugin) => plugin.commands ?? []).map((command) => `\n${command.usage}`).join('')}
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start': return start(rest);
    case 'validate': return validate(rest);
    case 'migrate': return migrateCommand(rest);
    case 'providers': return providersCommand(rest);
    case 'docs': return docsCommand(rest);
    case 'usage': return usageCommand(rest);
    case undefined: case '-h': case '--help': case 'help':
      process.stdout.write(USAGE);
      return command === undefined ? 1 : 0;
    default:
      if (ADMIN_GROUPS.includes(command)) return adminCommand(command, rest);
      return pluginCommand(command, rest);
  }
}

function configOption(args: string[]) {
  return parseArgs({ args, options: { config: { type: 'string', short: 'c' } }, allowPositionals: false, strict: true });
}

async function start(args: string[]): Promise<number> {
  const { values } = configOption(args);
  const loaded = await loadConfig({ file: values.config, builtIns });
  const logger = createLogger();
  const { host, port } = loaded.config.server;
  // Before the stores open and the plugins set up: a port in use is told at once, not after all that.
  await ensurePortFree(host, port);
  for (const empty of loaded.emptyCredentials) logger.warn({ provider: empty.provider, variables: empty.variables }, describeEmptyCredential(empty));
  const gateway = await createGateway(loaded, { logger });
  // Before the listening line is written: a caller that sees it may signal at once (the log is written on
  // another thread), and that signal must find the handlers.
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
  const url = await gateway.listen().catch(async (err: NodeJS.ErrnoException) => {
    await gateway.close();
    throw listenFailure(err, host, port);
  });
  const { storage } = loaded.config;
  logger.info({
    url: url.replace('127.0.0.1', loaded.config.server.host),
    database: storage.databaseUrl ? 'postgres' : `pglite (${storage.dataDir})`,
    kv: storage.redisUrl ? 'redis' : 'memory',
  }, 'aigw is listening');
  // A stop that closes the database under this query leaves the hint out.
  const keys = await gateway.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys').catch(() => null);
  if (keys?.[0]?.n === 0) logger.info('no API keys yet: create one with `npx aigw keys create --name my-app`');
  return new Promise<number>(() => {}); // runs until a signal
}

async function validate(args: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args, options: { config: { type: 'string', short: 'c' } }, allowPositionals: true });
  const file = positionals[0] ?? values.config;
  await loadConfig({ file, builtIns });
  process.stdout.write(`${file ?? process.env.AIGW_CONFIG ?? 'pipelines.yaml'}: valid\n`);
  return 0;
}

async function providersCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { config: { type: 'string', short: 'c' }, write: { type: 'string' } }, strict: true });
  const loaded = await loadConfig({ file: values.config, builtIns });
  const table = renderProviderTable(loaded.providers.list());
  if (!values.write) {
    process.stdout.write(`${table}\n`);
    return 0;
  }
  await writeFile(values.write, withRegion(await readFile(values.write, 'utf8').catch(() => ''), 'providers', table, true));
  process.stdout.write(`${values.write}: ${loaded.providers.list().length} providers\n`);
  return 0;
}

/** `aigw <name>` of a registered plugin's commands (built-in, or named under `plugins` in the config). */
async function pluginCommand(name: string, args: string[]): Promise<number> {
  const { file, rest } = takeConfigOption(args);
  const loaded = await loadConfig({ file, builtIns });
  const command = loaded.plugins.list().flatMap((plugin) => plugin.commands ?? []).find((c) => c.name === name);
  if (!command) throw new UsageError(`unknown command "${name}"`);
  const stores = await openStores(loaded.config, { migrate: true, pluginMigrations: loaded.plugins.migrationSources() });
  try {
    return await command.run(rest, {
      config: loaded.config,
      db: stores.db,
      out: (text) => process.stdout.write(text),
      err: (text) => process.stderr.write(text),
    });
  } finally {
    await stores.close();
  }
}

/** `--config FILE`, `-c FILE` or `--config=FILE` anywhere in the arguments; the others are the command's. */
function takeConfigOption(args: readonly string[]): { file: string | undefined; rest: string[] } {
  const rest: string[] = [];
  let file: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--config' || arg === '-c') file = args[++i];
    else if (arg.startsWith('--config=')) file = arg.slice('--config='.length);
    else rest.push(arg);
  }
  return { file, rest };
}

async function migrateCommand(args: string[]): Promise<number> {
  const { values } = configOption(args);
  const loaded = await loadConfig({ file: values.config, builtIns });
  const stores = await openStores(loaded.config, { migrate: false });
  try {
    const result = await migrate(stores.db, loaded.plugins.migrationSources());
    process.stdout.write(result.applied.length > 0 ? `applied: ${result.applied.join(', ')}\n` : `up to date (${result.current.join(', ')})\n`);
  } finally {
    await stores.close();
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof ConfigError) process.stderr.write(err.message + '\n');
    else if (err instanceof AdminCallError) process.stderr.write(`aigw: ${err.message}\n`);
    else if (err instanceof UsageError) process.stderr.write(`aigw: ${err.message}\n\n${USAGE}`);
    else process.stderr.write(`aigw: ${(err as Error).message ?? String(err)}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  },
);
