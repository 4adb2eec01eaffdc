/**
 * Vertex AI files as Cloud Storage objects: the chunked resumable upload plan on its own (Content-Range of every
 * kind of chunk, the session URI's origin, the final answer, a refused upload without a bucket), then through a
 * gateway against the fake Vertex + Cloud Storage: a 20 MiB upload by the openai client in 8 MiB chunks, an empty
 * file, a deletion, and an upload the client cuts, whose session is cancelled.
 */
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { PartsUploadPlan, ProviderTarget } from '../../core/dispatch/provider.ts';
import { resolveFile } from '../../core/store/files.ts';
import vertexAi from '../../providers/vertex-ai/index.ts';
import { contentRange, GCS_CHUNK_BYTES } from '../../providers/vertex-ai/files.ts';
import { startFakeVertex, VERTEX_BASE_PATH, type FakeVertex } from '../fakes/vertex.ts';
import { eventually } from '../helpers/eventually.ts';
import { parseConfig } from '../helpers/config.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const MiB = 1024 * 1024;
const target = (options: Record<string, unknown> = { gcsBucket: 'uploads' }): ProviderTarget => ({
  slug: 'vertex-ai', baseUrl: `https://us-central1-aiplatform.googleapis.com${VERTEX_BASE_PATH}`, apiKey: 'ya29.x', headers: {}, options, upstreamModel: '',
});
const planOf = (t = target(), bytes?: number) => vertexAi.files!.upload({ filename: 'in put.jsonl', mimeType: 'application/jsonl', purpose: 'batch', ...(bytes === undefined ? {} : { bytes }) }, t) as PartsUploadPlan;
const answer = (status: number, headers: Record<string, string> = {}, text = '') => ({ status, headers, text });
const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return 'no error';
};

