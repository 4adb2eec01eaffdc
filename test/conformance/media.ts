/**
 * The conformance kit for transcription, translation, speech and images: every translator of these modalities
 * runs the same fixtures through a real gateway and the official `openai` client, against a loopback fake that
 * speaks the provider's wire format (media-wire.ts). Multi-step providers (an upload, a job to poll, a result
 * file to fetch) run them unchanged: the wire answers each step.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { SPEECH_CONTENT_TYPES, type SpeechFormat } from '../../core/canonical/audio.ts';
import type { ProviderDefinition } from '../../core/dispatch/provider.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { recordsOf } from '../helpers/usage.ts';
import { ERROR_CASES } from './fixtures.ts';
import {
  startMediaFake, type ImageSummary, type ImageWire, type MediaAnswer, type MediaFake, type MediaRequest, type ScriptedTranscript,
  type SpeechSummary, type SpeechWire, type TranscriptionSummary, type TranscriptionWire,
} from './media-wire.ts';

export type * from './media-wire.ts';

export interface MediaTarget {
  provider: ProviderDefinition;
  /** The value under `providers.<slug>` in pipelines.yaml, pointing at `baseUrl` (the fake's origin). */
  providerBlock(baseUrl: string): string;
  credential: string;
  env?: NodeJS.ProcessEnv;
  /** `language: false`: the provider takes no language (the caller's is refused), so the fixtures send none. */
  transcription?: { wire: TranscriptionWire; model: string; language?: boolean };
  /**
   * `format`: the one the fixture asks for (default mp3, OpenAI's default), for a provider that documents no mp3;
   * the same bytes are expected whatever the format, as the kit checks their passage, not their encoding.
   */
  speech?: { wire: SpeechWire; model: string; voice?: string; format?: SpeechFormat };
  image?: { wire: ImageWire; model: string };
}

/** One second of 8 kHz 8-bit mono silence: a real WAV, whose duration the gateway can read. */
export const WAV = (() => {
  const data = Buffer.alloc(8000, 0x80);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0); header.writeUInt32LE(36 + data.length, 4); header.write('WAVE', 8); header.write('fmt ', 12);
  header.writeUInt32LE(16, 16); header.writeUInt16LE(1, 20); header.writeUInt16LE(1, 22); header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(8000, 28); header.writeUInt16LE(1, 32); header.writeUInt16LE(8, 34); header.write('data', 36); header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
})();

export const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
export const SPEECH_CHUNKS = [Buffer.from('ID3\x04-first-', 'latin1'), Buffer.from('-second-', 'latin1'), Buffer.from('-third', 'latin1')];

export const SCRIPT: ScriptedTranscript = {
  text: 'Hello there. How are you?', language: 'en', duration: 2.5,
  segments: [{ start: 0, end: 1.2, text: 'Hello there.' }, { start: 1.2, end: 2.5, text: 'How are you?' }],
};

interface ApiErrorLike { status?: number; error?: { code?: string } }
const failure = (promise: Promise<unknown>) => promise.then(() => null, (err: unknown) => err as ApiErrorLike);

function merged<T>(requests: MediaRequest[], summarize: (req: MediaRequest) => Partial<T> | null): Partial<T> {
  return Object.assign({}, ...requests.map(summarize).filter((s) => s !== null)) as Partial<T>;
}

