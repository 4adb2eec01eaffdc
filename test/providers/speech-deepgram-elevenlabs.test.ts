/**
 * POST /v1/audio/speech on Deepgram (Aura, POST /speak) and ElevenLabs (POST /text-to-speech/{voice}/stream)
 * through a real gateway and the official `openai` client, against a loopback fake streaming binary audio in
 * several chunks: the request each provider's docs describe (path, query, credential, JSON body), each OpenAI
 * format as the provider asks for it and the Content-Type the caller gets, the bytes unchanged, the input's
 * characters metered, refusals before any I/O (a format or speed the provider lacks), and its errors mapped.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { FAKE_SPEECH_KEYS, startFakeSpeechProviders, type FakeSpeechProviders } from '../fakes/speech-providers.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const config = (origin: string) => `
providers:
  deepgram: { baseUrl: ${origin}/deepgram/v1, apiKey: ${FAKE_SPEECH_KEYS.deepgram} }
  elevenlabs: { baseUrl: ${origin}/elevenlabs/v1, apiKey: ${FAKE_SPEECH_KEYS.elevenlabs} }
models:
  - { id: aura, provider: deepgram, upstreamModel: aura-2-thalia-en, pricing: { characters: 30 } }
  - { id: eleven, provider: elevenlabs, upstreamModel: eleven_multilingual_v2, pricing: { characters: 100 } }
pipelines:
  - name: speech
    routes: [/v1/audio/speech]
    plugins: [auth, { usage: { flushIntervalMs: 10 } }]
`;

type Format = 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm';

describe('speech on Deepgram and ElevenLabs', () => {
  let fake: FakeSpeechProviders;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;
  const last = () => fake.requests.at(-1)!;
  const audio = () => Buffer.concat(fake.chunks);

  before(async () => {
    fake = await startFakeSpeechProviders();
    gw = await startTestGateway(config(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['tts'] } });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  const speak = async (model: string, format: Format, extra: { speed?: number; voice?: string; requestId?: string } = {}) => {
    const response = await client.audio.speech.create(
      { model, input: 'Grüße 😀!', voice: extra.voice ?? 'alloy', response_format: format, ...(extra.speed !== undefined ? { speed: extra.speed } : {}) },
      extra.requestId ? { headers: { 'x-request-id': extra.requestId } } : {},
    );
    return { type: response.headers.get('content-type'), provider: response.headers.get('x-provider'), bytes: Buffer.from(await response.arrayBuffer()) };
  };

  const refused = async (body: Record<string, unknown>) => {
    const before = fake.requests.length;
    const answer = await postJson(`${gw.url}/v1/audio/speech`, { input: 'Hi', voice: 'alloy', ...body }, { authorization: `Bearer ${key}` });
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.error.code, 'CAPABILITY_NOT_SUPPORTED', JSON.stringify(answer.body));
    assert.equal(fake.requests.length, before, 'the refusal reached no provider');
    return String(answer.body.error.message);
  };

  const characters = async (requestId: string) => {
    const db = gw.gateway.services.db;
    let found: Array<{ characters: string; cost_usd: string; provider: string }> = [];
    await eventually(async () => {
      found = await db.query<{ characters: string; cost_usd: string; provider: string }>('SELECT characters, cost_usd, provider FROM usage_records WHERE request_id = $1', [requestId]);
      assert.equal(found.length, 1);
    });
    return found[0]!;
  };

  test('deepgram: POST /speak with the model, encoding and container in the query, {text}, the Token credential; mp3 streamed unchanged', async () => {
    const requestId = randomUUID();
    const answer = await speak('aura', 'mp3', { requestId });
    assert.equal(answer.type, 'audio/mpeg');
    assert.equal(answer.provider, 'deepgram');
    assert.deepEqual(answer.bytes, audio());
    assert.equal(last().path, '/deepgram/v1/speak');
    assert.deepEqual(last().query, { model: 'aura-2-thalia-en', encoding: 'mp3' });
    assert.equal(last().headers.authorization, `Token ${FAKE_SPEECH_KEYS.deepgram}`);
    assert.equal(last().headers['content-type'], 'application/json');
    assert.deepEqual(last().json, { text: 'Grüße 😀!' });
    // 8 code points at $30 per million characters.
    const row = await characters(requestId);
    assert.deepEqual([Number(row.characters), Number(row.cost_usd), row.provider], [8, 8 * 30 / 1e6, 'deepgram']);
  });

  test('deepgram: every OpenAI format is one of its encoding/container combinations; pcm is linear16 at 24 kHz, bare', async () => {
    const expected: Record<Format, [Record<string, string>, string]> = {
      mp3: [{ encoding: 'mp3' }, 'audio/mpeg'],
      opus: [{ encoding: 'opus', container: 'ogg' }, 'audio/ogg'],
      aac: [{ encoding: 'aac' }, 'audio/aac'],
      flac: [{ encoding: 'flac' }, 'audio/flac'],
      wav: [{ encoding: 'linear16', container: 'wav' }, 'audio/wav'],
      pcm: [{ encoding: 'linear16', container: 'none', sample_rate: '24000' }, 'audio/pcm'],
    };
    for (const [format, [query, type]] of Object.entries(expected) as Array<[Format, [Record<string, string>, string]]>) {
      const answer = await speak('aura', format);
      assert.equal(answer.type, type, format);
      assert.deepEqual(answer.bytes, audio(), format);
      assert.deepEqual(last().query, { model: 'aura-2-thalia-en', ...query }, format);
    }
  });

  test('deepgram: speed is Aura-2\'s speed parameter, 0.7 to 1.5; outside it is refused before any I/O', async () => {
    await speak('aura', 'wav', { speed: 1.25 });
    assert.equal(last().query.speed, '1.25');
    await speak('aura', 'wav', { speed: 1 });
    assert.equal(last().query.speed, undefined, 'the default is not sent');
    const message = await refused({ model: 'aura', speed: 2 });
    assert.match(message, /speed from 0\.7 to 1\.5/);
  });

  test('deepgram: its error body becomes the gateway\'s error (a refused credential: 502, its err_msg kept)', async () => {
    const stored = FAKE_SPEECH_KEYS.deepgram;
    FAKE_SPEECH_KEYS.deepgram = 'rotated';
    try {
      const answer = await postJson(`${gw.url}/v1/audio/speech`, { model: 'aura', input: 'Hi', voice: 'alloy' }, { authorization: `Bearer ${key}` });
      assert.equal(answer.status, 502, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, 'UPSTREAM_ERROR');
      assert.match(answer.body.error.message, /Invalid credentials/);
    } finally {
      FAKE_SPEECH_KEYS.deepgram = stored;
    }
  });

  test('elevenlabs: POST /text-to-speech/{voice}/stream?output_format, {text, model_id}, the xi-api-key header', async () => {
    const requestId = randomUUID();
    const answer = await speak('eleven', 'mp3', { voice: 'JBFqnCBsd6RMkjVDRZzb', requestId });
    assert.equal(answer.type, 'audio/mpeg');
    assert.equal(answer.provider, 'elevenlabs');
    assert.deepEqual(answer.bytes, audio());
    assert.equal(last().path, '/elevenlabs/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb/stream');
    assert.deepEqual(last().query, { output_format: 'mp3_44100_128' });
    assert.equal(last().headers['xi-api-key'], FAKE_SPEECH_KEYS.elevenlabs);
    assert.equal(last().headers.authorization, undefined);
    assert.deepEqual(last().json, { text: 'Grüße 😀!', model_id: 'eleven_multilingual_v2' });
    const row = await characters(requestId);
    assert.deepEqual([Number(row.characters), Number(row.cost_usd), row.provider], [8, 8 * 100 / 1e6, 'elevenlabs']);
  });

  test('elevenlabs: opus, wav and pcm as its output formats (pcm untyped upstream: audio/pcm); speed in voice_settings', async () => {
    const expected: Array<[Format, string, string]> = [['opus', 'opus_48000_64', 'audio/opus'], ['wav', 'wav_24000', 'audio/wav'], ['pcm', 'pcm_24000', 'audio/pcm']];
    for (const [format, outputFormat, type] of expected) {
      const answer = await speak('eleven', format, { voice: 'voice a/b', speed: 1.1 });
      assert.equal(answer.type, type, format);
      assert.deepEqual(answer.bytes, audio(), format);
      assert.equal(last().path, '/elevenlabs/v1/text-to-speech/voice%20a%2Fb/stream', 'the voice is one path segment');
      assert.deepEqual(last().query, { output_format: outputFormat });
      assert.deepEqual(last().json.voice_settings, { speed: 1.1 });
    }
  });

  test('elevenlabs: aac, flac and a speed outside 0.7 to 1.2 are refused before any I/O; an unknown voice is its 404', async () => {
    assert.match(await refused({ model: 'eleven', response_format: 'aac' }), /response_format aac/);
    assert.match(await refused({ model: 'eleven', response_format: 'flac' }), /response_format flac .*mp3, opus, wav, pcm/);
    assert.match(await refused({ model: 'eleven', speed: 1.5 }), /speed from 0\.7 to 1\.2/);
    const missing = await postJson(`${gw.url}/v1/audio/speech`, { model: 'eleven', input: 'Hi', voice: 'unknown-voice' }, { authorization: `Bearer ${key}` });
    assert.equal(missing.status, 400, JSON.stringify(missing.body));
    assert.equal(missing.body.error.code, 'UPSTREAM_BAD_REQUEST');
    assert.match(missing.body.error.message, /unknown-voice was not found/);
  });
});
