/**
 * The servers under test, each a real process: the loopback upstream, the bare pass-through, aigw (`node
 * bin/aigw.js start`, as operators run it) with its pipelines, and the Portkey gateway from npm. Processes are
 * pinned with taskset: the servers under test to one core, the upstream (and the load generator) to the other.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildConfigSchema } from '../core/config/schema.ts';
import { builtInPlugins } from '../plugins/index.ts';
import { freePort } from '../test/helpers/free-port.ts';
import type { Target } from './load.ts';

export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const AIGW_BIN = join(REPO_ROOT, 'bin/aigw.js');
const PORTKEY_BIN = join(REPO_ROOT, 'node_modules/@portkey-ai/gateway/build/start-server.js');
const PORTKEY_SHIM = join(REPO_ROOT, 'bench/portkey-shim.mjs');
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const UPSTREAM_KEY = 'sk-bench-upstream';

export type VariantId = 'direct' | 'passthrough' | 'aigw-empty' | 'aigw-full' | 'aigw-guards' | 'aigw-full-shared' | 'portkey';
export const ALL_VARIANTS: VariantId[] = ['direct', 'passthrough', 'aigw-empty', 'aigw-full', 'aigw-guards', 'aigw-full-shared', 'portkey'];

export interface Running {
  id: VariantId;
  label: string;
  /** What exactly runs: the pipeline, the stores, the version. */
  description: string;
  target: Target;
  /** The process under test (none for direct). */
  pid?: number;
  /** Runs on the shared Postgres and Redis: their servers' CPU is part of what is measured, not noise. */
  sharedStores?: boolean;
  stop(): Promise<void>;
}

export interface Context {
  workDir: string;
  upstreamUrl: string;
  /** Core of the servers under test; null: no pinning (one core, or no taskset). */
  serverCore: number | null;
  /** For the shared-store variant. */
  databaseUrl: string;
  redisUrl: string;
  /** Extra node flags for aigw (e.g. --cpu-prof). */
  aigwNodeFlags?: string[];
  /**
   * The command line of the server under test (aigw, the pass-through) made from node's: valgrind around it for
   * bench/instructions.ts. Such a server may take minutes to answer its first request.
   */
  launcher?: (node: string[]) => string[];
  /** Settings over a plugin's bench config (PLUGIN_CONFIG), e.g. usage's flushIntervalMs for bench/instructions.ts. */
  pluginConfig?: Record<string, Record<string, unknown>>;
  /** Top-level config sections added to aigw's (e.g. `jobs`), for the timers bench/instructions.ts keeps out. */
  configSections?: Record<string, Record<string, unknown>>;
  /** Another checkout's bin/aigw.js, to compare two builds in one run (bench/cpu-split.ts). */
  aigwBin?: string;
  /** Extra environment for aigw (e.g. AIGW_LOG_LEVEL), for experiments. */
  aigwEnv?: NodeJS.ProcessEnv;
  /** aigw-full's pipeline instead of the full one, to measure a plugin's share (bench/cpu-split.ts). */
  plugins?: string[];
  log(line: string): void;
}

// ---------------------------------------------------------------------------------------------------- processes

export function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Pins every thread of a process (the GC and libuv threads too) to one core. */
export function pin(pid: number, core: number | null): void {
  if (core === null) return;
  execFileSync('taskset', ['-a', '-cp', String(core), String(pid)], { stdio: 'ignore' });
}

/** Resident set size in MB, from /proc. */
export function rssMb(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/**
 * A process's or thread's name and CPU time (user + system, ms) from its /proc stat file (`/proc/<pid>/stat`,
 * `/proc/<pid>/task/<tid>/stat`); null once it has ended. The name is read up to the last `)`: it may hold one.
 */
export function procStat(path: string): { name: string; cpuMs: number } | null {
  try {
    const stat = readFileSync(path, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 };
  } catch {
    return null;
  }
}

/** CPU time (user + system) of a process in ms, from /proc. */
export function cpuMs(pid: number): number | null {
  return procStat(`/proc/${pid}/stat`)?.cpuMs ?? null;
}

/**
 * CPU time the whole machine spent in processes (user, nice, system; all cores), in ms, from /proc/stat. Interrupt
 * time is left out: loopback traffic of the benchmark itself lands there, outside any process.
 */
export function machineCpuMs(): number | null {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
    const [user, nice, system] = fields.map(Number);
    return ((user! + nice! + system!) * 1000) / 100;
  } catch {
    return null;
  }
}

