/**
 * The semantic-cache middleware when what it leans on fails: a KV and a database that reject every call (as
 * they do past their deadlines) and an embedding provider that is down. The request always goes on as a miss,
 * nothing is thrown at the caller, and each kind of failure is logged once per interval, not once per request.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CanonicalChatRequest, ChatCompletion } from '../../core/canonical/chat.ts';
import type { GatewayContext, GatewayState, ResponseStage } from '../../core/pipeline/context.ts';
import type { PluginServices } from '../../core/pipeline/services.ts';
import type { SemanticCacheConfig } from '../../plugins/semantic-cache/config.ts';
import { cacheMiddleware } from '../../plugins/semantic-cache/middleware.ts';
import { CacheShared } from '../../plugins/semantic-cache/shared.ts';

const CONFIG: SemanticCacheConfig = {
  embeddingModel: 'embed', threshold: 0.9, ttlSeconds: 60, cacheToolCalls: false, maxEntryBytes: 1 << 20, embeddingTimeoutMs: 1000, maxScanRows: 100,
};

const ANSWER: ChatCompletion = {
  id: 'c', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
};

interface Rig {
  shared: CacheShared;
  warnings: Array<{ context: Record<string, unknown>; message: string }>;
  embedCalls: number;
}

function rig(options: { kvFails: boolean; dbFails: boolean; embedFails: boolean }): Rig {
  const refused = () => Promise.reject(new Error('the store did not answer within 500 ms'));
  const warnings: Rig['warnings'] = [];
  const state = { embedCalls: 0 };
  const services = {
    kv: { kind: 'memory', get: options.kvFails ? refused : async () => null, set: options.kvFails ? refused : async () => {} },
    db: { kind: 'pglite', hasVector: false, query: options.dbFails ? refused : async () => [] },
    clock: { now: () => 1_000_000 },
    logger: {
      warn: (context: Record<string, unknown>, message: string) => warnings.push({ context, message }),
      error: (context: Record<string, unknown>, message: string) => warnings.push({ context, message }),
    },
    embeddings: {
      embed: async () => {
        state.embedCalls++;
        if (options.embedFails) throw new Error('502 UPSTREAM_ERROR');
        return { vectors: [[1, 0, 0]], model: 'embed', provider: 'openai', upstreamModel: 'embed', promptTokens: 1 };
      },
    },
    onClose: () => {},
  } as unknown as PluginServices;
  const shared = new CacheShared(services);
  return { shared, warnings, get embedCalls() { return state.embedCalls; } };
}

/** One request through the middleware; `next` plays the dispatcher, and the stages see its answer. */
async function serve(shared: CacheShared, content: string): Promise<{ headers: Record<string, string>; nextCalls: number }> {
  const request: CanonicalChatRequest = {
    modality: 'chat', model: 'm', stream: false, includeUsage: false, body: { model: 'm', messages: [{ role: 'user', content }] },
  };
  const stages: ResponseStage[] = [];
  const gw = {
    endpoint: { kind: 'dispatch', path: '/v1/chat/completions' },
    signal: new AbortController().signal,
    request: async () => request,
    stage: (stage: ResponseStage) => stages.push(stage),
  } as unknown as GatewayState;
  const headers: Record<string, string> = {};
  const ctx = { state: { gw }, set: (name: string, value: string) => { headers[name] = value; }, get: () => '' } as unknown as GatewayContext;
  let nextCalls = 0;
  await cacheMiddleware(CONFIG, shared)(ctx, async () => {
    nextCalls++;
    gw.result = ANSWER;
  });
  for (const stage of stages) await stage.result?.(gw.result!);
  await shared.idle();
  return { headers, nextCalls };
}

describe('semantic-cache when its stores or its embedding provider fail', () => {
  test('a KV and a database that refuse: every request is a miss served by the dispatcher, one log line', async () => {
    const { shared, warnings } = rig({ kvFails: true, dbFails: true, embedFails: false });
    for (const content of ['one', 'two', 'three']) {
      const { headers, nextCalls } = await serve(shared, content);
      assert.equal(nextCalls, 1);
      assert.equal(headers['X-Cache'], 'miss');
    }
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.match(warnings[0]!.message, /a store failed; requests go on as misses/);
    assert.equal(warnings[0]!.context.plugin, 'semantic-cache');
  });

  test('an embedding provider that is down: a miss, the answer still stored for exact hits, one log line', async () => {
    const r = rig({ kvFails: false, dbFails: false, embedFails: true });
    for (const content of ['one', 'two']) {
      const { headers, nextCalls } = await serve(r.shared, content);
      assert.equal(nextCalls, 1);
      assert.equal(headers['X-Cache'], 'miss');
    }
    assert.equal(r.embedCalls, 2, 'one embedding per request (the lookup); a failed one is not tried again to store');
    assert.equal(r.warnings.length, 1, JSON.stringify(r.warnings));
    assert.match(r.warnings[0]!.message, /embedding a conversation failed/);
    assert.equal(r.warnings[0]!.context.model, 'embed');
  });
});
