/**
 * `node --import tsx bench/cache-hit.ts [requests] [--redis=URL]`: what an exact hit of the semantic-cache plugin
 * adds to a request. Two in-process gateways (embedded database each; memory KV, or Redis with --redis), each
 * serving POST /v1/chat/completions:
 *
 *   cached  [auth, semantic-cache]  every request after the first is an exact hit
 *   fixed   [auth, fixed-answer]    a bench plugin that sets the same answer without any lookup
 *
 * and, for scale, the first gateway's /v1/completions behind [auth] on the loopback upstream (bench/upstream.ts).
 * Both chat routes answer without a provider and render the same answer, so their difference is the cache's own
 * work on a hit: the key (canonical JSON and SHA-256 of the request), one KV get, the entry's parse and checks,
 * the headers. Requests go one at a time over one keep-alive connection per gateway, the routes interleaved in
 * rounds so that drift (a busy machine, GC) lands on all of them alike.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { builtIns } from '../core/cli/builtins.ts';
import * as load from '../core/boot/load.ts';
import { createGateway } from '../core/gateway.ts';
import { silentLogger } from '../core/logger.ts';
import { definePlugin } from '../core/pipeline/plugin.ts';
import type { ChatCompletion } from '../core/canonical/chat.ts';
import { percentile } from './load.ts';
import { CHAT_BODY, startUpstream } from './upstream.ts';

const ADMIN_TOKEN = 'bench-admin-token';
const ROUND = 100;

const ANSWER: ChatCompletion = {
  id: 'chatcmpl-bench', object: 'chat.completion', created: 1_700_000_000, model: 'bench',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the bench upstream.' }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
};

/** Answers every request with ANSWER (a fresh copy, as the cache's parse gives), without a provider. */
const fixedAnswer = definePlugin({
  name: 'fixed-answer',
  description: 'Bench only: answers with a fixed chat completion, as a cache hit would, without any lookup.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  setup: () => async (ctx, next) => {
    await ctx.state.gw.request();
    ctx.state.gw.result = structuredClone(ANSWER);
    await next();
  },
});

const BODY = CHAT_BODY;

function yaml(upstream: string, redisUrl: string | undefined, pipelines: string): string {
  return `
storage:
  redisUrl: ${redisUrl ?? "''"}
  kvPrefix: 'bench-cache-${process.pid}-${Math.random().toString(36).slice(2)}:'
server:
  accessLog: false
providers:
  openai:
    baseUrl: ${upstream}/v1
    apiKey: sk-bench
models:
  - id: bench
    provider: openai
pipelines:
${pipelines}`;
}

const CACHED = `
  - name: cached
    routes: [/v1/chat/completions]
    plugins: [auth, semantic-cache]
  - name: plain
    routes: [/v1/completions]
    plugins: [auth]`;

const FIXED = `
  - name: fixed
    routes: [/v1/chat/completions]
    plugins: [auth, fixed-answer]`;

interface BenchGateway {
  pluginState(name: string): unknown;
  send(path: string): Promise<{ ms: number; cache: string | undefined }>;
  close(): Promise<void>;
}

async function startBenchGateway(upstream: string, redisUrl: string | undefined, pipelines: string): Promise<BenchGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'aigw-bench-cache-'));
  const loaded = await load.parseConfig(yaml(upstream, redisUrl, pipelines), {
    file: join(dataDir, 'pipelines.yaml'),
    env: { AIGW_DATA_DIR: join(dataDir, 'data'), AIGW_ADMIN_TOKEN: ADMIN_TOKEN },
    builtIns: { ...builtIns, plugins: [...builtIns.plugins, fixedAnswer] },
  });
  const gateway = await createGateway(loaded, { logger: silentLogger() });
  const pool = new Pool(await gateway.listen(0), { connections: 1, pipelining: 1 });
  const created = await pool.request({
    method: 'POST', path: '/admin/v1/keys', body: JSON.stringify({ name: 'bench', scopes: { capabilities: ['chat', 'completions'] } }),
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
  });
  const { key } = (await created.body.json()) as { key: string };
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  return {
    pluginState: (name) => gateway.pluginState(name),
    async send(path) {
      const started = performance.now();
      const response = await pool.request({ method: 'POST', path, body: BODY, headers });
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode}`);
      return { ms: performance.now() - started, cache: response.headers['x-cache'] as string | undefined };
    },
    async close() {
      await pool.close();
      await gateway.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function main(): Promise<void> {
  const requests = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 3000);
  const redisUrl = process.argv.find((a) => a.startsWith('--redis='))?.slice('--redis='.length);
  const upstream = await startUpstream();
  const cached = await startBenchGateway(upstream.url, redisUrl, CACHED);
  const fixed = await startBenchGateway(upstream.url, redisUrl, FIXED);
  try {
    const routes = {
      hit: () => cached.send('/v1/chat/completions'),
      fixed: () => fixed.send('/v1/chat/completions'),
      upstream: () => cached.send('/v1/completions'),
    } as const;
    // Store the entry the hits read, then warm every route up (JIT, pools, the key cache).
    await routes.hit();
    await (cached.pluginState('semantic-cache') as { idle(): Promise<void> }).idle();
    for (let i = 0; i < 500; i++) for (const send of Object.values(routes)) await send();

    const samples: Record<keyof typeof routes, number[]> = { hit: [], fixed: [], upstream: [] };
    for (let done = 0; done < requests; done += ROUND) {
      for (const [name, send] of Object.entries(routes) as Array<[keyof typeof routes, () => ReturnType<BenchGateway['send']>]>) {
        for (let i = 0; i < ROUND; i++) {
          const { ms, cache } = await send();
          if (name === 'hit' && cache !== 'hit') throw new Error(`expected an exact hit, got X-Cache ${cache}`);
          samples[name].push(ms);
        }
      }
    }
    const row = (name: string, values: number[]) => `${name.padEnd(46)} p50 ${percentile(values, 50).toFixed(3)} ms   p99 ${percentile(values, 99).toFixed(3)} ms`;
    process.stdout.write(`${samples.hit.length} requests per route, KV: ${redisUrl ? 'Redis' : 'memory'}\n`);
    process.stdout.write(`${row('[auth, semantic-cache]: exact hit', samples.hit)}\n`);
    process.stdout.write(`${row('[auth, fixed-answer]: same answer, no lookup', samples.fixed)}\n`);
    process.stdout.write(`${row('[auth]: zero-delay loopback upstream', samples.upstream)}\n`);
    const added = percentile(samples.hit, 50) - percentile(samples.fixed, 50);
    process.stdout.write(`an exact hit adds ${added.toFixed(3)} ms at p50 (target < 1 ms): ${added < 1 ? 'yes' : 'NO'}\n`);
  } finally {
    await cached.close();
    await fixed.close();
    await upstream.close();
  }
}

await main();