/** Process names of the shared stores' servers (Postgres forks a process per connection). */
const STORE_SERVERS = new Set(['postgres', 'redis-server']);

/** CPU time (user + system) of every Postgres and Redis server process on the machine, in ms, from /proc. */
export function storeServersCpuMs(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (entry.charCodeAt(0) > 57) continue; // not a pid
    const stat = procStat(`/proc/${entry}/stat`);
    if (stat && STORE_SERVERS.has(stat.name)) total += stat.cpuMs;
  }
  return total;
}

export { freePort };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Child {
  child: ChildProcess;
  exited: Promise<void>;
  stop(): Promise<void>;
}

/** Output goes to a log file in the work folder: a pipe the harness would have to read competes for its core. */
function spawnChild(name: string, args: string[], env: NodeJS.ProcessEnv, workDir: string, launcher = (node: string[]) => node): Child {
  const logFile = join(workDir, `${name}.log`);
  const fd = openSync(logFile, 'a');
  const [command, ...argv] = launcher([process.execPath, ...args]) as [string, ...string[]];
  const child = spawn(command, argv, {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), 15_000);
      });
      const killed = await Promise.race([exited.then(() => false), late]);
      clearTimeout(timer);
      if (killed) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

async function waitForHttp(url: string, child: Child, name: string, workDir: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void child.exited.then(() => (gone = true));
  while (Date.now() < deadline) {
    if (gone) break;
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      return;
    } catch {
      await sleep(100);
    }
  }
  await child.stop();
  const log = readFileSync(join(workDir, `${name}.log`), 'utf8').slice(-3000);
  throw new Error(`${name} did not answer at ${url} ${gone ? '(it exited)' : `within ${timeoutMs} ms`}\n${log}`);
}

