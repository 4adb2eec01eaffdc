/**
 * Admission within the call (plugins/ratelimit/admit.ts): on the in-process KV, with the body read and the
 * tokenizer loaded, a request's windows are admitted, or refused, without a promise; a body not read yet is read
 * first (a promise), with the same outcome.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CanonicalRequest } from '../../core/canonical/chat.ts';
import { loadTokenizer } from '../../core/canonical/tokenizer.ts';
import { estimateInputTokens } from '../../core/canonical/units.ts';
import type { GatewayState } from '../../core/pipeline/context.ts';
import { StoreGuard } from '../../core/pipeline/store-guard.ts';
import { MemoryKv } from '../../core/store/memory-kv.ts';
import { admitAll, type Admission } from '../../plugins/ratelimit/admit.ts';
import type { PlannedWindow } from '../../plugins/ratelimit/plan.ts';
import { TokenReservation } from '../../plugins/ratelimit/tokens.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {}, child() { return silent; } };
const guard = () => new StoreGuard({ plugin: 'ratelimit', timeoutMs: 1000, mode: 'closed', logger: silent as never, messages: { timeout: 't', failed: 'f', recovered: 'r' } });

const windows: PlannedWindow[] = [
  { level: 'apiKey', name: 'requestsPerMinute', key: 'ratelimit:apiKey:k1:requestsPerMinute', limit: 3, windowMs: 60_000 },
  { level: 'apiKey', name: 'tokensPerDay', key: 'ratelimit:apiKey:k1:tokensPerDay', limit: 1_000_000, windowMs: 86_400_000 },
];

function state(read: boolean): { gw: GatewayState; request: CanonicalRequest } {
  const request = {
    modality: 'chat', model: 'm', stream: false,
    body: { model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'Admit me within the call, please.' }] },
  } as CanonicalRequest;
  const gw = { endpoint: { kind: 'dispatch', path: '/v1/chat/completions' }, request: () => Promise.resolve(request) } as unknown as GatewayState;
  if (read) gw.canonical = request;
  return { gw, request };
}

test('a read body on the in-process KV is admitted within the call, and refused within it once the limit is reached', async () => {
  await loadTokenizer();
  const kv = new MemoryKv();
  try {
    const { gw, request } = state(true);
    const tokens = new TokenReservation(gw, 100);
    const admission = admitAll(kv, guard(), windows, tokens, true);
    assert.ok(!(admission instanceof Promise), 'no promise');
    const { admitted } = admission as Admission;
    assert.deepEqual(admitted.map((w) => [w.name, w.used]), [['requestsPerMinute', 1], ['tokensPerDay', (await estimateInputTokens(request)) + 50]]);

    const unread = state(false);
    const later = admitAll(kv, guard(), windows, new TokenReservation(unread.gw, 100), true);
    assert.ok(later instanceof Promise, 'the body is read first');
    assert.equal((await later).admitted[0]!.used, 2);

    assert.equal((admitAll(kv, guard(), windows, new TokenReservation(state(true).gw, 100), true) as Admission).admitted[0]!.used, 3);
    assert.throws(() => admitAll(kv, guard(), windows, new TokenReservation(state(true).gw, 100), true), { code: 'RATE_LIMIT_EXCEEDED' });
  } finally {
    await kv.close();
  }
});
