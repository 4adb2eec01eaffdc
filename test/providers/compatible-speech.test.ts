/**
 * POST /v1/audio/speech on the OpenAI-compatible hosts that serve it (Groq, Together AI, SiliconFlow) through a
 * real gateway and the official `openai` client, against the OpenAI-format speech fake streaming binary audio in
 * several chunks: each host's path, credential and body as its docs say (Together's raw PCM and stream false,
 * SiliconFlow's model-qualified voices and gain), the bytes unchanged, the input's characters metered, and a
 * format or speed a host lacks refused before any I/O, or served by the model's next target.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startFakeSpeech, type FakeSpeech } from '../fakes/speech.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const config = (origin: string) => `
providers:
  openai: { baseUrl: ${origin}/openai/v1, apiKey: sk-upstream }
  groq: { baseUrl: ${origin}/groq/openai/v1, apiKey: groq-key }
  together-ai: { baseUrl: ${origin}/together/v1, apiKey: together-key }
  siliconflow: { baseUrl: ${origin}/siliconflow/v1, apiKey: sf-key, options: { speechGain: -2.5 } }
  mistral: { baseUrl: ${origin}/mistral/v1, apiKey: mistral-key }
models:
  - { id: groq-tts, provider: groq, upstreamModel: playai-tts, pricing: { characters: 50 } }
  - { id: together-tts, provider: together-ai, upstreamModel: cartesia/sonic-2 }
  - { id: sf-tts, provider: siliconflow, upstreamModel: FunAudioLLM/CosyVoice2-0.5B }
  - { id: mistral-chat, provider: mistral }
  - id: groq-then-openai
    targets: [{ provider: groq, upstreamModel: playai-tts }, { provider: openai, upstreamModel: tts-1 }]
pipelines:
  - name: speech
    routes: [/v1/audio/speech]
    plugins: [auth, { usage: { flushIntervalMs: 10 } }]
`;

describe('speech on the OpenAI-compatible catalogue', () => {
  let fake: FakeSpeech;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;
  const last = () => fake.calls.at(-1)!;
  const audio = () => Buffer.concat(fake.chunks);

  before(async () => {
    fake = await startFakeSpeech();
    fake.chunks = [Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.from([0x00, 0xc3, 0x28]), Buffer.from([0xa0, 0xa1, 0xfe]), Buffer.from([0xed, 0xfa, 0xce])];
    gw = await startTestGateway(config(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['tts'] } });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  type Params = Parameters<OpenAI['audio']['speech']['create']>[0];
  const speak = async (params: Partial<Params> & { model: string }, requestId?: string) => {
    const response = await client.audio.speech.create({ input: 'Hello there', voice: 'alloy', ...params } as Params, requestId ? { headers: { 'x-request-id': requestId } } : {});
    return { type: response.headers.get('content-type'), provider: response.headers.get('x-provider'), bytes: Buffer.from(await response.arrayBuffer()) };
  };

  const refused = async (body: Record<string, unknown>) => {
    const before = fake.calls.length;
    const answer = await postJson(`${gw.url}/v1/audio/speech`, { input: 'Hi', voice: 'alloy', ...body }, { authorization: `Bearer ${key}` });
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.error.code, 'CAPABILITY_NOT_SUPPORTED', JSON.stringify(answer.body));
    assert.equal(fake.calls.length, before, 'the refusal reached no provider');
    return String(answer.body.error.message);
  };

  test('groq: OpenAI\'s request at /openai/v1/audio/speech with its Bearer key; wav; speed 0.5 to 5', async () => {
    const requestId = randomUUID();
    const answer = await speak({ model: 'groq-tts', input: 'Grüße 😀!', voice: 'Fritz-PlayAI', response_format: 'wav', speed: 3.5 }, requestId);
    assert.equal(answer.type, 'audio/wav');
    assert.equal(answer.provider, 'groq');
    assert.deepEqual(answer.bytes, audio());
    assert.equal(last().path, '/groq/openai/v1/audio/speech');
    assert.equal(last().headers.authorization, 'Bearer groq-key');
    assert.deepEqual(last().body, { model: 'playai-tts', input: 'Grüße 😀!', voice: 'Fritz-PlayAI', response_format: 'wav', speed: 3.5 });
    const db = gw.gateway.services.db;
    await eventually(async () => {
      const rows = await db.query<{ characters: string; cost_usd: string; provider: string }>('SELECT characters, cost_usd, provider FROM usage_records WHERE request_id = $1', [requestId]);
      assert.deepEqual(rows.map((r) => [Number(r.characters), Number(r.cost_usd), r.provider]), [[8, 8 * 50 / 1e6, 'groq']]);
    });
  });

  test('groq: every format but wav (mp3, the default, included) and a speed below 0.5 are refused before any I/O, naming what it lacks', async () => {
    for (const format of ['mp3', 'opus', 'aac', 'flac', 'pcm']) {
      const message = await refused({ model: 'groq-tts', response_format: format });
      assert.match(message, new RegExp(`response_format ${format} .*gives wav\\)`));
    }
    assert.match(await refused({ model: 'groq-tts' }), /response_format mp3/);
    assert.match(await refused({ model: 'groq-tts', response_format: 'wav', speed: 0.25 }), /speed from 0\.5 to 5/);
  });

  test('a model whose first target lacks the format: the next target serves it', async () => {
    const answer = await speak({ model: 'groq-then-openai', response_format: 'opus' });
    assert.equal(answer.provider, 'openai');
    assert.equal(answer.type, 'audio/opus');
    assert.equal(last().path, '/openai/v1/audio/speech');
    const first = await speak({ model: 'groq-then-openai', response_format: 'wav' });
    assert.equal(first.provider, 'groq');
    assert.equal(last().path, '/groq/openai/v1/audio/speech');
  });

  test('together: mp3 and wav by name, always stream false; pcm is raw pcm_s16le at 24000 Hz, answered as audio/pcm', async () => {
    const answer = await speak({ model: 'together-tts', voice: 'laidback woman', response_format: 'mp3' });
    assert.equal(answer.type, 'audio/mpeg');
    assert.equal(last().path, '/together/v1/audio/speech');
    assert.equal(last().headers.authorization, 'Bearer together-key');
    assert.deepEqual(last().body, { model: 'cartesia/sonic-2', input: 'Hello there', voice: 'laidback woman', response_format: 'mp3', stream: false });
    await speak({ model: 'together-tts', response_format: 'wav', speed: 1 });
    assert.deepEqual(last().body, { model: 'cartesia/sonic-2', input: 'Hello there', voice: 'alloy', response_format: 'wav', stream: false }, 'speed 1 is the default: not sent');
    // The fake names no type for `raw` (application/octet-stream): the caller gets pcm's.
    const pcm = await speak({ model: 'together-tts', response_format: 'pcm' });
    assert.equal(pcm.type, 'audio/pcm');
    assert.deepEqual(pcm.bytes, audio());
    assert.deepEqual(last().body, { model: 'cartesia/sonic-2', input: 'Hello there', voice: 'alloy', response_format: 'raw', response_encoding: 'pcm_s16le', sample_rate: 24000, stream: false });
  });

  test('together: opus, aac, flac and any speed other than 1 are refused (it documents no speed)', async () => {
    for (const format of ['opus', 'aac', 'flac']) assert.match(await refused({ model: 'together-tts', response_format: format }), new RegExp(`response_format ${format}`));
    assert.match(await refused({ model: 'together-tts', speed: 1.5 }), /no speed other than 1/);
  });

  test('siliconflow: a bare voice is the model\'s own (model:voice), an uploaded one passes; gain from options; pcm at 24000 Hz', async () => {
    const answer = await speak({ model: 'sf-tts', voice: 'alex', response_format: 'opus', speed: 0.25 });
    assert.equal(answer.type, 'audio/opus');
    assert.deepEqual(answer.bytes, audio());
    assert.equal(last().path, '/siliconflow/v1/audio/speech');
    assert.equal(last().headers.authorization, 'Bearer sf-key');
    assert.deepEqual(last().body, { model: 'FunAudioLLM/CosyVoice2-0.5B', input: 'Hello there', voice: 'FunAudioLLM/CosyVoice2-0.5B:alex', response_format: 'opus', speed: 0.25, gain: -2.5 });
    await speak({ model: 'sf-tts', voice: 'speech:my-voice:cm04pf7az00061413w7kz5qxs:mjtkgbyuunvtybnsvbxd', response_format: 'pcm' });
    assert.deepEqual(last().body, {
      model: 'FunAudioLLM/CosyVoice2-0.5B', input: 'Hello there', voice: 'speech:my-voice:cm04pf7az00061413w7kz5qxs:mjtkgbyuunvtybnsvbxd', response_format: 'pcm', sample_rate: 24000, gain: -2.5,
    });
    for (const format of ['aac', 'flac']) assert.match(await refused({ model: 'sf-tts', response_format: format }), /mp3, opus, wav, pcm/);
  });

  test('a provider without speech is refused before any I/O', async () => {
    const message = await refused({ model: 'mistral-chat' });
    assert.match(message, /mistral/);
  });
});
