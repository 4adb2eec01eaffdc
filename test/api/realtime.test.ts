/**
 * Realtime sessions through a gateway against a loopback OpenAI Realtime API: creation, the ticket (single use,
 * 60 s, 4401 otherwise), frames relayed verbatim both ways, the session's settings applied upstream, the four ways
 * a session ends (client close, provider close, idle, gateway shutdown) each closing both sides and leaving one
 * record of its tokens and audio, and the concurrency cap.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { MeteredWork } from '../../core/pipeline/metered.ts';
import { TALLY_FILES } from '../fakes/batches.ts';
import { realtimeConfig, RESPONSE_AUDIO_BYTES, RESPONSE_USAGE, startFakeRealtime, type FakeRealtime } from '../fakes/realtime.ts';
import { eventually } from '../helpers/eventually.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { CLIENT_AUDIO, connectRealtime, converse, createSession, fetchSession, type RealtimeClient } from '../helpers/realtime-client.ts';

/** One second of a session's idle timeout lasts 5 ms here: 30 s idle is 150 ms. */
const IDLE_UNIT_MS = 5;

describe('realtime sessions', () => {
  let fake: FakeRealtime;
  let gw: TestGateway;
  let key: string;
  let offset = 0;
  const metered = () => (gw.gateway.pluginState('tally') as { seen: MeteredWork[] }).seen;

  before(async () => {
    fake = await startFakeRealtime();
    gw = await startTestGateway(realtimeConfig(fake.origin, 'realtime:\n  maxConcurrentSessions: 3\n'), {
      files: TALLY_FILES, realtimeIdleUnitMs: IDLE_UNIT_MS, clock: { now: () => Date.now() + offset },
    });
    key = await gw.createKey({ scopes: { capabilities: ['realtime'] } });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  /** A session connected and its settings acknowledged: session.created and session.updated arrived. */
  async function connected(body: Record<string, unknown> = {}): Promise<{ session: any; client: RealtimeClient }> {
    const created = await createSession(gw.url, key, { idle_timeout_seconds: 3600, ...body });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const client = await connectRealtime(created.body.gateway_ws_url, created.body.subprotocol_hint);
    await client.frameCount(2);
    return { session: created.body, client };
  }

  const expectedAudio = 1 + RESPONSE_AUDIO_BYTES / 48_000;

  test('create, connect with the ticket, frames relayed verbatim both ways; a client close ends both sides and meters once', async () => {
    const created = await createSession(gw.url, key, {
      voice: 'alloy', instructions: 'Be brief.', input_audio_format: 'pcm16', output_audio_format: 'pcm16',
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }], metadata: { team: 'a' },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const s = created.body;
    assert.match(s.id, /^rt-[0-9a-f-]{36}$/);
    assert.equal(s.object, 'realtime.session');
    assert.equal(s.status, 'connecting');
    assert.equal(s.provider, 'openai');
    assert.equal(s.model, 'gpt-4o-realtime');
    assert.equal(s.gateway_ws_url, `${gw.url.replace('http', 'ws')}/v1/realtime/connect`);
    assert.equal(s.subprotocol_hint, `ticket.${s.ticket}`);
    assert.ok(Math.abs(s.ticket_expires_at - (s.created_at + 60)) <= 1, `${s.ticket_expires_at} vs ${s.created_at}`);
    assert.deepEqual(s.metadata, { team: 'a' });
    assert.equal(s.idle_timeout_seconds, 600);

    const client = await connectRealtime(s.gateway_ws_url, s.subprotocol_hint);
    assert.equal(client.socket.protocol, s.subprotocol_hint);
    await client.frameCount(2);
    const upstream = fake.connections.at(-1)!;
    assert.equal(upstream.url, '/v1/realtime?model=gpt-4o-realtime-preview-2024-12-17');
    assert.equal(upstream.headers.authorization, 'Bearer sk-upstream-secret');
    assert.equal(upstream.headers['openai-beta'], 'realtime=v1');
    assert.deepEqual(JSON.parse(upstream.received[0]!), {
      type: 'session.update',
      session: { modalities: ['text', 'audio'], voice: 'alloy', instructions: 'Be brief.', input_audio_format: 'pcm16', output_audio_format: 'pcm16', tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }] },
    });
    assert.equal((await fetchSession(gw.url, key, s.id)).status, 'connected');

    // The client's frames reach the provider as sent, byte for byte (odd spacing included).
    const update = '{"type": "session.update",  "session": {"instructions": "Speak French."}}';
    client.socket.send(update);
    await client.frameCount(3);
    await converse(client);
    assert.deepEqual(upstream.received.slice(1), [update, JSON.stringify({ type: 'input_audio_buffer.append', audio: CLIENT_AUDIO }), JSON.stringify({ type: 'response.create', response: { modalities: ['text', 'audio'] } })]);
    // What the provider sent arrives as it sent it, in order.
    assert.deepEqual(client.frames, upstream.sent);

    client.socket.close(1000, 'bye');
    assert.equal((await client.closed).code, 1000);
    await eventually(async () => assert.equal(upstream.closed?.code, 1000));
    await eventually(async () => assert.equal((await fetchSession(gw.url, key, s.id)).status, 'closed'));
    const closed = await fetchSession(gw.url, key, s.id);
    assert.deepEqual(closed.usage, { input_tokens: RESPONSE_USAGE.input_tokens, output_tokens: RESPONSE_USAGE.output_tokens, audio_seconds: expectedAudio });
    assert.equal(closed.close_reason, 'client_closed');
    assert.equal(closed.ticket, undefined, 'the ticket is shown once, at creation');
    // The record is closed first, then the usage reported: wait for the report.
    await eventually(async () => assert.equal(metered().filter((w) => w.id === s.id).length, 1));
    const work = metered().filter((w) => w.id === s.id);
    assert.equal(work[0]!.source, 'realtime');
    assert.equal(work[0]!.modality, 'realtime');
    assert.deepEqual(work[0]!.usage, { prompt_tokens: 12, completion_tokens: 34, total_tokens: 46 });
    assert.equal(work[0]!.audioSeconds, expectedAudio);
    // The usage plugin took it as one usage record, priced at the model's input, output and audioSecond.
    const recorded = () => gw.gateway.services.db.query<Record<string, unknown>>(
      'SELECT modality, endpoint, prompt_tokens, completion_tokens, audio_seconds, cost_usd FROM usage_records WHERE request_id = $1', [s.id]);
    await eventually(async () => assert.equal((await recorded()).length, 1));
    const rows = await recorded();
    assert.equal(rows[0]!.modality, 'realtime');
    assert.equal(Number(rows[0]!.prompt_tokens), 12);
    assert.equal(Number(rows[0]!.completion_tokens), 34);
    assert.equal(Number(rows[0]!.audio_seconds), expectedAudio);
    assert.ok(Math.abs(Number(rows[0]!.cost_usd) - (12 * 5 + 34 * 20) / 1e6 - expectedAudio * 0.001) < 1e-9, String(rows[0]!.cost_usd));
  });

  test('a ticket is single use; a missing, unknown or expired ticket is closed with 4401', async () => {
    const { session, client } = await connected();
    const again = await connectRealtime(session.gateway_ws_url, session.subprotocol_hint);
    assert.equal((await again.closed).code, 4401);
    client.socket.close();
    await client.closed;

    const unknown = await connectRealtime(session.gateway_ws_url, 'ticket.not-a-ticket');
    assert.equal((await unknown.closed).code, 4401);
    const none = await connectRealtime(session.gateway_ws_url);
    assert.equal((await none.closed).code, 4401);

    const created = await createSession(gw.url, key);
    offset += 61_000;
    try {
      const late = await connectRealtime(created.body.gateway_ws_url, created.body.subprotocol_hint);
      assert.equal((await late.closed).code, 4401);
      // The expiry job closes the session that never connected.
      await eventually(async () => assert.equal((await fetchSession(gw.url, key, created.body.id)).close_reason, 'ticket_expired'));
    } finally {
      offset -= 61_000;
    }
  });

  test('the session is charged to the caller\'s budget once, at close; a spent budget refuses a new one; another tenant cannot see it', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const created = await postJson(`${gw.url}/admin/v1/keys`, { name: 'budgeted', scopes: { capabilities: ['realtime', 'budget:read'] } }, admin);
    const { id: keyId, key: budgeted } = created.body as { id: string; key: string };
    const budget = await postJson(`${gw.url}/admin/v1/budgets`, { scope: 'key', scopeId: keyId, period: 'daily', limitUsd: 10 }, admin);
    assert.equal(budget.status, 201, JSON.stringify(budget.body));
    const spent = async () => {
      const page = await (await fetch(`${gw.url}/v1/budget`, { headers: { authorization: `Bearer ${budgeted}` } })).json() as { data: Array<{ id: string; spent_usd: number }> };
      return page.data.find((b) => b.id === budget.body.id)?.spent_usd;
    };
    const session = await createSession(gw.url, budgeted, { idle_timeout_seconds: 3600 });
    const client = await connectRealtime(session.body.gateway_ws_url, session.body.subprotocol_hint);
    await client.frameCount(2);
    await converse(client);
    assert.equal(await spent(), 0, 'nothing is charged while the session runs');
    client.socket.close();
    await eventually(async () => assert.equal((await fetchSession(gw.url, budgeted, session.body.id)).status, 'closed'));
    const cost = (12 * 5 + 34 * 20) / 1e6 + expectedAudio * 0.001;
    await eventually(async () => assert.ok(Math.abs((await spent())! - cost) < 1e-6, `spent ${await spent()} of ${cost}`));
    // A budget already over its limit refuses a new session (its cost is known only at close).
    const small = await postJson(`${gw.url}/admin/v1/budgets`, { scope: 'key', scopeId: keyId, period: 'monthly', limitUsd: 0.001 }, admin);
    assert.equal(small.status, 201, JSON.stringify(small.body));
    const refused = await createSession(gw.url, budgeted);
    assert.equal(refused.status, 402, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'BUDGET_EXCEEDED');

    const tenant = await postJson(`${gw.url}/admin/v1/tenants`, { id: 'rt-other', name: 'Other' }, admin);
    assert.equal(tenant.status, 201, JSON.stringify(tenant.body));
    const other = await gw.createKey({ tenantId: 'rt-other', scopes: { capabilities: ['realtime'] } });
    const hidden = await fetch(`${gw.url}/v1/realtime/sessions/${session.body.id}`, { headers: { authorization: `Bearer ${other}` } });
    assert.equal(hidden.status, 404);
  });

  test('the create body is checked field by field', async () => {
    const bad = await createSession(gw.url, key, { modalities: ['audio', 'text'], idle_timeout_seconds: 10, input_audio_format: 'mp3', extra: 1 });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'VALIDATION_ERROR');
    assert.deepEqual(bad.body.error.details.map((d: { path: string }) => d.path).sort(), ['/extra', '/idle_timeout_seconds', '/input_audio_format', '/modalities']);
    const noKey = await createSession(gw.url, 'nope');
    assert.equal(noKey.status, 401);
  });

  test('the provider closing ends the client\'s side with its code, and the usage is recorded', async () => {
    const { session, client } = await connected();
    await converse(client);
    fake.connections.at(-1)!.socket.close(4000, 'provider says goodbye');
    assert.equal((await client.closed).code, 4000);
    await eventually(async () => assert.equal((await fetchSession(gw.url, key, session.id)).status, 'closed'));
    const closed = await fetchSession(gw.url, key, session.id);
    assert.equal(closed.close_reason, 'upstream_closed');
    assert.deepEqual(closed.usage, { input_tokens: 12, output_tokens: 34, audio_seconds: expectedAudio });
    await eventually(async () => assert.equal(metered().filter((w) => w.id === session.id).length, 1));
  });

  test('an idle session is closed on both sides after its idle timeout, with its usage', async () => {
    const { session, client } = await connected({ idle_timeout_seconds: 30 });
    await converse(client);
    const upstream = fake.connections.at(-1)!;
    const { code, reason } = await client.closed;
    assert.equal(code, 1000);
    assert.equal(reason, 'idle timeout');
    await eventually(async () => assert.equal(upstream.closed?.code, 1000));
    await eventually(async () => assert.equal((await fetchSession(gw.url, key, session.id)).close_reason, 'idle_timeout'));
    assert.deepEqual((await fetchSession(gw.url, key, session.id)).usage, { input_tokens: 12, output_tokens: 34, audio_seconds: expectedAudio });
  });

  test('a provider that refuses the connection closes the client with 1011', async () => {
    fake.refuseWith = 401;
    try {
      const created = await createSession(gw.url, key);
      const client = await connectRealtime(created.body.gateway_ws_url, created.body.subprotocol_hint);
      assert.equal((await client.closed).code, 1011);
      await eventually(async () => assert.equal((await fetchSession(gw.url, key, created.body.id)).close_reason, 'upstream_error'));
    } finally {
      delete fake.refuseWith;
    }
  });

  test('past the cap a creation is refused with 429; a closed session frees its slot, and so does an expired ticket', async () => {
    const open = [await connected(), await connected(), await connected()];
    const refused = await createSession(gw.url, key);
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'RATE_LIMIT_EXCEEDED');
    open[0]!.client.socket.close();
    await eventually(async () => assert.equal((await createSession(gw.url, key)).status, 200));
    // That creation holds the freed slot with its unredeemed ticket, until the ticket expires.
    assert.equal((await createSession(gw.url, key)).status, 429);
    offset += 61_000;
    try {
      assert.equal((await createSession(gw.url, key)).status, 200);
    } finally {
      offset -= 61_000;
    }
    for (const { client } of open.slice(1)) {
      client.socket.close();
      await client.closed;
    }
  });
});