/** A node process running a bench/*.ts server, which prints {"port": N} once it listens. */
async function startTsServer(name: string, file: string, env: NodeJS.ProcessEnv, workDir: string, launcher?: Context['launcher']): Promise<{ url: string; child: Child }> {
  const port = await freePort();
  const child = spawnChild(name, ['--import', 'tsx', join(REPO_ROOT, file)], { ...env, PORT: String(port) }, workDir, launcher);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/stats`, child, name, workDir, launcher ? 900_000 : 30_000);
  return { url, child };
}

export async function startUpstreamProcess(workDir: string, core: number | null): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const { url, child } = await startTsServer('upstream', 'bench/upstream.ts', {}, workDir);
  pin(child.child.pid!, core);
  return { url, pid: child.child.pid!, stop: child.stop };
}

export async function upstreamRequests(upstreamUrl: string, reset = false): Promise<number> {
  const res = await fetch(`${upstreamUrl}/stats`, { method: reset ? 'POST' : 'GET' });
  return ((await res.json()) as { requests: number }).requests;
}

// ---------------------------------------------------------------------------------------------------- aigw

const CHAT_PATH = '/v1/chat/completions';
const ORDER = ['auth', 'ip-allow', 'ratelimit', 'budget', 'usage'];

/**
 * Realistic configs for the built-in plugins, so that each does its real work on every request. A plugin not
 * listed here runs with its schema's defaults.
 */
const PLUGIN_CONFIG: Record<string, Record<string, unknown>> = {
  // Every level checked: the client address, the key (its own limits, below) and the tenant.
  ratelimit: { ip: { requestsPerMinute: 100_000_000 }, deployment: { requestsPerMinute: 100_000_000, tokensPerDay: 1_000_000_000_000 } },
};

/** Limits and allow-list of the bench key: generous, so that every check runs and none refuses. */
const KEY_FIELDS = {
  rateLimits: { requestsPerMinute: 100_000_000, tokensPerDay: 1_000_000_000_000 },
  allowedIps: ['10.0.0.0/8', '127.0.0.0/8', '::1'],
};

/**
 * Plugins the full pipeline leaves out: they would answer the bench's repeated request themselves (a cache) or
 * need data the bench does not make (vector stores), so the run would not measure a request reaching the upstream.
 * `guards` has a variant of its own (aigw-guards: the full pipeline plus guards), so that aigw-full stays
 * comparable with earlier runs and the guards' own cost is the difference between the two. `audit` is left out
 * for the same reason: the full pipeline is the one the performance targets name (auth, ip-allow, ratelimit,
 * budget, usage).
 */
const NOT_MEASURED = new Set(['semantic-cache', 'rag', 'guards', 'audit']);

/** Every other built-in plugin registered now, in pipeline order: the known ones first, later ones after them. */
export function fullPipeline(): string[] {
  const names = builtInPlugins.map((p) => p.name).filter((n) => !NOT_MEASURED.has(n));
  return [...ORDER.filter((n) => names.includes(n)), ...names.filter((n) => !ORDER.includes(n))];
}

function aigwConfig(upstreamUrl: string, plugins: string[], storage: Record<string, unknown>, overrides: Context['pluginConfig'] = {}, sections: Context['configSections'] = {}): string {
  const pricing = { input: 0.15, output: 0.6, cachedInput: 0.075 };
  const config = {
    server: { host: '127.0.0.1', shutdownTimeoutMs: 5000 },
    storage,
    providers: { openai: { baseUrl: `${upstreamUrl}/v1`, apiKey: UPSTREAM_KEY } },
    models: [
      { id: 'bench', provider: 'openai', pricing },
      { id: 'bench-delay', provider: 'openai', pricing },
    ],
    pipelines: [{
      name: 'bench',
      routes: [CHAT_PATH],
      plugins: plugins.map((name) => {
        const settings = PLUGIN_CONFIG[name] || overrides[name] ? { ...PLUGIN_CONFIG[name], ...overrides[name] } : undefined;
        return settings ? { [name]: settings } : name;
      }),
    }],
  } as Record<string, unknown>;
  // A section the harness sets too (storage) is merged into, not replaced.
  for (const [name, section] of Object.entries(sections)) config[name] = { ...(config[name] as Record<string, unknown> | undefined), ...section };
  return JSON.stringify(config, null, 2); // JSON is YAML
}

function kvPrefixSupported(): boolean {
  const schema = buildConfigSchema([], []) as { properties: { storage: { properties: Record<string, unknown> } } };
  return 'kvPrefix' in schema.properties.storage.properties;
}

async function admin(url: string, path: string, payload: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}/admin/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (res.status !== 201) throw new Error(`POST /admin/v1${path} failed: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/**
 * The bench key, and what the plugins in the pipeline need to do real work for it: with `budget`, a monthly
 * budget on the key and a daily one on the deployment (both far from reached), so each request reserves on two.
 */
async function prepareCaller(url: string, plugins: string[]): Promise<{ key: string; notes: string[] }> {
  const created = await admin(url, '/keys', { name: 'bench', ...KEY_FIELDS });
  const notes = [`key with rateLimits ${JSON.stringify(KEY_FIELDS.rateLimits)} and allowedIps ${JSON.stringify(KEY_FIELDS.allowedIps)}`];
  if (plugins.includes('budget')) {
    await admin(url, '/budgets', { scope: 'key', scopeId: created.id, period: 'monthly', limitUsd: 1_000_000 });
    await admin(url, '/budgets', { scope: 'deployment', period: 'daily', limitUsd: 10_000_000 });
    notes.push('budgets: the key monthly $1M, the deployment daily $10M');
  }
  if (plugins.includes('ratelimit')) notes.push(`ratelimit ${JSON.stringify(PLUGIN_CONFIG.ratelimit)}`);
  return { key: String(created.key), notes };
}

async function startAigw(ctx: Context, id: VariantId, plugins: string[], shared: boolean): Promise<Running> {
  const port = await freePort();
  const dir = join(ctx.workDir, `${id}-${port}`);
  execFileSync('mkdir', ['-p', dir]);
  const env: NodeJS.ProcessEnv = { ...ctx.aigwEnv, PORT: String(port), HOST: '127.0.0.1', AIGW_DATA_DIR: join(dir, 'data'), AIGW_ADMIN_TOKEN: ADMIN_TOKEN };
  const storage: Record<string, unknown> = {};
  let dropSchema: (() => Promise<void>) | undefined;
  let stores = 'embedded stores: PGlite in a temp folder (created by `aigw migrate` first, so the start is not the first), in-process KV';
  if (shared) {
    const schema = `bench_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: ctx.databaseUrl });
    await admin.connect();
    await admin.query(`CREATE SCHEMA "${schema}"`);
    await admin.end();
    dropSchema = async () => {
      const c = new pg.Client({ connectionString: ctx.databaseUrl });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await c.end();
    };
    const sep = ctx.databaseUrl.includes('?') ? '&' : '?';
    env.DATABASE_URL = `${ctx.databaseUrl}${sep}options=${encodeURIComponent(`-c search_path=${schema},public`)}`;
    env.REDIS_URL = ctx.redisUrl;
    if (kvPrefixSupported()) storage.kvPrefix = `${schema}:`;
    stores = `Postgres (fresh schema) + Redis (${storage.kvPrefix ? `key prefix ${String(storage.kvPrefix)}` : ctx.redisUrl})`;
  }
  const configFile = join(dir, 'bench.yaml');
  writeFileSync(configFile, aigwConfig(ctx.upstreamUrl, plugins, storage, ctx.pluginConfig, ctx.configSections));
  if (!shared) {
    // As a gateway runs after its first start: the data folder exists. A first start also runs PGlite's initdb,
    // whose memory stays resident for the life of the process (about 450 MB more RSS).
    const migrate = spawnChild(`${id}-migrate`, [ctx.aigwBin ?? AIGW_BIN, 'migrate', '--config', configFile], env, ctx.workDir);
    await migrate.exited;
    if (migrate.child.exitCode !== 0) throw new Error(`aigw migrate failed (${migrate.child.exitCode}): ${readFileSync(join(ctx.workDir, `${id}-migrate.log`), 'utf8').slice(-2000)}`);
  }
  const child = spawnChild(id, [...(ctx.aigwNodeFlags ?? []), ctx.aigwBin ?? AIGW_BIN, 'start', '--config', configFile], env, ctx.workDir, ctx.launcher);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/healthz`, child, id, ctx.workDir, ctx.launcher ? 900_000 : undefined);
  } catch (err) {
    await dropSchema?.().catch(() => {});
    throw err;
  }
  let caller: { key: string; notes: string[] };
  try {
    caller = await prepareCaller(url, plugins);
  } catch (err) {
    await child.stop();
    await dropSchema?.().catch(() => {});
    throw err;
  }
  const { key } = caller;
  pin(child.child.pid!, ctx.serverCore);
  return {
    id,
    label: id,
    description: `aigw, pipeline [${plugins.join(', ')}]${plugins.length === 1 ? ' (the emptiest the config allows: a pipeline serving /v1 must include auth)' : ''}, ${stores}; ${caller.notes.join('; ')}; models priced; access log on (the default), log level info, output to a file`,
    target: { url, path: CHAT_PATH, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } },
    pid: child.child.pid!,
    ...(shared ? { sharedStores: true } : {}),
    async stop() {
      await child.stop();
      await dropSchema?.().catch((err) => ctx.log(`dropping the bench schema failed: ${(err as Error).message}`));
    },
  };
}