export function runMediaConformance(target: MediaTarget): void {
  const { provider, transcription, speech, image } = target;
  const modalities = [transcription && 'transcription', speech && 'speech', image && 'images'].filter(Boolean).join(', ');
  describe(`conformance: ${provider.slug} ${modalities}`, () => {
    let fake: MediaFake;
    let gw: TestGateway;
    let key: string;
    let client: OpenAI;
    let wire: { answer(req: MediaRequest, files: string): MediaAnswer; errorBody(status: number, message: string): MediaAnswer } | undefined;

    before(async () => {
      fake = await startMediaFake(() => wire!, { png: PNG, audio: () => Buffer.concat(SPEECH_CHUNKS) });
      const block = target.providerBlock(fake.origin).split('\n').map((line) => `    ${line}`).join('\n');
      const models = [
        transcription && `  - { id: kit-stt, provider: ${provider.slug}, upstreamModel: ${JSON.stringify(transcription.model)}, pricing: { audioSecond: 0.001 } }`,
        speech && `  - { id: kit-tts, provider: ${provider.slug}, upstreamModel: ${JSON.stringify(speech.model)}, pricing: { characters: 10 } }`,
        image && `  - { id: kit-image, provider: ${provider.slug}, upstreamModel: ${JSON.stringify(image.model)}, pricing: { image: 0.01 } }`,
      ].filter(Boolean);
      gw = await startTestGateway(`
upstream:
  headersTimeoutMs: 3000
routing:
  retries: 0
providers:
  ${provider.slug}:
${block}
models:
${models.join('\n')}
pipelines:
  - name: media
    routes: [/v1/audio/transcriptions, /v1/audio/translations, /v1/audio/speech, /v1/images/generations]
    plugins: [auth, { usage: { flushIntervalMs: 10 } }]
`, { env: target.env ?? {} });
      key = await gw.createKey({ scopes: { capabilities: ['audio', 'tts', 'images'] } });
      client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    });
    after(async () => {
      await gw?.close();
      await fake?.close();
    });

    /** Runs `call` and returns the provider requests it made; no credential reached the file host. */
    const calls = async <T>(run: () => Promise<T>): Promise<{ value: T; requests: MediaRequest[] }> => {
      const before = fake.requests.length;
      const files = fake.fileRequests.length;
      const value = await run();
      for (const req of fake.fileRequests.slice(files)) assert.equal(req.headers.authorization, undefined, 'a credential went to the file host');
      return { value, requests: fake.requests.slice(before) };
    };
    const errors = (name: string, arm: () => void, run: () => Promise<unknown>) => {
      for (const { status, expectStatus, expectCode } of ERROR_CASES) {
        test(`${name}: upstream ${status} -> ${expectStatus} ${expectCode}`, async () => {
          arm();
          fake.mode = { kind: 'error', status };
          const err = await failure(run());
          assert.equal(err?.status, expectStatus);
          assert.equal(err?.error?.code, expectCode);
        });
      }
    };

    if (transcription) {
      const w = transcription.wire;
      const arm = () => {
        wire = { answer: (req, files) => w.answer(req, SCRIPT, files), errorBody: (s, m) => w.errorBody(s, m) };
        fake.mode = { kind: 'transcribe', script: SCRIPT };
      };
      const file = () => toFile(WAV, 'hello.wav', { type: 'audio/wav' });
      // Without the provider's duration: the last segment's end, else the file's own (WAV is one second).
      const heard = w.reportsDuration !== false ? SCRIPT.duration : w.reportsSegments !== false ? SCRIPT.segments.at(-1)!.end : 1;

      test('transcription: json through the official client (multipart); the audio, model and language reach the provider', async () => {
        arm();
        const language = transcription.language === false ? {} : { language: 'en' };
        const { value, requests } = await calls(async () => client.audio.transcriptions.create({ file: await file(), model: 'kit-stt', ...language }));
        assert.equal(value.text, SCRIPT.text);
        w.assertAuth(requests[0]!, target.credential);
        const summary = merged<TranscriptionSummary>(requests, (r) => w.summarize(r));
        assert.equal(summary.model, transcription.model);
        assert.ok(summary.audio?.equals(WAV), 'the audio arrived byte for byte');
        assert.equal(summary.language ?? null, transcription.language === false ? null : 'en');
        assert.equal(summary.task ?? 'transcription', 'transcription');
      });

      test('transcription: verbose_json has the duration and the segments', async () => {
        arm();
        const verbose = await client.audio.transcriptions.create({ file: await file(), model: 'kit-stt', response_format: 'verbose_json' });
        assert.equal(verbose.text, SCRIPT.text);
        assert.equal(verbose.duration, heard);
        if (w.reportsSegments !== false) {
          assert.deepEqual(verbose.segments?.map((s) => [s.start, s.end, s.text.trim()]), SCRIPT.segments.map((s) => [s.start, s.end, s.text]));
        }
      });

      test('transcription: srt is rendered from the segments', async () => {
        arm();
        const srt = await client.audio.transcriptions.create({ file: await file(), model: 'kit-stt', response_format: 'srt' }) as unknown as string;
        if (w.reportsSegments === false) assert.match(srt, /Hello there/);
        else assert.match(srt, /^1\r?\n00:00:00,000 --> 00:00:01,200\r?\nHello there\.\r?\n/);
      });

      test('transcription: response_format text is metered by its audio seconds', async () => {
        arm();
        const requestId = `kit-stt-${provider.slug}-${Date.now()}`;
        const text = await client.audio.transcriptions.create({ file: await file(), model: 'kit-stt', response_format: 'text' }, { headers: { 'x-request-id': requestId } }) as unknown as string;
        assert.equal(text.trim(), SCRIPT.text);
        const [record] = await recordsOf(gw, requestId);
        assert.equal(Number(record!.audio_seconds), heard);
        assert.equal(Number(record!.cost_usd), Number((heard * 0.001).toFixed(12)));
      });

      if (provider.capabilities.translation) {
        test('translation: the provider is asked to translate', async () => {
          arm();
          const { value, requests } = await calls(async () => client.audio.translations.create({ file: await file(), model: 'kit-stt' }));
          assert.equal(value.text, SCRIPT.text);
          assert.equal(merged<TranscriptionSummary>(requests, (r) => w.summarize(r)).task, 'translation');
        });
      }
      errors('transcription', arm, async () => client.audio.transcriptions.create({ file: await file(), model: 'kit-stt' }));
    }

    if (speech) {
      const w = speech.wire;
      const arm = () => {
        wire = { answer: (req, files) => w.answer(req, SPEECH_CHUNKS, files), errorBody: (s, m) => w.errorBody(s, m) };
        fake.mode = { kind: 'speak', chunks: SPEECH_CHUNKS };
      };
      const voice = speech.voice ?? 'kit-voice';
      const format = speech.format ?? 'mp3';
      const asked = speech.format ? { response_format: format } : {};

      test(`speech: the official client gets the audio byte for byte, as ${format}; metered by characters`, async () => {
        arm();
        const requestId = `kit-tts-${provider.slug}-${Date.now()}`;
        const { value, requests } = await calls(async () => {
          const response = await client.audio.speech.create({ model: 'kit-tts', input: 'Hello, world!', voice, ...asked }, { headers: { 'x-request-id': requestId } });
          return { type: response.headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()) };
        });
        assert.equal(value.type, w.contentType?.(format) ?? SPEECH_CONTENT_TYPES[format]);
        assert.ok(value.bytes.equals(Buffer.concat(SPEECH_CHUNKS)), 'the audio arrived byte for byte');
        w.assertAuth(requests[0]!, target.credential);
        const heard = w.sendsVoice === false ? {} : { voice };
        assert.deepEqual(merged<SpeechSummary>(requests, (r) => w.summarize(r)), { model: speech.model, input: 'Hello, world!', ...heard, format });
        const [record] = await recordsOf(gw, requestId);
        assert.equal(Number(record!.characters), 13);
      });
      errors('speech', arm, async () => (await client.audio.speech.create({ model: 'kit-tts', input: 'Hi', voice, ...asked })).arrayBuffer());
    }

    if (image) {
      const w = image.wire;
      const arm = () => {
        wire = { answer: (req, files) => w.answer(req, PNG, files), errorBody: (s, m) => w.errorBody(s, m) };
        fake.mode = { kind: 'image', png: PNG };
      };
      const perCall = provider.capabilities.image?.maxImages ?? 10;
      const summaries = (requests: MediaRequest[]) => requests.map((r) => w.summarize(r)).filter((s): s is ImageSummary => s !== null);
      const bytesOf = async (url: string) => (url.startsWith('data:') ? Buffer.from(url.slice(url.indexOf(',') + 1), 'base64') : Buffer.from(await (await fetch(url)).arrayBuffer()));

      test('images: b64_json through the official client; model and prompt reach the provider', async () => {
        arm();
        const { value, requests } = await calls(() => client.images.generate({ model: 'kit-image', prompt: 'a red kite', response_format: 'b64_json' }));
        assert.equal(value.data?.length, 1);
        assert.ok(Buffer.from(value.data![0]!.b64_json!, 'base64').equals(PNG));
        w.assertAuth(requests[0]!, target.credential);
        assert.deepEqual(summaries(requests), [{ model: image.model, prompt: 'a red kite', n: 1 }]);
      });

      test('images: url gives an address whose content is the image', async () => {
        arm();
        const answer = await client.images.generate({ model: 'kit-image', prompt: 'a red kite', response_format: 'url' });
        assert.ok((await bytesOf(answer.data![0]!.url!)).equals(PNG));
      });

      test(`images: n past what one call makes (${perCall}) is split into calls; metered by the images made`, async () => {
        arm();
        const n = Math.min(perCall + 1, 10);
        const requestId = `kit-img-${provider.slug}-${Date.now()}`;
        const { value, requests } = await calls(() => client.images.generate({ model: 'kit-image', prompt: 'kites', n, response_format: 'b64_json' }, { headers: { 'x-request-id': requestId } }));
        assert.equal(value.data?.length, n);
        const asked = summaries(requests);
        assert.equal(asked.reduce((sum, s) => sum + s.n, 0), n);
        assert.ok(asked.every((s) => s.n <= perCall));
        const [record] = await recordsOf(gw, requestId);
        assert.equal(Number(record!.images), n);
        assert.equal(Number(record!.cost_usd), Number((n * 0.01).toFixed(12)));
      });
      errors('images', arm, () => client.images.generate({ model: 'kit-image', prompt: 'x' }));
    }
  });
}
