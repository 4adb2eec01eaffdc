/**
 * Transcription and translation on the OpenAI-compatible catalogue, through a gateway built in-process against the
 * OpenAI-format audio fake: each host's path, credential and form fields as its docs say, its answer in its own
 * shape where it differs (Mistral, json-only hosts), audio seconds from the host's duration or the file's own, and
 * refusals before any I/O (a field a host does not take, a host or a task without audio).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { openAiCompatibleProviders } from '../../providers/openai-compatible/index.ts';
import { fireworksAudioBaseUrl } from '../../providers/openai-compatible/transcription.ts';
import { startFakeAudio, type FakeAudio } from '../fakes/audio.ts';
import { catalogueRows } from '../helpers/catalogue.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { wav } from '../helpers/wav.ts';

const config = (origin: string) => `
providers:
  mistral: { baseUrl: ${origin}/mistral/v1, apiKey: mistral-key }
  groq: { baseUrl: ${origin}/groq/openai/v1, apiKey: groq-key }
  together-ai: { baseUrl: ${origin}/together/v1, apiKey: together-key }
  fireworks-ai:
    baseUrl: ${origin}/fireworks/inference/v1
    apiKey: fw-key
    options: { audioBaseUrl: '${origin}/fireworks-audio/v1/' }
  sambanova: { baseUrl: ${origin}/sambanova/v1, apiKey: samba-key }
  deepinfra: { baseUrl: ${origin}/deepinfra/v1/openai, apiKey: di-key }
  siliconflow: { baseUrl: ${origin}/siliconflow/v1, apiKey: sf-key }
  vllm: { baseUrl: ${origin}/vllm/v1 }
  deepseek: { baseUrl: ${origin}/deepseek, apiKey: ds-key }
models:
  - { id: voxtral, provider: mistral, upstreamModel: voxtral-mini-latest }
  - { id: groq-whisper, provider: groq, upstreamModel: whisper-large-v3 }
  - { id: together-whisper, provider: together-ai, upstreamModel: openai/whisper-large-v3 }
  - { id: fireworks-whisper, provider: fireworks-ai, upstreamModel: whisper-v3-turbo }
  - { id: samba-whisper, provider: sambanova, upstreamModel: Whisper-Large-v3 }
  - { id: deepinfra-whisper, provider: deepinfra, upstreamModel: openai/whisper-large-v3-turbo }
  - { id: sensevoice, provider: siliconflow, upstreamModel: FunAudioLLM/SenseVoiceSmall }
  - { id: vllm-whisper, provider: vllm, upstreamModel: openai/whisper-large-v3-turbo }
  - { id: deepseek-chat, provider: deepseek }
pipelines:
  - name: audio
    routes: [/v1/audio/transcriptions, /v1/audio/translations]
    plugins: [auth]
`;

/** The whisper hosts answering verbose_json: [model, path the fake saw, credential]. */
const VERBOSE: Array<[string, string, string | undefined]> = [
  ['groq-whisper', '/groq/openai/v1/audio/transcriptions', 'Bearer groq-key'],
  ['fireworks-whisper', '/fireworks-audio/v1/audio/transcriptions', 'Bearer fw-key'],
  ['deepinfra-whisper', '/deepinfra/v1/openai/audio/transcriptions', 'Bearer di-key'],
  ['vllm-whisper', '/vllm/v1/audio/transcriptions', undefined],
];