describe('vertex-ai files: the upload plan', () => {
  test('chunks of 8 MiB (a multiple of 256 KiB); Content-Range open until the last, which names the total; an empty file bytes */0', () => {
    assert.equal(GCS_CHUNK_BYTES % (256 * 1024), 0);
    assert.equal(contentRange({ index: 0, offset: 0, bytes: 8 * MiB, last: false, total: null }), 'bytes 0-8388607/*');
    assert.equal(contentRange({ index: 1, offset: 8 * MiB, bytes: 8 * MiB, last: false, total: null }), 'bytes 8388608-16777215/*');
    assert.equal(contentRange({ index: 2, offset: 16 * MiB, bytes: 5, last: true, total: 16 * MiB + 5 }), 'bytes 16777216-16777220/16777221');
    assert.equal(contentRange({ index: 0, offset: 0, bytes: 0, last: true, total: 0 }), 'bytes */0');
  });

  test('the start: a resumable session in the bucket under the prefix, JSON metadata, the size when known', () => {
    const plan = planOf(target({ gcsBucket: 'uploads', storageUrl: 'https://storage.example/' }), 42);
    assert.equal(plan.kind, 'parts');
    assert.equal(plan.partBytes, GCS_CHUNK_BYTES);
    const url = new URL(plan.start.path);
    assert.equal(`${url.origin}${url.pathname}`, 'https://storage.example/upload/storage/v1/b/uploads/o');
    assert.equal(url.searchParams.get('uploadType'), 'resumable');
    assert.match(url.searchParams.get('name')!, /^aigw\/[0-9a-f-]{36}\/in put\.jsonl$/);
    assert.deepEqual([plan.start.method, plan.start.headers['x-upload-content-type'], plan.start.headers['x-upload-content-length']], ['POST', 'application/jsonl', '42']);
    assert.deepEqual(JSON.parse(plan.start.body!), { contentType: 'application/jsonl', metadata: { purpose: 'batch' } });
    assert.equal(planOf().start.headers['x-upload-content-length'], undefined, 'a streamed upload declares no size');
    assert.match(new URL(planOf(target({ gcsBucket: 'uploads', gcsPrefix: 'team/a/' })).start.path).searchParams.get('name')!, /^team\/a\/[0-9a-f-]{36}\//);
  });

  test('chunks and the cancel go to the session URI only when it is on the storage URL\'s origin', () => {
    const plan = planOf();
    const session = answer(200, { location: 'https://storage.googleapis.com/upload/storage/v1/b/uploads/o?uploadType=resumable&upload_id=abc' });
    const part = plan.part(session, { index: 0, offset: 0, bytes: 10, last: true, total: 10 });
    assert.deepEqual([part.method, part.path, part.headers['content-range'], part.headers['content-type']], ['PUT', session.headers.location, 'bytes 0-9/10', undefined]);
    assert.deepEqual(plan.continueStatuses, [308]);
    assert.equal(plan.complete, undefined, 'the last chunk ends the upload');
    const abort = plan.abort!(session);
    assert.deepEqual([abort.method, abort.path], ['DELETE', session.headers.location]);
    for (const location of ['https://attacker.example/collect', 'not a url', undefined]) {
      const bad = answer(200, location === undefined ? {} : { location });
      assert.equal(code(() => plan.part(bad, { index: 0, offset: 0, bytes: 1, last: true, total: 1 })), 'UPSTREAM_ERROR', String(location));
      assert.equal(code(() => plan.abort!(bad)), 'UPSTREAM_ERROR');
    }
  });

  test('the final answer is the object resource: a gs:// id and its size; a last chunk answered 308 is no object', () => {
    const plan = planOf();
    const object = JSON.stringify({ kind: 'storage#object', bucket: 'uploads', name: 'aigw/u/in put.jsonl', size: '10' });
    assert.deepEqual(plan.finish(answer(200), answer(200, {}, object)), { id: 'gs://uploads/aigw/u/in put.jsonl', bytes: 10, expiresAt: null });
    assert.equal(plan.finish(answer(200), answer(201, {}, object)).id, 'gs://uploads/aigw/u/in put.jsonl');
    assert.equal(code(() => plan.finish(answer(200), answer(308, { range: 'bytes=0-4' }))), 'UPSTREAM_ERROR');
    assert.equal(code(() => plan.finish(answer(200), answer(200, {}, '{"kind":"storage#object"}'))), 'UPSTREAM_ERROR');
  });

  test('without options.gcsBucket an upload is 400 CAPABILITY_NOT_SUPPORTED before any request is built', () => {
    assert.throws(() => planOf(target({})), (err: { code: string; status: number; message: string; details: Record<string, unknown> }) =>
      err.code === 'CAPABILITY_NOT_SUPPORTED' && err.status === 400 && /options\.gcsBucket/.test(err.message) && err.details.capability === 'files');
  });

  test('the storage options are checked with the config: a bucket name Cloud Storage refuses, an absolute prefix, a storage URL that is no URL', async () => {
    const config = (options: string) => `providers:\n  vertex-ai:\n    apiKey: ya29.x\n    baseUrl: https://vertex.internal/v1/projects/p/locations/l\n    options: {${options}}\n`;
    const parse = (options: string) => parseConfig(config(options), { file: '/tmp/pipelines.yaml', env: {} });
    await parse('gcsBucket: my-bucket.example_1, gcsPrefix: "", storageUrl: "https://storage.internal"');
    await assert.rejects(parse('gcsBucket: My_Bucket'), /gcsBucket/);
    await assert.rejects(parse('gcsBucket: b1c, gcsPrefix: /abs/'), /gcsPrefix/);
    await assert.rejects(parse('gcsBucket: b1c, storageUrl: storage.googleapis.com'), /storageUrl/);
  });

  test('delete: the object by its escaped name, in the bucket the id names', () => {
    const request = vertexAi.files!.delete('gs://vertex-out/a/b c.jsonl', target());
    assert.deepEqual([request.method, request.path], ['DELETE', 'https://storage.googleapis.com/storage/v1/b/vertex-out/o/a%2Fb%20c.jsonl']);
    assert.equal(code(() => vertexAi.files!.delete('files/abc', target())), 'UPSTREAM_ERROR');
  });
});

/**
 * A multipart upload to vertex-ai that sends `sendBytes` of file (unbounded: until cut) and is cut by the client
 * once `cutWhen` resolves.
 */
async function sendCut(url: string, key: string, cutWhen: Promise<unknown>, sendBytes = Infinity): Promise<void> {
  const boundary = 'vertex-cut-7f3a';
  const head = Buffer.from(['provider', 'purpose'].map((n, i) => `--${boundary}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${['vertex-ai', 'batch'][i]}\r\n`).join('')
    + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const controller = new AbortController();
  void cutWhen.then(() => controller.abort());
  let sent = -1;
  const body = new ReadableStream<Uint8Array>({
    async pull(stream) {
      // Once cut, the body is done: nothing more is made for a request that is gone.
      if (controller.signal.aborted) return stream.error(controller.signal.reason);
      if (sent < 0) {
        sent = 0;
        return stream.enqueue(head);
      }
      if (sent >= sendBytes) return void (await cutWhen);
      sent += MiB;
      stream.enqueue(new Uint8Array(MiB).fill(0x62));
    },
  }, { highWaterMark: 0 });
  const headers = { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` };
  await fetch(`${url}/v1/files`, { method: 'POST', headers, body, duplex: 'half', signal: controller.signal } as RequestInit).then((r) => r.text(), () => undefined);
}

describe('vertex-ai files through the gateway', () => {
  let fake: FakeVertex;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;
  const entries = async () => (await gw.gateway.services.db.query<{ n: string }>("SELECT count(*)::text AS n FROM files WHERE provider = 'vertex-ai'"))[0]!.n;

  before(async () => {
    fake = await startFakeVertex();
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const keyFile = JSON.stringify({ client_email: 'gw@p1.iam.gserviceaccount.com', private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), token_uri: `${fake.origin}/token` });
    gw = await startTestGateway(`
providers:
  vertex-ai:
    baseUrl: ${fake.origin}${VERTEX_BASE_PATH}
    options:
      serviceAccountKey: \${GOOGLE_SA_KEY}
      gcsBucket: aigw-uploads
      storageUrl: ${fake.origin}
pipelines:
  - name: files
    routes: [/v1/files]
    plugins: [auth]
`, { env: { GOOGLE_SA_KEY: keyFile } });
    key = await gw.createKey({ scopes: { capabilities: ['files'] } });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('20 MiB by the openai client: three chunks (308, 308, 200), the object whole, a gs:// file; DELETE removes the object', async () => {
    const content = Buffer.alloc(20 * MiB);
    for (let i = 0; i < content.length; i += 4) content.writeUInt32LE(i, i);
    const dir = await mkdtemp(join(tmpdir(), 'aigw-vertex-'));
    const path = join(dir, 'big.jsonl');
    await writeFile(path, content);
    let created: OpenAI.FileObject;
    try {
      created = await client.files.create({ provider: 'vertex-ai', purpose: 'batch', file: createReadStream(path) } as OpenAI.FileCreateParams);
    } finally {
      await rm(dir, { recursive: true });
    }
    assert.deepEqual([created.bytes, created.filename, (created as unknown as { provider: string }).provider, created.expires_at], [20 * MiB, 'big.jsonl', 'vertex-ai', null]);

    const session = [...fake.sessions.values()].at(-1)!;
    assert.deepEqual(session.chunks.map((c) => [c.contentRange, c.contentLength, c.status]), [
      ['bytes 0-8388607/*', String(8 * MiB), 308],
      ['bytes 8388608-16777215/*', String(8 * MiB), 308],
      ['bytes 16777216-20971519/20971520', String(4 * MiB), 200],
    ]);
    assert.match(session.name, /^aigw\/[0-9a-f-]{36}\/big\.jsonl$/);
    assert.deepEqual(session.metadata, { contentType: 'application/octet-stream', metadata: { purpose: 'batch' } });
    const providerId = await resolveFile(gw.gateway.services.db, 'default', created.id, 'vertex-ai');
    assert.equal(providerId, `gs://aigw-uploads/${session.name}`);
    const stored = fake.objects.get(providerId)!;
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    assert.equal(sha(stored.data), sha(content), 'the object holds the file, byte for byte');

    assert.deepEqual(await client.files.delete(created.id), { id: created.id, object: 'file', deleted: true });
    assert.ok(!fake.objects.has(providerId));
    const deletion = fake.requests.at(-1)!;
    assert.deepEqual([deletion.method, deletion.path], ['DELETE', `/storage/v1/b/aigw-uploads/o/${encodeURIComponent(session.name)}`]);
    assert.deepEqual(fake.unauthorized, [], 'the OAuth token went on every storage request');
    assert.ok(fake.requests.filter((r) => r.path !== '/token').every((r) => r.headers.authorization === `Bearer ${fake.token}`));
  });

  test('an empty file is one request, bytes */0', async () => {
    const form = new FormData();
    form.append('provider', 'vertex-ai');
    form.append('purpose', 'user_data');
    form.append('file', new Blob([]), 'empty.txt');
    const response = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    const created = (await response.json()) as { id: string; bytes: number };
    assert.equal(response.status, 200, JSON.stringify(created));
    assert.equal(created.bytes, 0);
    const session = [...fake.sessions.values()].at(-1)!;
    assert.deepEqual(session.chunks.map((c) => [c.contentRange, c.status]), [['bytes */0', 200]]);
    assert.equal(fake.objects.get(`gs://aigw-uploads/${session.name}`)!.data.length, 0);
  });

  const lastSession = () => [...fake.sessions.values()].at(-1)!;
  /** The session was cancelled, holding its token, and nothing of the upload was kept. */
  async function assertCancelled(before: string, timeoutMs?: number): Promise<void> {
    const session = lastSession();
    await eventually(async () => assert.ok(session.cancelled, 'the session was cancelled'), timeoutMs);
    assert.equal(session.done, false);
    assert.ok(!fake.objects.has(`gs://aigw-uploads/${session.name}`));
    const cancel = fake.requests.find((r) => r.method === 'DELETE' && r.path.includes(`upload_id=${session.id}`))!;
    assert.equal(cancel.headers.authorization, `Bearer ${fake.token}`);
    assert.equal(await entries(), before);
  }

  test('a chunk Cloud Storage refuses: the caller gets the error, the session is cancelled (499), no entry', async () => {
    const before = await entries();
    fake.beforeChunkAnswer = (_session, chunk) => (chunk.contentRange.startsWith('bytes 8388608-') ? 503 : undefined);
    try {
      const form = new FormData();
      form.append('provider', 'vertex-ai');
      form.append('purpose', 'batch');
      form.append('file', new Blob([Buffer.alloc(10 * MiB, 0x61)]), 'ten.bin');
      const response = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
      const body = (await response.json()) as { error: { code: string; message: string } };
      assert.equal(response.status, 502, JSON.stringify(body));
      assert.match(body.error.message, /Backend Error/);
      assert.deepEqual(lastSession().chunks.map((c) => c.status), [308, 503]);
      await assertCancelled(before);
    } finally {
      fake.beforeChunkAnswer = null;
    }
  });

  test('an upload the client cuts: the session is cancelled at Cloud Storage, no object, no entry', async () => {
    const before = await entries();
    let answered!: () => void;
    const cutWhen = new Promise<void>((resolve) => (answered = resolve));
    // 12 MiB: the first chunk goes and is answered; the client leaves while the second waits for its bytes.
    fake.beforeChunkAnswer = () => void setImmediate(answered);
    try {
      await sendCut(gw.url, key, cutWhen, 12 * MiB);
      await assertCancelled(before, 3000);
    } finally {
      fake.beforeChunkAnswer = null;
    }
  });
});
