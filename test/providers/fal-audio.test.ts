/**
 * fal's speech to text and text to speech through a real gateway against the loopback fal (test/fakes/fal.ts):
 * the submitted input (the audio as a data: URI, task, language, the text field), translation refused,, the `Key` credential on every
 * queue request and never on the CDN, the poll walk IN_QUEUE -> IN_PROGRESS -> COMPLETED and then the response
 * URL, whisper's chunks read as segments, the audio streamed from the CDN, formats the model cannot give refused
 * before any I/O, fal's errors mapped, and the audio seconds and characters metered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { FAL_KEY, startFakeFal, type FakeFal } from '../fakes/fal.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { wav } from '../helpers/wav.ts';

const config = (origin: string) => `
upstream:
  breaker:
    volumeThreshold: 1000
providers:
  fal-ai:
    baseUrl: ${origin}
    apiKey: ${FAL_KEY}
    options: { pollIntervalMs: 1 }
models:
  - id: whisper
    provider: fal-ai
    upstreamModel: fal-ai/whisper
    pricing: { audioSecond: 0.0001 }
  - id: kokoro
    provider: fal-ai
    upstreamModel: fal-ai/kokoro/american-english
    pricing: { characters: 20 }
pipelines:
  - name: audio
    routes: [/v1/audio/transcriptions, /v1/audio/translations, /v1/audio/speech]
    plugins: [auth, { usage: { flushIntervalMs: 10 } }]
`;

const SRT = '1\n00:00:00,000 --> 00:00:00,900\nHello there.\n\n2\n00:00:01,100 --> 00:00:02,000\nHow are you?\n';

describe('fal-ai: speech to text and text to speech', () => {
  let fake: FakeFal;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;
  const since = (n: number) => fake.requests.slice(n);

  before(async () => {
    fake = await startFakeFal();
    gw = await startTestGateway(config(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['audio', 'tts'] } });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('transcription: the official client\'s multipart upload becomes a queued whisper request, polled to its output', async () => {
    const start = fake.requests.length;
    const statuses = fake.statuses.length;
    const answer = await client.audio.transcriptions.create({ model: 'whisper', file: await toFile(wav(2), 'hello.wav'), language: 'en', prompt: 'Greetings', response_format: 'verbose_json' });
    assert.equal(answer.text, 'Hello there. How are you?');
    assert.equal(answer.language, 'en');
    assert.deepEqual(answer.segments!.map((s) => [s.start, s.end, s.text]), [[0, 0.9, 'Hello there.'], [1.1, 2, 'How are you?']]);
    const [submit, ...polls] = since(start);
    assert.deepEqual([submit!.method, submit!.path], ['POST', '/fal-ai/whisper']);
    assert.deepEqual({ ...submit!.json, audio_url: undefined }, { audio_url: undefined, task: 'transcribe', language: 'en', chunk_level: 'segment', version: '3', prompt: 'Greetings' });
    assert.equal(submit!.json!.audio_url, `data:audio/wav;base64,${wav(2).toString('base64')}`, 'the audio inline, as a data: URI');
    assert.deepEqual(polls.map((p) => `${p.method} ${p.path}${p.query.logs ? `?logs=${p.query.logs}` : ''}`), [
      `GET /fal-ai/whisper/requests/${polls[0]!.path.split('/')[4]}/status?logs=1`,
      `GET /fal-ai/whisper/requests/${polls[0]!.path.split('/')[4]}/status?logs=1`,
      `GET /fal-ai/whisper/requests/${polls[0]!.path.split('/')[4]}/status?logs=1`,
      `GET /fal-ai/whisper/requests/${polls[0]!.path.split('/')[4]}`,
    ]);
    assert.deepEqual(fake.statuses.slice(statuses), ['IN_QUEUE', 'IN_QUEUE', 'IN_PROGRESS', 'COMPLETED']);
    assert.ok(since(start).every((r) => r.headers.authorization === `Key ${FAL_KEY}`), 'fal\'s Key scheme on every queue request');

    const srt = await client.audio.transcriptions.create({ model: 'whisper', file: await toFile(wav(2), 'hello.wav'), response_format: 'srt' });
    assert.equal(String(srt), SRT);
    assert.equal(fake.requests.filter((r) => r.method === 'POST').at(-1)!.json!.language, undefined, 'no language: whisper detects it');
  });

  test('translation is not declared (the catalogue does not list fal for it): refused before any I/O', async () => {
    const start = fake.requests.length;
    const refused = await postJson(`${gw.url}/v1/audio/translations`, { model: 'whisper', file: wav(1).toString('base64') }, { authorization: `Bearer ${key}` });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.equal(fake.requests.length, start);
  });

  test('speech: kokoro\'s prompt, voice and speed; the WAV streamed from the CDN without the fal credential', async () => {
    const start = fake.requests.length;
    const response = await client.audio.speech.create({ model: 'kokoro', input: 'Hello fal!', voice: 'af_heart', speed: 1.25, response_format: 'wav' });
    assert.equal(response.headers.get('content-type'), 'audio/wav');
    assert.equal(response.headers.get('x-provider'), 'fal-ai');
    assert.deepEqual(Buffer.from(await response.arrayBuffer()), fake.files['speech.wav']!.bytes);
    const sent = since(start);
    assert.deepEqual([sent[0]!.path, sent[0]!.json], ['/fal-ai/kokoro/american-english', { prompt: 'Hello fal!', voice: 'af_heart', speed: 1.25 }]);
    assert.deepEqual(sent.map((r) => r.server), ['queue', 'queue', 'queue', 'queue', 'queue', 'cdn']);
    assert.match(sent[4]!.path, /^\/fal-ai\/kokoro\/requests\/[0-9a-f-]{36}$/, 'the response under the app, not the sub-path');
    const download = sent[5]!;
    assert.equal(download.path, '/files/speech.wav');
    assert.equal(download.headers.authorization, undefined, 'no fal credential to the CDN');
  });

  test('speech: a format kokoro does not make is refused before any I/O', async () => {
    const start = fake.requests.length;
    for (const format of ['mp3', 'opus']) {
      const refused = await postJson(`${gw.url}/v1/audio/speech`, { model: 'kokoro', input: 'Hello', voice: 'af_heart', response_format: format }, { authorization: `Bearer ${key}` });
      assert.equal(refused.status, 400, format);
      assert.equal(refused.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
      assert.match(refused.body.error.message, /gives wav only/);
    }
    assert.equal(fake.requests.length, start);
  });

  test('a request that fails on fal (COMPLETED, its response an error) answers fal\'s detail', async () => {
    fake.resultError = { status: 422, body: { detail: [{ loc: ['body', 'audio_url'], msg: 'Could not decode the audio', type: 'value_error' }] } };
    const failed = await postJson(`${gw.url}/v1/audio/transcriptions`, { model: 'whisper', file: wav(1).toString('base64') }, { authorization: `Bearer ${key}` });
    assert.equal(failed.status, 400, JSON.stringify(failed.body));
    assert.equal(failed.body.error.code, 'UPSTREAM_BAD_REQUEST');
    assert.match(failed.body.error.message, /Could not decode the audio \(body\.audio_url\)/);
  });

  test('the audio seconds (the last segment\'s end) and the characters are recorded and priced', async () => {
    const start = Date.now();
    await client.audio.transcriptions.create({ model: 'whisper', file: await toFile(wav(3), 'hello.wav'), response_format: 'text' });
    await (await client.audio.speech.create({ model: 'kokoro', input: 'Hello fal!', voice: 'af_heart', response_format: 'wav' })).arrayBuffer();
    const db = gw.gateway.services.db;
    await eventually(async () => {
      const rows = await db.query<{ model: string; provider: string; audio_seconds: number | null; characters: number | null; cost_usd: string }>(
        `SELECT model, provider, audio_seconds, characters, cost_usd FROM usage_records WHERE created_at >= to_timestamp($1::double precision / 1000) AND status = 'completed' ORDER BY created_at`, [start]);
      assert.deepEqual(rows.map((r) => [r.model, r.provider, Number(r.audio_seconds ?? 0), Number(r.characters ?? 0), Number(r.cost_usd)]), [
        ['whisper', 'fal-ai', 2, 0, 0.0002],
        ['kokoro', 'fal-ai', 0, 10, 0.0002],
      ]);
    });
  });
});