describe('audio on the OpenAI-compatible catalogue', () => {
  let fake: FakeAudio;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;
  const last = () => fake.requests.at(-1)!;
  const upstream = (model: string) => model.replace(/-whisper$/, '');

  before(async () => {
    fake = await startFakeAudio();
    gw = await startTestGateway(config(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['audio'] } });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('the catalogue entries declaring transcription and translation are exactly those PROVIDERS.md marks s and x', () => {
    const rows = catalogueRows().filter((row) => row.family === 'openai-compatible');
    for (const [letter, task] of [['s', 'transcription'], ['x', 'translation']] as const) {
      const marked = rows.filter((row) => row.modalities.includes(letter)).map((row) => row.slug).sort();
      const declaring = openAiCompatibleProviders.filter((p) => p.capabilities[task] && p.transcription).map((p) => p.slug).sort();
      assert.deepEqual(declaring, marked, task);
    }
    assert.deepEqual(openAiCompatibleProviders.filter((p) => p.capabilities.translation).map((p) => p.slug).sort(), ['groq', 'together-ai', 'vllm']);
  });

  for (const [model, path, credential] of VERBOSE) {
    test(`${upstream(model)}: OpenAI's form at its path, verbose_json asked for, its duration metered`, async () => {
      fake.duration = 3.2;
      const answer = await client.audio.transcriptions.create({ model, file: await toFile(wav(1), 'hello.wav'), language: 'fr', prompt: 'Bonjour', temperature: 0.1, response_format: 'verbose_json' });
      assert.equal(answer.text, 'Bonjour, comment allez-vous ?');
      assert.equal(answer.duration, 3.2, 'the host\'s duration, not the file\'s');
      assert.equal(answer.segments!.length, 2);
      const sent = last();
      assert.equal(sent.path, path);
      assert.equal(sent.headers.authorization, credential);
      const upstreamModel = model === 'groq-whisper' ? 'whisper-large-v3' : model === 'fireworks-whisper' ? 'whisper-v3-turbo' : 'openai/whisper-large-v3-turbo';
      assert.deepEqual(sent.fields, { model: upstreamModel, response_format: 'verbose_json', language: 'fr', prompt: 'Bonjour', temperature: '0.1' });
      assert.equal(sent.file!.filename, 'hello.wav');
      assert.equal(sent.file!.bytes, wav(1).length);
    });
  }

  test('together-ai: no language is sent as auto (Together defaults to en); a named one as named', async () => {
    await client.audio.transcriptions.create({ model: 'together-whisper', file: await toFile(wav(1), 'a.wav') });
    assert.equal(last().path, '/together/v1/audio/transcriptions');
    assert.equal(last().headers.authorization, 'Bearer together-key');
    assert.deepEqual(last().fields, { model: 'openai/whisper-large-v3', response_format: 'verbose_json', language: 'auto' });
    await client.audio.transcriptions.create({ model: 'together-whisper', file: await toFile(wav(1), 'a.wav'), language: 'de' });
    assert.equal(last().fields.language, 'de');
  });

  for (const [model, prefix, credential] of [['groq-whisper', '/groq/openai/v1', 'Bearer groq-key'], ['together-whisper', '/together/v1', 'Bearer together-key'], ['vllm-whisper', '/vllm/v1', undefined]] as const) {
    test(`${upstream(model)}: translations at /audio/translations, without language`, async () => {
      const answer = await client.audio.translations.create({ model, file: await toFile(wav(1), 'bonjour.wav'), prompt: 'Hi' });
      assert.equal(answer.text, 'Hello, how are you?');
      assert.equal(last().path, `${prefix}/audio/translations`);
      assert.equal(last().headers.authorization, credential);
      assert.equal(last().fields.language, undefined);
      assert.equal(last().fields.response_format, 'verbose_json');
      assert.equal(last().fields.prompt, 'Hi');
    });
  }

  test('mistral: no response_format; segments asked for without language (Mistral takes one or the other); its audio seconds metered', async () => {
    fake.respond = (request) => ({
      model: request.fields.model, text: 'Bonjour tout le monde', language: request.fields.language ?? 'fr',
      segments: request.fields.timestamp_granularities === 'segment' ? [{ text: 'Bonjour', start: 0, end: 0.8, type: 'transcription_segment' }, { text: ' tout le monde', start: 0.8, end: 1.9, type: 'transcription_segment' }] : [],
      usage: { prompt_audio_seconds: 2, prompt_tokens: 40, completion_tokens: 6, total_tokens: 46 },
    });
    try {
      const verbose = await client.audio.transcriptions.create({ model: 'voxtral', file: await toFile(wav(1), 'a.wav'), temperature: 0, response_format: 'verbose_json' });
      assert.equal(last().path, '/mistral/v1/audio/transcriptions');
      assert.equal(last().headers.authorization, 'Bearer mistral-key');
      assert.deepEqual(last().fields, { model: 'voxtral-mini-latest', temperature: '0', timestamp_granularities: 'segment' });
      assert.equal(verbose.text, 'Bonjour tout le monde');
      assert.deepEqual(verbose.segments!.map((s) => [s.id, s.start, s.end]), [[0, 0, 0.8], [1, 0.8, 1.9]]);
      assert.equal(verbose.duration, 2, 'usage.prompt_audio_seconds, not the file\'s 1 s');
      const named = await postJson(`${gw.url}/v1/audio/transcriptions`, { model: 'voxtral', file: wav(1).toString('base64'), language: 'fr' }, { authorization: `Bearer ${key}` });
      assert.equal(named.status, 200, JSON.stringify(named.body));
      assert.deepEqual(last().fields, { model: 'voxtral-mini-latest', language: 'fr' });
      assert.deepEqual(named.body, { text: 'Bonjour tout le monde', usage: { type: 'duration', seconds: 2 } });
    } finally {
      fake.respond = undefined;
    }
  });

  test('json-only hosts: sambanova is asked for json, siliconflow for nothing but model and file; the file\'s own duration is metered', async () => {
    fake.respond = () => ({ text: 'Bonjour' });
    try {
      const samba = await postJson(`${gw.url}/v1/audio/transcriptions`, { model: 'samba-whisper', file: wav(2.5).toString('base64'), language: 'fr' }, { authorization: `Bearer ${key}` });
      assert.equal(samba.status, 200, JSON.stringify(samba.body));
      assert.deepEqual(samba.body, { text: 'Bonjour', usage: { type: 'duration', seconds: 2.5 } });
      assert.equal(last().path, '/sambanova/v1/audio/transcriptions');
      assert.equal(last().headers.authorization, 'Bearer samba-key');
      assert.deepEqual(last().fields, { model: 'Whisper-Large-v3', response_format: 'json', language: 'fr' });
      const sense = await client.audio.transcriptions.create({ model: 'sensevoice', file: await toFile(wav(1.5), 'a.wav'), response_format: 'verbose_json' });
      assert.equal(sense.text, 'Bonjour');
      assert.equal(sense.duration, 1.5);
      assert.equal(last().path, '/siliconflow/v1/audio/transcriptions');
      assert.equal(last().headers.authorization, 'Bearer sf-key');
      assert.deepEqual(last().fields, { model: 'FunAudioLLM/SenseVoiceSmall' });
    } finally {
      fake.respond = undefined;
    }
  });

  test('fireworks-ai: audio goes to Fireworks\' Whisper hosts by default, one per model, not the inference base URL', () => {
    assert.equal(fireworksAudioBaseUrl('whisper-v3-turbo'), 'https://audio-turbo.us-virginia-1.direct.fireworks.ai/v1');
    assert.equal(fireworksAudioBaseUrl('whisper-v3'), 'https://audio-prod.us-virginia-1.direct.fireworks.ai/v1');
  });

  test('refused with 400 before any I/O: fields a host does not take, a host without audio, a task a host lacks', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const before = fake.requests.length;
    const file = wav(1).toString('base64');
    for (const [route, body, parameter] of [
      ['transcriptions', { model: 'voxtral', file, prompt: 'names' }, 'prompt'],
      ['transcriptions', { model: 'sensevoice', file, language: 'zh' }, 'language'],
      ['transcriptions', { model: 'sensevoice', file, temperature: 0.5 }, 'temperature'],
      ['transcriptions', { model: 'deepseek-chat', file }, undefined],
      ['translations', { model: 'voxtral', file }, undefined],
      ['translations', { model: 'samba-whisper', file }, undefined],
      ['translations', { model: 'fireworks-whisper', file }, undefined],
    ] as const) {
      const refused = await postJson(`${gw.url}/v1/audio/${route}`, body, auth);
      assert.equal(refused.status, 400, `${route} ${JSON.stringify(body).slice(0, 60)}`);
      assert.equal(refused.body.error.code, 'CAPABILITY_NOT_SUPPORTED', JSON.stringify(refused.body));
      if (parameter) assert.match(refused.body.error.message, new RegExp(parameter));
    }
    assert.equal(fake.requests.length, before, 'no refusal reached a host');
  });
});
