/**
 * Speech to text on the providers with their own wire formats (Deepgram, AssemblyAI, ElevenLabs), through a real
 * gateway against a loopback fake of each: what each upstream is sent (raw bytes or a form, query or JSON options,
 * its credential header), AssemblyAI's upload -> create -> poll chain and its error status, the answers read into
 * text, language, duration and segments (rendered here as verbose_json and srt), the audio seconds metered and
 * priced, translations refused before any I/O, and each provider's error shape mapped.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import assemblyai from '../../providers/assemblyai/index.ts';
import deepgram from '../../providers/deepgram/index.ts';
import elevenlabs from '../../providers/elevenlabs/index.ts';
import { FAKE_AUDIO_KEYS, startFakeAudioProviders, type FakeAudioProviders } from '../fakes/audio-providers.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { wav } from '../helpers/wav.ts';

const config = (origin: string) => `
upstream:
  breaker:
    volumeThreshold: 1000
providers:
  deepgram: { baseUrl: ${origin}/deepgram/v1, apiKey: ${FAKE_AUDIO_KEYS.deepgram} }
  assemblyai:
    baseUrl: ${origin}/assemblyai/v2
    apiKey: ${FAKE_AUDIO_KEYS.assemblyai}
    options: { pollIntervalMs: 1 }
  elevenlabs: { baseUrl: ${origin}/elevenlabs/v1, apiKey: ${FAKE_AUDIO_KEYS.elevenlabs} }
models:
  - id: nova
    provider: deepgram
    upstreamModel: nova-3
    pricing: { audioSecond: 0.0001 }
  - id: universal
    provider: assemblyai
    upstreamModel: universal
    pricing: { audioSecond: 0.0002 }
  - id: scribe
    provider: elevenlabs
    upstreamModel: scribe_v1
    pricing: { audioSecond: 0.0003 }
pipelines:
  - name: audio
    routes: [/v1/audio/transcriptions, /v1/audio/translations]
    plugins: [auth, { usage: { flushIntervalMs: 10 } }]
`;

const SRT = '1\n00:00:00,000 --> 00:00:00,900\nHello there.\n\n2\n00:00:01,100 --> 00:00:02,000\nHow are you?\n';

describe('speech to text on deepgram, assemblyai and elevenlabs', () => {
  let fake: FakeAudioProviders;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;
  const file = (seconds = 2) => toFile(wav(seconds), 'hello.wav');

  before(async () => {
    fake = await startFakeAudioProviders();
    gw = await startTestGateway(config(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['audio'] } });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('deepgram: the raw audio to /listen with the options in the query and the Token credential; utterances become segments', async () => {
    const answer = await client.audio.transcriptions.create({ model: 'nova', file: await file(), response_format: 'verbose_json' });
    assert.equal(answer.text, 'Hello there. How are you?');
    assert.equal(answer.language, 'en', 'the detected language');
    assert.equal(answer.duration, 2.25);
    assert.deepEqual(answer.segments!.map((s) => [s.start, s.end, s.text]), [[0, 0.9, 'Hello there.'], [1.1, 2, 'How are you?']]);
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.path, '/deepgram/v1/listen');
    assert.deepEqual(sent.query, { model: 'nova-3', detect_language: 'true', punctuate: 'true', smart_format: 'true', utterances: 'true' });
    assert.equal(sent.headers.authorization, 'Token dg-key');
    assert.equal(sent.headers['content-type'], 'audio/wav');
    assert.equal(sent.bytes, wav(2).length);

    const srt = await client.audio.transcriptions.create({ model: 'nova', file: await file(), language: 'fr', response_format: 'srt' });
    assert.equal(String(srt), SRT);
    assert.equal(fake.requests.at(-1)!.query.language, 'fr');
    assert.equal(fake.requests.at(-1)!.query.detect_language, undefined, 'a caller\'s language is not detected');
  });

  test('assemblyai: upload, create the transcript with the caller\'s language, poll queued -> processing -> completed', async () => {
    const before = fake.requests.length;
    const statuses = fake.assemblyStatuses.length;
    const srt = await client.audio.transcriptions.create({ model: 'universal', file: await file(), language: 'fr', response_format: 'srt' });
    assert.equal(String(srt), SRT, 'the words grouped by sentence, milliseconds read as such');
    assert.deepEqual(fake.assemblyStatuses.slice(statuses), ['queued', 'processing', 'completed']);
    const [upload, create, ...polls] = fake.requests.slice(before);
    assert.deepEqual([upload!.method, upload!.path, upload!.headers['content-type'], upload!.bytes], ['POST', '/assemblyai/v2/upload', 'application/octet-stream', wav(2).length]);
    assert.equal(create!.path, '/assemblyai/v2/transcript');
    assert.deepEqual(Object.keys(create!.json!).sort(), ['audio_url', 'language_code', 'speech_model']);
    assert.match(String(create!.json!.audio_url), /^https:\/\/cdn\.assemblyai\.com\/upload\//);
    assert.deepEqual([create!.json!.speech_model, create!.json!.language_code], ['universal', 'fr']);
    assert.equal(polls.length, 2);
    assert.ok(polls.every((p) => p.method === 'GET' && /^\/assemblyai\/v2\/transcript\/[0-9a-f-]{36}$/.test(p.path)));
    assert.ok([upload, create, ...polls].every((r) => r!.headers.authorization === 'aai-key'), 'the bare key, no scheme');

    const verbose = await client.audio.transcriptions.create({ model: 'universal', file: await file(), response_format: 'verbose_json' });
    assert.equal(verbose.text, 'Hello there. How are you?');
    assert.equal(verbose.duration, 3);
    assert.equal(verbose.language, 'en');
    assert.equal(fake.requests.find((r) => r.path.endsWith('/transcript') && r.json && !r.json.language_code)?.json?.language_detection, true, 'no language: AssemblyAI detects it');
  });

  test('assemblyai: a transcript that ends in status error is an upstream error with AssemblyAI\'s message', async () => {
    fake.assemblyFails = 'Transcoding failed. File does not appear to contain audio.';
    try {
      const statuses = fake.assemblyStatuses.length;
      const failed = await postJson(`${gw.url}/v1/audio/transcriptions`, { model: 'universal', file: wav(1).toString('base64') }, { authorization: `Bearer ${key}` });
      assert.equal(failed.status, 502, JSON.stringify(failed.body));
      assert.equal(failed.body.error.code, 'UPSTREAM_ERROR');
      assert.match(failed.body.error.message, /Transcoding failed/);
      assert.deepEqual(fake.assemblyStatuses.slice(statuses), ['queued', 'processing', 'error']);
    } finally {
      delete fake.assemblyFails;
    }
  });

  test('elevenlabs: a form with model_id and word timestamps, the xi-api-key credential; the words become sentences', async () => {
    const answer = await client.audio.transcriptions.create({ model: 'scribe', file: await file(), language: 'en', temperature: 0.1, response_format: 'verbose_json' });
    assert.equal(answer.text, 'Hello there. How are you?');
    assert.equal(answer.language, 'eng');
    assert.equal(answer.duration, 2, 'the last word\'s end');
    assert.deepEqual(answer.segments!.map((s) => [s.start, s.end, s.text]), [[0, 0.9, 'Hello there.'], [1.1, 2, 'How are you?']]);
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.path, '/elevenlabs/v1/speech-to-text');
    assert.deepEqual(sent.fields, { model_id: 'scribe_v1', timestamps_granularity: 'word', language_code: 'en', temperature: '0.1' });
    assert.equal(sent.bytes, wav(2).length);
    assert.equal(sent.headers['xi-api-key'], 'el-key');
    assert.equal(sent.headers.authorization, undefined);
    const srt = await client.audio.transcriptions.create({ model: 'scribe', file: await file(), response_format: 'srt' });
    assert.equal(String(srt), SRT);
  });

  test('translations are refused before any I/O: none of the three translates to English', async () => {
    const before = fake.requests.length;
    for (const model of ['nova', 'universal', 'scribe']) {
      const refused = await postJson(`${gw.url}/v1/audio/translations`, { model, file: wav(1).toString('base64') }, { authorization: `Bearer ${key}` });
      assert.equal(refused.status, 400, model);
      assert.equal(refused.body.error.code, 'CAPABILITY_NOT_SUPPORTED', model);
    }
    assert.equal(fake.requests.length, before);
  });

  test('the audio seconds each provider reports are recorded and priced', async () => {
    const start = Date.now();
    for (const model of ['nova', 'universal', 'scribe']) await client.audio.transcriptions.create({ model, file: await file(), response_format: 'text' });
    const db = gw.gateway.services.db;
    await eventually(async () => {
      const rows = await db.query<{ model: string; audio_seconds: number; cost_usd: string; provider: string }>(
        `SELECT model, audio_seconds, cost_usd, provider FROM usage_records WHERE created_at >= to_timestamp($1::double precision / 1000) AND status = 'completed' ORDER BY created_at`, [start]);
      assert.deepEqual(rows.map((r) => [r.model, r.provider, Number(r.audio_seconds), Number(r.cost_usd)]), [
        ['nova', 'deepgram', 2.25, 0.000225],
        ['universal', 'assemblyai', 3, 0.0006],
        ['scribe', 'elevenlabs', 2, 0.0006],
      ]);
    });
  });
});

describe('deepgram, assemblyai and elevenlabs error shapes', () => {
  const target = (slug: string): ProviderTarget => ({ slug, baseUrl: 'http://upstream', headers: {}, options: {}, upstreamModel: 'm' });

  test('each provider\'s error body gives the message; a refused credential is the gateway\'s problem (502)', () => {
    const dg = deepgram.mapError(401, { err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.', request_id: 'r' }, target('deepgram'));
    assert.equal(dg.code, 'UPSTREAM_ERROR');
    assert.match(dg.message, /Invalid credentials\./);
    const dgJson = deepgram.mapError(400, { category: 'INVALID_JSON', message: 'Invalid JSON submitted.', details: 'missing field' }, target('deepgram'));
    assert.equal(dgJson.code, 'UPSTREAM_BAD_REQUEST');
    assert.match(dgJson.message, /Invalid JSON submitted\.: missing field/);
    const aai = assemblyai.mapError(400, { error: 'language_code is not supported' }, target('assemblyai'));
    assert.equal(aai.code, 'UPSTREAM_BAD_REQUEST');
    assert.match(aai.message, /language_code is not supported/);
    const el = elevenlabs.mapError(429, { detail: { status: 'too_many_concurrent_requests', message: 'Too many requests' } }, target('elevenlabs'));
    assert.equal(el.code, 'UPSTREAM_RATE_LIMITED');
    assert.match(el.message, /Too many requests/);
    const invalid = elevenlabs.mapError(422, { detail: [{ loc: ['body', 'model_id'], msg: 'Field required', type: 'missing' }] }, target('elevenlabs'));
    assert.match(invalid.message, /Field required \(body\.model_id\)/);
  });
});
