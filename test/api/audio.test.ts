/**
 * POST /v1/audio/transcriptions and /v1/audio/translations through a real gateway against an OpenAI-format fake:
 * the official `openai` client (multipart), JSON with base64, every response_format rendered by the gateway from
 * the full answer, the 10 MB limit while reading, and metering: every format records its audio seconds, from the
 * provider's duration or, for a model billed by tokens, from the file itself.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { startFakeAudio, type FakeAudio } from '../fakes/audio.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { wav } from '../helpers/wav.ts';

const config = (origin: string) => `
providers:
  openai: { baseUrl: ${origin}/v1, apiKey: sk-upstream }
  anthropic: { baseUrl: ${origin}/anthropic, apiKey: sk-ant }
  azure-openai: { baseUrl: ${origin}/azure/openai, apiKey: azure-key }
models:
  - id: azure-whisper
    provider: azure-openai
    upstreamModel: whisper-prod
  - id: whisper
    provider: openai
    upstreamModel: whisper-1
    pricing: { audioSecond: 0.0001 }
  - id: transcribe-mini
    provider: openai
    upstreamModel: gpt-4o-mini-transcribe
    pricing: { audioSecond: 0.00005 }
  - id: claude
    provider: anthropic
pipelines:
  - name: audio
    routes: [/v1/audio/transcriptions, /v1/audio/translations, /v1/usage]
    plugins: [auth, { usage: { flushIntervalMs: 10 } }]
`;

describe('audio transcriptions and translations', () => {
  let fake: FakeAudio;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;
  const last = () => fake.requests.at(-1)!;

  before(async () => {
    fake = await startFakeAudio();
    gw = await startTestGateway(config(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['audio', 'usage:read'] } });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('the official client (multipart): json by default; the upstream is asked for verbose_json with the upstream model', async () => {
    const answer = await client.audio.transcriptions.create({ model: 'whisper', file: await toFile(wav(2.5), 'hello.wav'), language: 'fr', temperature: 0.2 });
    assert.equal(answer.text, 'Bonjour, comment allez-vous ?');
    const sent = last();
    assert.equal(sent.path, '/v1/audio/transcriptions');
    assert.deepEqual(sent.fields, { model: 'whisper-1', response_format: 'verbose_json', language: 'fr', temperature: '0.2' });
    assert.equal(sent.file!.filename, 'hello.wav');
    assert.equal(sent.file!.bytes, wav(2.5).length);
    assert.equal(sent.headers.authorization, 'Bearer sk-upstream');
  });

  test('verbose_json, text, srt and vtt are rendered from the full answer', async () => {
    const file = async () => toFile(wav(2.5), 'hello.wav');
    const verbose = await client.audio.transcriptions.create({ model: 'whisper', file: await file(), response_format: 'verbose_json' });
    assert.equal(verbose.duration, 2.5);
    assert.equal(verbose.language, 'french');
    assert.deepEqual(verbose.segments!.map((s) => [s.id, s.start, s.end, s.text]), [[0, 0, 1.25, 'Bonjour'], [1, 1.25, 2.5, 'comment allez-vous ?']]);
    const text = await client.audio.transcriptions.create({ model: 'whisper', file: await file(), response_format: 'text' });
    assert.equal(String(text).trim(), 'Bonjour, comment allez-vous ?');
    const srt = await client.audio.transcriptions.create({ model: 'whisper', file: await file(), response_format: 'srt' });
    assert.equal(String(srt), '1\n00:00:00,000 --> 00:00:01,250\nBonjour\n\n2\n00:00:01,250 --> 00:00:02,500\ncomment allez-vous ?\n');
    const vtt = await client.audio.transcriptions.create({ model: 'whisper', file: await file(), response_format: 'vtt' });
    assert.equal(String(vtt), 'WEBVTT\n\n00:00:00.000 --> 00:00:01.250\nBonjour\n\n00:00:01.250 --> 00:00:02.500\ncomment allez-vous ?\n');
    // Whatever the caller asked for, the provider was asked for the full answer.
    assert.ok(fake.requests.slice(-4).every((r) => r.fields.response_format === 'verbose_json'));
  });

  test('translations: to /audio/translations, without language', async () => {
    const answer = await client.audio.translations.create({ model: 'whisper', file: await toFile(wav(1), 'bonjour.wav') });
    assert.equal(answer.text, 'Hello, how are you?');
    assert.equal(last().path, '/v1/audio/translations');
    assert.equal(last().fields.language, undefined);
  });

  test('azure-openai: the deployment\'s path with api-version, the api-key header', async () => {
    const answer = await client.audio.translations.create({ model: 'azure-whisper', file: await toFile(wav(1), 'a.wav'), response_format: 'verbose_json' });
    assert.equal(answer.text, 'Hello, how are you?');
    assert.match(last().path, /^\/azure\/openai\/deployments\/whisper-prod\/audio\/translations\?api-version=/);
    assert.equal(last().headers['api-key'], 'azure-key');
    assert.equal(last().headers.authorization, undefined);
  });

  test('JSON with base64 audio (or a data: URI); a nameless file is named from its bytes', async () => {
    const response = await postJson(`${gw.url}/v1/audio/transcriptions`, { model: 'whisper', file: wav(1).toString('base64'), response_format: 'json' }, { authorization: `Bearer ${key}` });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.text, 'Bonjour, comment allez-vous ?');
    assert.equal(last().file!.filename, 'audio.wav');
    assert.equal(last().file!.mimeType, 'audio/wav');
    const uri = await postJson(`${gw.url}/v1/audio/translations`, { model: 'whisper', file: `data:audio/wav;base64,${wav(1).toString('base64')}` }, { authorization: `Bearer ${key}` });
    assert.equal(uri.status, 200, JSON.stringify(uri.body));
  });

  test('refusals: bad fields, no audio, a model whose provider has no audio, a loopback file_url, over 10 MB', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const before = fake.requests.length;
    for (const body of [
      { model: 'whisper', file: wav(1).toString('base64'), temperature: 2 },
      { model: 'whisper', file: wav(1).toString('base64'), response_format: 'docx' },
      { model: 'whisper', file: wav(1).toString('base64'), language: 'french' },
      { model: 'whisper', file: 'not base64!' },
      { model: 'whisper' },
    ]) {
      const refused = await postJson(`${gw.url}/v1/audio/transcriptions`, body, auth);
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.equal(refused.body.error.code, 'VALIDATION_ERROR', JSON.stringify(refused.body));
    }
    const language = await postJson(`${gw.url}/v1/audio/translations`, { model: 'whisper', file: wav(1).toString('base64'), language: 'fr' }, auth);
    assert.equal(language.status, 400, 'translations take no language');
    const claude = await postJson(`${gw.url}/v1/audio/transcriptions`, { model: 'claude', file: wav(1).toString('base64') }, auth);
    assert.equal(claude.status, 400);
    assert.equal(claude.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    const url = await postJson(`${gw.url}/v1/audio/transcriptions`, { model: 'whisper', file_url: 'https://127.0.0.1/a.wav' }, auth);
    assert.equal(url.status, 400);
    assert.equal(url.body.error.code, 'VALIDATION_ERROR', 'loopback is not allow-listed here (audio-file-url.test.ts)');
    await assert.rejects(client.audio.transcriptions.create({ model: 'whisper', file: await toFile(Buffer.alloc(11 * 1024 * 1024, 1), 'big.wav') }),
      (err: unknown) => err instanceof OpenAI.APIError && err.status === 413);
    assert.equal(fake.requests.length, before, 'no refusal reached the provider');
  });

  test('every format records its audio seconds: the provider\'s duration, or the file\'s own for a model billed by tokens', async () => {
    const start = Date.now();
    await client.audio.transcriptions.create({ model: 'whisper', file: await toFile(wav(2.5), 'a.wav'), response_format: 'text' });
    const mini = await client.audio.transcriptions.create({ model: 'transcribe-mini', file: await toFile(wav(4), 'b.wav') });
    assert.equal(mini.text, 'Bonjour, comment allez-vous ?');
    assert.equal(last().fields.response_format, 'json', 'the gpt-4o transcribe models take json only');
    const db = gw.gateway.services.db;
    await eventually(async () => {
      const rows = await db.query<{ model: string; audio_seconds: number; cost_usd: string; prompt_tokens: string; modality: string }>(
        `SELECT model, audio_seconds, cost_usd, prompt_tokens, modality FROM usage_records WHERE created_at >= to_timestamp($1::double precision / 1000) ORDER BY created_at`, [start]);
      assert.equal(rows.length, 2, JSON.stringify(rows));
      assert.deepEqual(rows.map((r) => [r.model, Number(r.audio_seconds), Number(r.cost_usd), r.modality]), [
        ['whisper', 2.5, 0.00025, 'transcription'],
        ['transcribe-mini', 4, 0.0002, 'transcription'],
      ]);
      assert.equal(Number(rows[1]!.prompt_tokens), 42, 'the tokens a provider reports are kept');
    });
  });
});
