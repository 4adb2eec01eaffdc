/**
 * Audio file_url through a real gateway: the gateway fetches the URL with the outbound rules (loopback refused
 * unless allow-listed, every redirect checked again, 10 MB), names the audio from the URL or its Content-Type,
 * and sends it to the provider (an OpenAI-format fake) as if it had been uploaded.
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startFakeAudio, type FakeAudio } from '../fakes/audio.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/** A PCM WAV header and silence: 16 kHz, 16-bit, mono. */
function wav(seconds: number): Buffer {
  const data = Math.round(seconds * 16_000) * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(16_000, 24);
  header.writeUInt32LE(32_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data, 40);
  return Buffer.concat([header, Buffer.alloc(data)]);
}

const ELEVEN_MB = 11 * 1024 * 1024;

/** Where the audio lives: a loopback file server whose routes say what it answers. */
async function startAudioHost(): Promise<{ origin: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const routes: Record<string, (res: ServerResponse) => void> = {
    '/files/recording.wav': (res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(wav(1)),
    '/files/clip': (res) => res.writeHead(200, { 'content-type': 'audio/mpeg; charset=binary' }).end(wav(1)),
    '/files/moved': (res) => res.writeHead(302, { location: '/files/recording.wav' }).end(),
    '/files/metadata': (res) => res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/audio.wav' }).end(),
    '/files/big.wav': (res) => res.writeHead(200, { 'content-type': 'audio/wav' }).end(Buffer.alloc(ELEVEN_MB, 1)),
    '/files/streamed-big.wav': (res) => {
      // No Content-Length: the gateway counts while reading.
      res.writeHead(200, { 'content-type': 'audio/wav', 'transfer-encoding': 'chunked' });
      const chunk = Buffer.alloc(1024 * 1024, 1);
      let sent = 0;
      const more = () => { while (sent < 11 && res.write(chunk)) sent++; if (sent < 11) res.once('drain', () => { sent++; more(); }); else res.end(); };
      more();
    },
  };
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const route = routes[req.url ?? ''];
    if (route) route(res);
    else res.writeHead(404).end('no such file');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

const config = (origin: string, outbound: string) => `
providers:
  openai: { baseUrl: ${origin}/v1, apiKey: sk-upstream }
models:
  - id: whisper
    provider: openai
    upstreamModel: whisper-1
${outbound}
pipelines:
  - name: audio
    routes: [/v1/audio/transcriptions, /v1/audio/translations]
    plugins: [auth]
`;

describe('audio file_url', () => {
  let fake: FakeAudio;
  let host: Awaited<ReturnType<typeof startAudioHost>>;
  let strict: TestGateway;
  let allowing: TestGateway;
  let strictKey: string;
  let key: string;
  const last = () => fake.requests.at(-1)!;

  before(async () => {
    fake = await startFakeAudio();
    host = await startAudioHost();
    strict = await startTestGateway(config(fake.origin, ''));
    allowing = await startTestGateway(config(fake.origin, 'outbound: { allowHttp: true, allowedAddresses: [127.0.0.1] }'));
    strictKey = await strict.createKey({ scopes: { capabilities: ['audio'] } });
    key = await allowing.createKey({ scopes: { capabilities: ['audio'] } });
  });
  after(async () => {
    await strict?.close();
    await allowing?.close();
    await host?.close();
    await fake?.close();
  });

  const transcribe = (gw: TestGateway, apiKey: string, body: Record<string, unknown>, path = '/v1/audio/transcriptions') =>
    postJson(`${gw.url}${path}`, { model: 'whisper', ...body }, { authorization: `Bearer ${apiKey}` });

  test('a loopback URL is refused by default, naming why, and nothing is fetched', async () => {
    const hits = host.hits.length;
    const requests = fake.requests.length;
    for (const url of [`${host.origin}/files/recording.wav`, `https://127.0.0.1:${new URL(host.origin).port}/files/recording.wav`]) {
      const response = await transcribe(strict, strictKey, { file_url: url });
      assert.equal(response.status, 400, JSON.stringify(response.body));
      assert.equal(response.body.error.code, 'VALIDATION_ERROR');
      assert.equal(response.body.error.details[0].path, '/file_url');
      assert.match(response.body.error.details[0].message, /^refused: /);
    }
    assert.match((await transcribe(strict, strictKey, { file_url: `https://127.0.0.1/a.wav` })).body.error.message, /127\.0\.0\.1 is private, loopback, link-local/);
    assert.equal(host.hits.length, hits, 'the URL was never fetched');
    assert.equal(fake.requests.length, requests, 'nothing reached the provider');
  });

  test('allow-listed (with allowHttp): the audio reaches the provider, named from the URL', async () => {
    const response = await transcribe(allowing, key, { file_url: `${host.origin}/files/recording.wav`, language: 'fr' });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.text, 'Bonjour, comment allez-vous ?');
    assert.equal(last().path, '/v1/audio/transcriptions');
    assert.equal(last().fields.model, 'whisper-1');
    assert.equal(last().file!.filename, 'recording.wav');
    assert.equal(last().file!.mimeType, 'audio/wav', 'octet-stream gives way to the type the bytes show');
    assert.equal(last().file!.bytes, wav(1).length);
  });

  test('a path without an extension is named from the Content-Type; a redirect on the allowed host is followed', async () => {
    const clip = await transcribe(allowing, key, { file_url: `${host.origin}/files/clip` }, '/v1/audio/translations');
    assert.equal(clip.status, 200, JSON.stringify(clip.body));
    assert.equal(last().path, '/v1/audio/translations');
    assert.equal(last().file!.filename, 'clip.mp3');
    assert.equal(last().file!.mimeType, 'audio/mpeg');
    const moved = await transcribe(allowing, key, { file_url: `${host.origin}/files/moved` });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal(last().file!.filename, 'recording.wav');
  });

  test('a redirect to a link-local address is refused', async () => {
    const requests = fake.requests.length;
    const response = await transcribe(allowing, key, { file_url: `${host.origin}/files/metadata` });
    assert.equal(response.status, 400, JSON.stringify(response.body));
    assert.equal(response.body.error.code, 'VALIDATION_ERROR');
    assert.match(response.body.error.details[0].message, /^refused: the address 169\.254\.169\.254 is private, loopback, link-local/);
    assert.equal(fake.requests.length, requests);
  });

  test('11 MB at the URL is 413, with or without Content-Length', async () => {
    const requests = fake.requests.length;
    for (const path of ['/files/big.wav', '/files/streamed-big.wav']) {
      const response = await transcribe(allowing, key, { file_url: `${host.origin}${path}` });
      assert.equal(response.status, 413, `${path}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.error.code, 'PAYLOAD_TOO_LARGE');
    }
    assert.equal(fake.requests.length, requests);
  });

  test('an error status at the URL is 400 naming it; file and file_url together are refused', async () => {
    const missing = await transcribe(allowing, key, { file_url: `${host.origin}/files/gone.wav` });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.code, 'VALIDATION_ERROR');
    assert.equal(missing.body.error.details[0].message, 'could not be fetched: the URL answered HTTP 404');
    const both = await transcribe(allowing, key, { file_url: `${host.origin}/files/recording.wav`, file: wav(1).toString('base64') });
    assert.equal(both.status, 400);
    assert.equal(both.body.error.details[0].message, 'exactly one of file and file_url is required');
  });
});