// ---------------------------------------------------------------------------------------------------- the others

async function startPortkey(ctx: Context): Promise<Running> {
  const port = await freePort();
  const child = spawnChild('portkey', ['--import', PORTKEY_SHIM, PORTKEY_BIN, `--port=${port}`, '--headless'], { NODE_ENV: 'production' }, ctx.workDir);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(url, child, 'portkey', ctx.workDir);
  pin(child.child.pid!, ctx.serverCore);
  const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules/@portkey-ai/gateway/package.json'), 'utf8')) as { version: string }).version;
  return {
    id: 'portkey',
    label: 'portkey',
    description: `Portkey gateway ${version} (npm @portkey-ai/gateway, build/start-server.js --headless), provider openai with x-portkey-custom-host at the loopback upstream; no auth, no plugins; bench/portkey-shim.mjs gives streamed upstream answers mutable headers, without which every Portkey stream fails (TypeError: immutable)`,
    target: {
      url,
      path: CHAT_PATH,
      headers: {
        authorization: `Bearer ${UPSTREAM_KEY}`,
        'content-type': 'application/json',
        'x-portkey-provider': 'openai',
        'x-portkey-custom-host': `${ctx.upstreamUrl}/v1`,
      },
    },
    pid: child.child.pid!,
    stop: child.stop,
  };
}

