/**
 * Reading back files that live in object storage (downloadFile): Bedrock's as S3 objects (GetObject, SigV4-signed
 * with the empty payload's hash, checked by the fake S3, which writes the body in awkward pieces) and Vertex AI's
 * as Cloud Storage objects (the JSON API's media download, with the OAuth token). Each file is uploaded through
 * the core first; then the same bytes, a missing object as its mapped 404, and 413 past the limit.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { downloadFile, uploadFile } from '../../core/dispatch/files-call.ts';
import type { ProviderDefinition, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import bedrock from '../../providers/bedrock/index.ts';
import vertexAi from '../../providers/vertex-ai/index.ts';
import { startFakeVertex, VERTEX_BASE_PATH, type FakeVertex } from '../fakes/vertex.ts';
import { testCallDeps } from '../helpers/call-deps.ts';
import { ACCESS_KEY, REGION, SECRET, startFakeAws, type FakeAws } from '../providers/bedrock-files-fake.ts';

const MiB = 1024 * 1024;
const EMPTY_SHA256 = createHash('sha256').update('').digest('hex');
const signal = () => AbortSignal.timeout(20_000);
const isError = (code: string, check: (err: GatewayError) => boolean = () => true) => (err: unknown) => err instanceof GatewayError && err.code === code && check(err);
const upstreamStatus = (err: GatewayError) => (err.details as { upstreamStatus?: number }).upstreamStatus;

async function* inChunks(bytes: Buffer, size = 100_003): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

let deps: ReturnType<typeof testCallDeps>;
const upload = async (provider: ProviderDefinition, target: ProviderTarget, bytes: Buffer) =>
  (await uploadFile(deps, provider, target, { filename: 'my notes.txt', mimeType: 'text/plain', purpose: 'assistants' }, { bytes: inChunks(bytes), callerFault: () => undefined }, signal())).id;

before(() => {
  deps = testCallDeps();
});
after(async () => {
  await deps?.close();
});

describe('downloadFile: bedrock files as S3 objects', () => {
  let fake: FakeAws;
  let target: ProviderTarget;

  before(async () => {
    fake = await startFakeAws();
    target = {
      slug: 'bedrock', baseUrl: `${fake.origin}/runtime`, headers: {}, upstreamModel: '',
      options: { region: REGION, accessKeyId: ACCESS_KEY, secretAccessKey: SECRET, s3Bucket: 'aigw-files', s3Prefix: 'up/', s3Endpoint: `${fake.origin}/s3` },
    };
  });
  after(async () => {
    await fake?.close();
  });

  test('GetObject of the uploaded object, signed with the empty payload\'s hash: the same bytes', async () => {
    const bytes = randomBytes(300_007);
    const id = await upload(bedrock, target, bytes);
    const before = fake.requests.length;
    const downloaded = await downloadFile(deps, bedrock, target, id, { maxBytes: MiB, signal: signal() });
    assert.ok(downloaded.equals(bytes));
    const [sent, ...more] = fake.requests.slice(before);
    assert.equal(more.length, 0);
    assert.deepEqual([sent!.method, sent!.url, sent!.problem], ['GET', `/s3/${id.slice('s3://'.length).replace(/ /g, '%20')}`, null]);
    assert.equal(sent!.headers['x-amz-content-sha256'], EMPTY_SHA256);
  });

  test('a missing object is S3\'s 404 NoSuchKey, mapped; an id that is no s3:// URI is refused before any request', async () => {
    await assert.rejects(downloadFile(deps, bedrock, target, 's3://aigw-files/up/none/gone.txt', { maxBytes: MiB, signal: signal() }),
      isError('UPSTREAM_BAD_REQUEST', (err) => upstreamStatus(err) === 404 && /NoSuchKey/.test(err.message)));
    const before = fake.requests.length;
    await assert.rejects(downloadFile(deps, bedrock, target, 'file-abc', { maxBytes: MiB, signal: signal() }), isError('UPSTREAM_ERROR', (err) => /not s3:\/\/bucket\/key/.test(err.message)));
    assert.equal(fake.requests.length, before);
  });

  test('past maxBytes: 413 PAYLOAD_TOO_LARGE naming the limit', async () => {
    const id = await upload(bedrock, target, randomBytes(64 * 1024));
    await assert.rejects(downloadFile(deps, bedrock, target, id, { maxBytes: 64 * 1024 - 1, signal: signal() }),
      isError('PAYLOAD_TOO_LARGE', (err) => (err.details as { limitBytes?: number }).limitBytes === 64 * 1024 - 1));
  });
});

describe('downloadFile: vertex-ai files as Cloud Storage objects', () => {
  let fake: FakeVertex;
  let target: ProviderTarget;

  before(async () => {
    fake = await startFakeVertex();
    target = {
      slug: 'vertex-ai', baseUrl: `${fake.origin}${VERTEX_BASE_PATH}`, apiKey: fake.token, headers: {}, upstreamModel: '',
      options: { gcsBucket: 'uploads', storageUrl: fake.origin },
    };
  });
  after(async () => {
    await fake?.close();
  });

  test('the media of the uploaded object, with the OAuth token: the same bytes', async () => {
    const bytes = randomBytes(300_007);
    const id = await upload(vertexAi, target, bytes);
    const before = fake.requests.length;
    const downloaded = await downloadFile(deps, vertexAi, target, id, { maxBytes: MiB, signal: signal() });
    assert.ok(downloaded.equals(bytes));
    const [sent, ...more] = fake.requests.slice(before);
    assert.equal(more.length, 0);
    const name = id.slice('gs://uploads/'.length);
    assert.match(name, /^aigw\/[0-9a-f-]{36}\/my notes\.txt$/);
    assert.deepEqual([sent!.method, sent!.path, sent!.headers.authorization], ['GET', `/storage/v1/b/uploads/o/${encodeURIComponent(name)}?alt=media`, `Bearer ${fake.token}`]);
  });

  test('a missing object is Cloud Storage\'s 404, mapped', async () => {
    await assert.rejects(downloadFile(deps, vertexAi, target, 'gs://uploads/aigw/none/gone.txt', { maxBytes: MiB, signal: signal() }),
      isError('UPSTREAM_BAD_REQUEST', (err) => upstreamStatus(err) === 404));
  });

  test('past maxBytes (an answer without a length, counted as read): 413 PAYLOAD_TOO_LARGE naming the limit', async () => {
    const id = await upload(vertexAi, target, randomBytes(64 * 1024));
    await assert.rejects(downloadFile(deps, vertexAi, target, id, { maxBytes: 64 * 1024 - 1, signal: signal() }),
      isError('PAYLOAD_TOO_LARGE', (err) => (err.details as { limitBytes?: number }).limitBytes === 64 * 1024 - 1));
  });
});
