/**
 * Replicate's speech models through a real gateway against a loopback Replicate (test/fakes/replicate-media.ts):
 * Whisper transcription with the official client's multipart upload (the audio sent on as a data: URI inside the
 * prediction, the prediction polled starting -> processing -> succeeded, its segments rendered), and MiniMax
 * text to speech (the prediction polled, then its output file fetched without the credential and streamed to the
 * caller). Failed predictions, refusals before any call, and the metering of both.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { REPLICATE_MEDIA_KEY, startFakeReplicateMedia, type FakeReplicateMedia } from '../fakes/replicate-media.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { wav } from '../helpers/wav.ts';

const WHISPER_VERSION = '8099696689d249cf8b122d833c36ac3f75505c666a395ca40ef26f68e7d3d16e';
const WALK = ['starting', 'processing', 'processing', 'processing', 'succeeded'];

const config = (origin: string) => `
routing:
  retries: 0
upstream:
  breaker:
    volumeThreshold: 1000
providers:
  replicate:
    baseUrl: ${origin}/v1
    apiKey: ${REPLICATE_MEDIA_KEY}
    options:
      pollIntervalMs: 1
      maxPollIntervalMs: 2
      modelInput:
        minimax/speech-02-turbo: { emotion: calm, text: ignored }
models:
  - id: whisper
    provider: replicate
    upstreamModel: openai/whisper:${WHISPER_VERSION}
    pricing: { audioSecond: 0.0001 }
  - id: minimax-tts
    provider: replicate
    upstreamModel: minimax/speech-02-turbo
    pricing: { characters: 10 }
pipelines:
  - name: audio
    routes: [/v1/audio/transcriptions, /v1/audio/translations, /v1/audio/speech]
    plugins: [auth, { usage: { flushIntervalMs: 10 } }]
`;

describe('replicate speech models through the gateway', () => {
  let fake: FakeReplicateMedia;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;
  let seen = 0;
  const sent = () => fake.requests.slice(seen);

  before(async () => {
    fake = await startFakeReplicateMedia();
    fake.versions[WHISPER_VERSION] = 'openai/whisper';
    gw = await startTestGateway(config(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['audio', 'tts'] } });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });
  beforeEach(() => {
    seen = fake.requests.length;
    delete fake.failWith;
  });

  test('whisper: the form\'s audio becomes a data: URI in a versioned prediction, polled until it succeeds; segments rendered', async () => {
    const answer = await client.audio.transcriptions.create({
      model: 'whisper', file: await toFile(wav(2), 'hello.wav', { type: 'audio/wav' }), language: 'en', prompt: 'Greetings.', temperature: 0.2, response_format: 'verbose_json',
    });
    assert.equal(answer.text, 'Hello there. How are you?');
    assert.equal(answer.language, 'english');
    assert.deepEqual(answer.segments!.map((s) => [s.id, s.start, s.end, s.text]), [[0, 0, 0.9, 'Hello there.'], [1, 1.1, 2, 'How are you?']]);
    const [create, ...polls] = sent();
    assert.deepEqual([create!.method, create!.path], ['POST', '/v1/predictions']);
    assert.equal(create!.json.version, WHISPER_VERSION);
    assert.deepEqual(create!.json.input, {
      audio: `data:audio/wav;base64,${wav(2).toString('base64')}`, transcription: 'plain text', translate: false, language: 'en', temperature: 0.2, initial_prompt: 'Greetings.',
    });
    assert.equal(create!.headers.prefer, 'wait=60');
    assert.equal(polls.length, 4);
    assert.ok(polls.every((p) => p.method === 'GET' && /^\/v1\/predictions\/rm\d+media$/.test(p.path)));
    assert.ok(sent().every((r) => r.headers.authorization === `Bearer ${REPLICATE_MEDIA_KEY}`));
    assert.deepEqual(fake.walks.get(polls[0]!.path.split('/').pop()!), WALK);

    const srt = await client.audio.transcriptions.create({ model: 'whisper', file: await toFile(wav(2), 'hello.wav'), response_format: 'srt' });
    assert.equal(String(srt), '1\n00:00:00,000 --> 00:00:00,900\nHello there.\n\n2\n00:00:01,100 --> 00:00:02,000\nHow are you?\n');
    assert.equal(fake.requests.filter((r) => r.method === 'POST').at(-1)!.json.input.language, undefined, 'no language: Whisper detects it');
  });

  test('whisper: a failed prediction is a 502 with the model\'s error; translations are not declared (refused before any call)', async () => {
    fake.failWith = 'Audio file could not be decoded';
    const failed = await postJson(`${gw.url}/v1/audio/transcriptions`, { model: 'whisper', file: wav(1).toString('base64') }, { authorization: `Bearer ${key}` });
    assert.equal(failed.status, 502, JSON.stringify(failed.body));
    assert.equal(failed.body.error.code, 'UPSTREAM_ERROR');
    assert.match(failed.body.error.message, /failed: Audio file could not be decoded/);
    const before = fake.requests.length;
    const translation = await postJson(`${gw.url}/v1/audio/translations`, { model: 'whisper', file: wav(1).toString('base64') }, { authorization: `Bearer ${key}` });
    assert.equal(translation.status, 400);
    assert.equal(translation.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.equal(fake.requests.length, before);
  });

  test('speech: a MiniMax prediction polled, then its output file fetched without the credential and streamed to the caller', async () => {
    const response = await client.audio.speech.create({ model: 'minimax-tts', input: 'Hello there!', voice: 'Wise_Woman', speed: 1.5 });
    assert.equal(response.headers.get('content-type'), 'audio/mpeg');
    assert.equal(response.headers.get('x-provider'), 'replicate');
    const audio = Buffer.from(await response.arrayBuffer());
    const [create, ...rest] = sent();
    assert.deepEqual([create!.method, create!.path], ['POST', '/v1/models/minimax/speech-02-turbo/predictions']);
    assert.deepEqual(create!.json, { input: { emotion: 'calm', text: 'Hello there!', voice_id: 'Wise_Woman', audio_format: 'mp3', speed: 1.5 } }, 'the operator\'s modelInput under the mapped fields');
    assert.equal(create!.headers.prefer, 'wait=60');
    const file = rest.at(-1)!;
    const id = rest[0]!.path.split('/').pop()!;
    assert.equal(file.path, `/files/${id}.mp3`);
    assert.equal(file.headers.authorization, undefined, 'no credential to the file host');
    assert.deepEqual(audio, fake.fileBytes(`${id}.mp3`));
    assert.deepEqual(fake.walks.get(id), WALK);
    assert.ok(rest.slice(0, -1).every((p) => p.path === `/v1/predictions/${id}` && p.headers.authorization === `Bearer ${REPLICATE_MEDIA_KEY}`));

    const wavAnswer = await client.audio.speech.create({ model: 'minimax-tts', input: 'Hi', voice: 'Calm_Woman', response_format: 'wav' });
    assert.equal(wavAnswer.headers.get('content-type'), 'audio/wav');
    await wavAnswer.arrayBuffer();
    assert.equal(fake.requests.filter((r) => r.method === 'POST').at(-1)!.json.input.audio_format, 'wav');
  });

  test('speech: formats and speeds the model cannot give are refused before any call; a failed prediction is a 502', async () => {
    const auth = { authorization: `Bearer ${key}` };
    for (const body of [{ response_format: 'opus' }, { response_format: 'aac' }, { speed: 3 }, { speed: 0.25 }]) {
      const refused = await postJson(`${gw.url}/v1/audio/speech`, { model: 'minimax-tts', input: 'Hi', voice: 'Wise_Woman', ...body }, auth);
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.equal(refused.body.error.code, 'CAPABILITY_NOT_SUPPORTED', JSON.stringify(refused.body));
    }
    assert.equal(sent().length, 0);
    fake.failWith = 'voice_id Nobody does not exist';
    const failed = await postJson(`${gw.url}/v1/audio/speech`, { model: 'minimax-tts', input: 'Hi', voice: 'Nobody' }, auth);
    assert.equal(failed.status, 502);
    assert.match(failed.body.error.message, /voice_id Nobody does not exist/);
    assert.ok(sent().every((r) => !r.path.startsWith('/files/')), 'no file fetched');
  });

  test('metering: the transcription by its last segment\'s end, the speech by its characters', async () => {
    const start = Date.now();
    await client.audio.transcriptions.create({ model: 'whisper', file: await toFile(wav(2), 'hello.wav'), response_format: 'text' });
    await (await client.audio.speech.create({ model: 'minimax-tts', input: 'Hello', voice: 'Wise_Woman' })).arrayBuffer();
    const db = gw.gateway.services.db;
    await eventually(async () => {
      const rows = await db.query<{ model: string; audio_seconds: number; characters: string; provider: string }>(
        `SELECT model, audio_seconds, characters, provider FROM usage_records WHERE created_at >= to_timestamp($1::double precision / 1000) AND status = 'completed' ORDER BY created_at`, [start]);
      assert.deepEqual(rows.map((r) => [r.model, r.provider, Number(r.audio_seconds), Number(r.characters)]), [['whisper', 'replicate', 2, 0], ['minimax-tts', 'replicate', 0, 5]]);
    });
  });
});