async function startPassthrough(ctx: Context): Promise<Running> {
  const { url, child } = await startTsServer('passthrough', 'bench/passthrough.ts', { UPSTREAM: ctx.upstreamUrl }, ctx.workDir, ctx.launcher);
  pin(child.child.pid!, ctx.serverCore);
  return {
    id: 'passthrough',
    label: 'passthrough',
    description: 'bare Node pass-through: node:http server + undici Agent, headers copied, bodies piped both ways (bench/passthrough.ts)',
    target: { url, path: CHAT_PATH, headers: { authorization: `Bearer ${UPSTREAM_KEY}`, 'content-type': 'application/json' } },
    pid: child.child.pid!,
    stop: child.stop,
  };
}

/**
 * A variant as the measuring tools take it on their command line (cpu-split.ts, allocations.ts, instructions.ts):
 * `variant[=<another checkout>/bin/aigw.js][~plugin,plugin][~node flags]`, as its id and startVariant's options.
 */
export function variantSpec(spec: string): { id: VariantId; options: Pick<Context, 'aigwBin' | 'plugins' | 'aigwNodeFlags'> } {
  const [build = '', plugins, flags] = spec.split('~');
  const [id, bin] = build.split('=') as [VariantId, string | undefined];
  return { id, options: { ...(bin ? { aigwBin: bin } : {}), ...(plugins ? { plugins: plugins.split(',') } : {}), ...(flags ? { aigwNodeFlags: flags.split(' ') } : {}) } };
}

export async function startVariant(ctx: Context, id: VariantId): Promise<Running> {
  switch (id) {
    case 'direct':
      return {
        id,
        label: 'direct',
        description: 'the load generator straight to the loopback upstream: the floor',
        target: { url: ctx.upstreamUrl, path: CHAT_PATH, headers: { authorization: `Bearer ${UPSTREAM_KEY}`, 'content-type': 'application/json' } },
        stop: async () => {},
      };
    case 'passthrough':
      return startPassthrough(ctx);
    case 'aigw-empty':
      return startAigw(ctx, id, ['auth'], false);
    case 'aigw-full':
      return startAigw(ctx, id, ctx.plugins ?? fullPipeline(), false);
    case 'aigw-guards':
      // Listed last, nearest the dispatcher: it sees the prompt last and the answer first, with its defaults.
      return startAigw(ctx, id, [...fullPipeline(), 'guards'], false);
    case 'aigw-full-shared':
      return startAigw(ctx, id, fullPipeline(), true);
    case 'portkey':
      return startPortkey(ctx);
  }
}

/** Whether Postgres and Redis answer (the shared-store variant is skipped, and says so, when they do not). */
export async function sharedStoresReachable(databaseUrl: string, redisUrl: string): Promise<string | null> {
  try {
    const c = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2000 });
    await c.connect();
    await c.end();
  } catch (err) {
    return `Postgres at ${databaseUrl} did not answer: ${(err as Error).message}`;
  }
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    return `Redis at ${redisUrl} did not answer: ${(err as Error).message}`;
  } finally {
    redis.disconnect();
  }
  return null;
}
