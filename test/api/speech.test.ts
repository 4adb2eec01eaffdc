/**
 * POST /v1/audio/speech through a real gateway against an OpenAI-format fake: the official `openai` client, the
 * audio streamed to the caller while the provider is still sending it, each format's Content-Type, refusals
 * before any upstream call, Azure's deployment path, and metering: the input's characters and their cost.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startFakeSpeech, type FakeSpeech } from '../fakes/speech.ts';
import { eventually } from '../helpers/eventually.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const config = (origin: string) => `
providers:
  openai: { baseUrl: ${origin}/v1, apiKey: sk-upstream }
  anthropic: { baseUrl: ${origin}/anthropic, apiKey: sk-ant }
  azure-openai: { baseUrl: ${origin}/azure/openai, apiKey: azure-key }
models:
  - id: tts
    provider: openai
    upstreamModel: tts-1
    pricing: { characters: 15 }
  - id: azure-tts
    provider: azure-openai
    upstreamModel: tts-prod
  - id: claude
    provider: anthropic
pipelines:
  - name: speech
    routes: [/v1/audio/speech, /v1/usage, /v1/budget]
    plugins: [auth, ratelimit, budget, { usage: { flushIntervalMs: 10 } }]
`;

const FORMATS = { mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' } as const;

describe('audio speech', () => {
  let fake: FakeSpeech;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;
  const last = () => fake.calls.at(-1)!;
  const audio = () => Buffer.concat(fake.chunks).toString('latin1');

  before(async () => {
    fake = await startFakeSpeech();
    gw = await startTestGateway(config(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['tts', 'usage:read'] } });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('the official client: mp3 by default, the body streams to the caller before the provider has finished', async () => {
    fake.hold();
    const finishedBefore = fake.finished;
    const response = await client.audio.speech.create({ model: 'tts', input: 'Hello there!', voice: 'alloy' });
    assert.equal(response.headers.get('content-type'), 'audio/mpeg');
    assert.equal(response.headers.get('x-provider'), 'openai');
    const reader = response.body!.getReader();
    const received: Uint8Array[] = [];
    let text = '';
    // Everything but the held last chunk arrives while the fake is still sending.
    while (!text.endsWith('third-')) {
      const { value, done } = await reader.read();
      assert.ok(!done, 'the answer ended before the held chunk');
      received.push(value);
      text = Buffer.concat(received).toString('latin1');
    }
    assert.ok(text.startsWith('ID3-first-'));
    assert.equal(fake.finished, finishedBefore, 'the provider has not finished yet');
    fake.release();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      received.push(value);
    }
    assert.equal(Buffer.concat(received).toString('latin1'), audio());
    assert.equal(last().path, '/v1/audio/speech');
    assert.deepEqual(last().body, { model: 'tts-1', input: 'Hello there!', voice: 'alloy', response_format: 'mp3' });
    assert.equal(last().headers.authorization, 'Bearer sk-upstream');
  });

  test('each format: asked upstream, answered with its content type; speed passed on', async () => {
    for (const [format, type] of Object.entries(FORMATS)) {
      const response = await client.audio.speech.create({ model: 'tts', input: 'Hi', voice: 'nova', response_format: format as keyof typeof FORMATS, speed: 1.5 });
      assert.equal(response.headers.get('content-type'), type, format);
      assert.equal(Buffer.from(await response.arrayBuffer()).toString('latin1'), audio());
      assert.equal(last().body.response_format, format);
      assert.equal(last().body.speed, 1.5);
    }
  });

  test('a provider that names no audio type: the asked format\'s', async () => {
    fake.contentType = 'application/octet-stream';
    try {
      const response = await client.audio.speech.create({ model: 'tts', input: 'Hi', voice: 'nova', response_format: 'flac' });
      assert.equal(response.headers.get('content-type'), 'audio/flac');
      await response.arrayBuffer();
    } finally {
      delete fake.contentType;
    }
  });

  test('azure-openai: the deployment\'s path with api-version, the api-key header', async () => {
    const response = await client.audio.speech.create({ model: 'azure-tts', input: 'Hi', voice: 'alloy', response_format: 'wav' });
    assert.equal(Buffer.from(await response.arrayBuffer()).toString('latin1'), audio());
    assert.match(last().path, /^\/azure\/openai\/deployments\/tts-prod\/audio\/speech\?api-version=/);
    assert.equal(last().headers['api-key'], 'azure-key');
    assert.equal(last().headers.authorization, undefined);
  });

  test('refusals before any upstream call: out-of-range values (never clamped), a provider without speech, over 1 MB', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const before = fake.calls.length;
    for (const body of [
      { model: 'tts', input: '', voice: 'alloy' },
      { model: 'tts', input: 'x'.repeat(4097), voice: 'alloy' },
      { model: 'tts', input: 'Hi', voice: 'alloy', speed: 5 },
      { model: 'tts', input: 'Hi', voice: 'alloy', speed: 0.2 },
      { model: 'tts', input: 'Hi', voice: 'alloy', response_format: 'ogg' },
      { model: 'tts', input: 'Hi' },
    ]) {
      const refused = await postJson(`${gw.url}/v1/audio/speech`, body, auth);
      assert.equal(refused.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(refused.body.error.code, 'VALIDATION_ERROR', JSON.stringify(refused.body));
    }
    const claude = await postJson(`${gw.url}/v1/audio/speech`, { model: 'claude', input: 'Hi', voice: 'alloy' }, auth);
    assert.equal(claude.status, 400);
    assert.equal(claude.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    const big = await postJson(`${gw.url}/v1/audio/speech`, { model: 'tts', input: 'Hi', voice: 'alloy', pad: 'x'.repeat(1024 * 1024) }, auth);
    assert.equal(big.status, 413);
    assert.equal(fake.calls.length, before, 'no refusal reached the provider');
    // 4096 characters is in range, counted in code points (an emoji is one).
    const longest = await client.audio.speech.create({ model: 'tts', input: '😀'.repeat(4096), voice: 'alloy' });
    await longest.arrayBuffer();
  });

  test('a caller that leaves mid-answer cancels the upstream call', async () => {
    fake.hold();
    const cut = fake.nextCut();
    const controller = new AbortController();
    const response = await client.audio.speech.create({ model: 'tts', input: 'Hi', voice: 'alloy' }, { signal: controller.signal });
    const reader = response.body!.getReader();
    assert.ok(!(await reader.read()).done, 'the first bytes arrived');
    controller.abort();
    await cut; // the fake's held answer was cut by the gateway, not finished
    fake.release();
  });

  test('an answer that breaks midway cuts the caller\'s connection', async () => {
    const response = await client.audio.speech.create({ model: 'tts', input: 'Hi', voice: 'broken' });
    await assert.rejects(response.arrayBuffer());
  });

  test('budget: the reservation is exactly the input\'s characters at pricing.characters, and so is the charge', async () => {
    const created = await postJson(`${gw.url}/admin/v1/keys`, { name: 'speech-budget', scopes: { capabilities: ['tts', 'budget:read'] } }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { id, key: budgeted } = created.body as { id: string; key: string };
    // 'hello world' is 11 characters at $15 per million: 165 micro-dollars; the budget holds one less.
    const budget = await postJson(`${gw.url}/admin/v1/budgets`, { scope: 'key', scopeId: id, period: 'daily', limitUsd: 164 / 1e6 }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    assert.equal(budget.status, 201, JSON.stringify(budget.body));
    const calls = fake.calls.length;
    const refused = await postJson(`${gw.url}/v1/audio/speech`, { model: 'tts', input: 'hello world', voice: 'alloy' }, { authorization: `Bearer ${budgeted}` });
    assert.equal(refused.status, 402, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'BUDGET_EXCEEDED');
    assert.equal(fake.calls.length, calls);
    const fits = await fetch(`${gw.url}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${budgeted}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tts', input: 'hi 😀', voice: 'alloy' }) });
    assert.equal(fits.status, 200);
    await fits.arrayBuffer();
    await eventually(async () => {
      const response = await fetch(`${gw.url}/v1/budget`, { headers: { authorization: `Bearer ${budgeted}` } });
      const page = await response.json() as { data: Array<{ id: string; spent_usd: number }> };
      assert.equal(page.data.find((b) => b.id === budget.body.id)?.spent_usd, 4 * 15 / 1e6, JSON.stringify(page));
    });
  });

  test('the usage record: the input\'s characters (code points) and their cost; GET /v1/usage sums them', async () => {
    const start = Date.now();
    const input = 'Grüße 😀!'; // 8 code points, 9 UTF-16 units
    await (await client.audio.speech.create({ model: 'tts', input, voice: 'alloy', response_format: 'opus' })).arrayBuffer();
    const db = gw.gateway.services.db;
    await eventually(async () => {
      const rows = await db.query<{ characters: string; cost_usd: string; modality: string; status: string; stream: boolean }>(
        `SELECT characters, cost_usd, modality, status, stream FROM usage_records WHERE created_at >= to_timestamp($1::double precision / 1000)`, [start]);
      assert.equal(rows.length, 1, JSON.stringify(rows));
      assert.deepEqual(rows.map((r) => [Number(r.characters), Number(r.cost_usd), r.modality, r.status]), [[8, 0.00012, 'speech', 'completed']]);
    });
    const from = new Date(start - 60_000).toISOString();
    const response = await fetch(`${gw.url}/v1/usage?from=${encodeURIComponent(from)}&group_by=modality`, { headers: { authorization: `Bearer ${key}` } });
    const page = await response.json() as { data: Array<{ modality: string; characters: number }> };
    assert.equal(response.status, 200, JSON.stringify(page));
    const speech = page.data.find((row) => row.modality === 'speech');
    assert.ok(speech && speech.characters >= 8, JSON.stringify(page));
  });
});
