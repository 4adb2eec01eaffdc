/**
 * Bedrock's files translator: uploads as S3 multipart uploads. The plan on its own (the key, the requests, the
 * refusals before any I/O), then through the core's uploadFile and deleteProviderFile against the fake S3, which
 * checks every signature: parts of 8 MiB arrive whole and in order, the completion lists their ETags, an error S3
 * puts in a 200 answer fails the upload and aborts it, and a deleted file is gone.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Breakers } from '../../core/dispatch/breakers.ts';
import type { CallDeps } from '../../core/dispatch/exchange.ts';
import { deleteProviderFile, uploadFile } from '../../core/dispatch/files-call.ts';
import type { FileUploadInfo, ProviderTarget, UploadAnswer, UploadPart } from '../../core/dispatch/provider.ts';
import { createProviderIO } from '../../core/dispatch/provider-io.ts';
import { UpstreamClient } from '../../core/dispatch/upstream.ts';
import { GatewayError } from '../../core/errors.ts';
import bedrock from '../../providers/bedrock/index.ts';
import { keySegment, S3_PART_BYTES } from '../../providers/bedrock/files.ts';
import { ACCESS_KEY, REGION, SECRET, startFakeAws, type FakeAws } from './bedrock-files-fake.ts';

const MiB = 1024 * 1024;
const info: FileUploadInfo = { filename: 'My Report (1).jsonl', mimeType: 'application/jsonl', purpose: 'batch' };
const offline = (options: Record<string, unknown> = {}, fields: Partial<ProviderTarget> = {}): ProviderTarget => ({
  slug: 'bedrock', baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com', headers: {}, upstreamModel: '',
  options: { region: 'us-east-1', accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret', s3Bucket: 'team-files', ...options }, ...fields,
});
const refused = (pattern: RegExp) => (err: unknown) =>
  err instanceof GatewayError && err.code === 'CAPABILITY_NOT_SUPPORTED' && (err.details as { capability?: string }).capability === 'files' && pattern.test(err.message);
const answer = (text: string, headers: UploadAnswer['headers'] = {}): UploadAnswer => ({ status: 200, headers, text });
const part = (index: number, last = false): UploadPart => ({ index, offset: index * S3_PART_BYTES, bytes: S3_PART_BYTES, last, total: null });

describe('bedrock files: the plan', () => {
  test('a key segment from any filename: no separators or control characters, at most 200 characters', () => {
    assert.equal(keySegment('report.jsonl'), 'report.jsonl');
    assert.equal(keySegment('../../etc/passwd'), '.._.._etc_passwd');
    assert.equal(keySegment('a\\b\r\nc\u0000'), 'a_b__c_');
    assert.equal(keySegment('..'), 'file');
    assert.equal(keySegment(''), 'file');
    assert.equal(keySegment('😀'.repeat(300)), '😀'.repeat(200), 'cut by characters, never inside one');
  });

  test('without a bucket or AWS credentials: 400 CAPABILITY_NOT_SUPPORTED before any request', () => {
    assert.throws(() => bedrock.files!.upload(info, offline({ s3Bucket: undefined })), refused(/options\.s3Bucket/));
    assert.throws(() => bedrock.files!.upload(info, offline({ accessKeyId: undefined, secretAccessKey: undefined }, { apiKey: 'ABSKkey' })), refused(/AWS credentials/));
    assert.throws(() => bedrock.files!.upload(info, offline({ region: undefined }, { baseUrl: 'https://vpce-1.internal' })),
      (err: unknown) => err instanceof GatewayError && /options\.region/.test(err.message));
  });

  test('the requests: start, parts numbered from 1 under the upload id, completion with every ETag, abort; the id is s3://', () => {
    const plan = bedrock.files!.upload(info, offline({ s3Prefix: 'teams/search/' }));
    assert.equal(plan.kind, 'parts');
    if (plan.kind !== 'parts') return;
    assert.equal(plan.partBytes, 8 * MiB);
    const start = /^https:\/\/s3\.us-east-1\.amazonaws\.com\/team-files\/teams\/search\/([0-9a-f-]{36})\/My%20Report%20%281%29\.jsonl\?uploads$/.exec(plan.start.path);
    assert.ok(start, plan.start.path);
    assert.deepEqual([plan.start.method, plan.start.headers['content-type']], ['POST', 'application/jsonl']);
    const key = `teams/search/${start[1]}/My Report (1).jsonl`;
    const session = answer('<?xml version="1.0"?><InitiateMultipartUploadResult><Bucket>team-files</Bucket><Key>k</Key><UploadId>up/load+id=</UploadId></InitiateMultipartUploadResult>');
    const second = plan.part(session, part(1));
    assert.deepEqual([second.method, second.path.split('?')[1]], ['PUT', 'partNumber=2&uploadId=up%2Fload%2Bid%3D']);
    const complete = plan.complete!(session, [{ ...answer('', { etag: '"e1"' }), part: part(0) }, { ...answer('', { etag: '"e&2"' }), part: part(1, true) }]);
    assert.deepEqual([complete.method, complete.path.split('?')[1], complete.headers['content-type']], ['POST', 'uploadId=up%2Fload%2Bid%3D', 'application/xml']);
    assert.match(complete.body!, /<CompleteMultipartUpload xmlns="http:\/\/s3\.amazonaws\.com\/doc\/2006-03-01\/"><Part><PartNumber>1<\/PartNumber><ETag>"e1"<\/ETag><\/Part><Part><PartNumber>2<\/PartNumber><ETag>"e&amp;2"<\/ETag><\/Part><\/CompleteMultipartUpload>$/);
    assert.deepEqual(plan.finish(session, answer('<CompleteMultipartUploadResult><Key>k</Key></CompleteMultipartUploadResult>')), { id: `s3://team-files/${key}`, expiresAt: null });
    assert.deepEqual([plan.abort!(session).method, plan.abort!(session).path.split('?')[1]], ['DELETE', 'uploadId=up%2Fload%2Bid%3D']);
  });

  test('answers S3 would not send, or an error inside a 200, fail the upload', () => {
    const plan = bedrock.files!.upload(info, offline());
    if (plan.kind !== 'parts') return assert.fail('a parts plan');
    const isUpstream = (pattern: RegExp) => (err: unknown) => err instanceof GatewayError && err.code === 'UPSTREAM_ERROR' && pattern.test(err.message);
    assert.throws(() => plan.part(answer('<Error><Code>x</Code></Error>'), part(0)), isUpstream(/no UploadId/));
    const session = answer('<InitiateMultipartUploadResult><UploadId>u</UploadId></InitiateMultipartUploadResult>');
    assert.throws(() => plan.complete!(session, [{ ...answer(''), part: part(0, true) }]), isUpstream(/no ETag for part 1/));
    assert.throws(() => plan.finish(session, answer(' \n<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>')), isUpstream(/InternalError: We encountered an internal error\./));
    assert.throws(() => plan.finish(session, answer('')), isUpstream(/malformed CompleteMultipartUpload answer/));
    assert.throws(() => bedrock.files!.delete('file-abc', offline()), isUpstream(/not s3:\/\/bucket\/key/));
    const del = bedrock.files!.delete('s3://team-files/aigw/u-1/a b.txt', offline());
    assert.deepEqual([del.method, del.path], ['DELETE', 'https://s3.us-east-1.amazonaws.com/team-files/aigw/u-1/a%20b.txt']);
  });
});

describe('bedrock files: through the core against the fake S3', () => {
  let fake: FakeAws;
  let upstream: UpstreamClient;
  let deps: CallDeps;
  let target: ProviderTarget;
  const signal = () => AbortSignal.timeout(20_000);
  const pattern = (size: number) => {
    const bytes = Buffer.alloc(size);
    for (let i = 0; i < size; i++) bytes[i] = (i * 7 + (i >> 13)) & 0xff;
    return bytes;
  };
  async function* inChunks(bytes: Buffer, size = 300_001): AsyncGenerator<Buffer> {
    for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
  }
  const upload = (bytes: Buffer, name = 'data.jsonl') =>
    uploadFile(deps, bedrock, target, { ...info, filename: name }, { bytes: inChunks(bytes), callerFault: () => undefined }, signal());

  before(async () => {
    fake = await startFakeAws();
    upstream = new UpstreamClient({
      connectTimeoutMs: 5000, headersTimeoutMs: 10_000, bodyTimeoutMs: 10_000, keepAliveTimeoutMs: 1000, connectionsPerOrigin: 4, queueTimeoutMs: 5000,
      maxFrameBytes: 1 << 20, maxBodyBytes: 1 << 20,
      breaker: { errorThresholdPercentage: 50, volumeThreshold: 100, rollingCountTimeoutMs: 10_000, resetTimeoutMs: 1000 },
    });
    deps = { upstream, breakers: new Breakers({ errorThresholdPercentage: 50, volumeThreshold: 100, rollingCountTimeoutMs: 10_000, resetTimeoutMs: 1000 }), io: createProviderIO(upstream, Date.now) };
    target = {
      slug: 'bedrock', baseUrl: `${fake.origin}/runtime`, headers: {}, upstreamModel: '',
      options: { region: REGION, accessKeyId: ACCESS_KEY, secretAccessKey: SECRET, s3Bucket: 'aigw-files', s3Prefix: 'up/', s3Endpoint: `${fake.origin}/s3` },
    };
  });
  after(async () => {
    await upstream?.close();
    await fake?.close();
  });

  test('12 MiB in odd chunks: two parts (8 MiB, then the rest), unsigned payloads; start and completion hashed; deleted after', async () => {
    const bytes = pattern(12 * MiB + 3);
    const before = fake.requests.length;
    const uploaded = await upload(bytes);
    assert.match(uploaded.id, /^s3:\/\/aigw-files\/up\/[0-9a-f-]{36}\/data\.jsonl$/);
    assert.equal(uploaded.streamedBytes, bytes.length);
    const key = uploaded.id.slice('s3://'.length);
    assert.equal(createHash('sha256').update(fake.objects.get(key)!).digest('hex'), createHash('sha256').update(bytes).digest('hex'), 'the object is the file');
    const sent = fake.requests.slice(before);
    assert.deepEqual(sent.map((r) => r.problem), sent.map(() => null), 'every request signed');
    assert.deepEqual(sent.map((r) => `${r.method} ${r.url.replace(/uploadId=[^&]+/, 'uploadId=U').split('?')[1]}`),
      ['POST uploads', 'PUT partNumber=1&uploadId=U', 'PUT partNumber=2&uploadId=U', 'POST uploadId=U']);
    assert.deepEqual(sent.map((r) => r.body.length), [0, 8 * MiB, 4 * MiB + 3, sent[3]!.body.length]);
    assert.deepEqual(sent.map((r) => r.headers['x-amz-content-sha256'] === 'UNSIGNED-PAYLOAD'), [false, true, true, false]);
    assert.equal(fake.uploads.size, 0, 'no upload left open');

    await deleteProviderFile(deps, bedrock, target, uploaded.id, signal());
    assert.equal(fake.objects.has(key), false);
    await deleteProviderFile(deps, bedrock, target, uploaded.id, signal()); // already gone: S3 answers 204 all the same
  });

  test('an empty file is one empty part; a file of exactly 8 MiB one full part', async () => {
    const empty = await upload(Buffer.alloc(0), 'empty.txt');
    assert.equal(fake.objects.get(empty.id.slice('s3://'.length))!.length, 0);
    const before = fake.requests.length;
    const whole = await upload(pattern(8 * MiB), 'eight.bin');
    assert.equal(fake.objects.get(whole.id.slice('s3://'.length))!.length, 8 * MiB);
    assert.equal(fake.requests.slice(before).filter((r) => r.method === 'PUT').length, 1);
  });

  test('CompleteMultipartUpload answering 200 with an error inside: the upload fails and is aborted', async () => {
    fake.failNextComplete = 'InternalError';
    const before = fake.requests.length;
    await assert.rejects(upload(pattern(9 * MiB)), (err: unknown) => err instanceof GatewayError && err.code === 'UPSTREAM_ERROR' && /InternalError/.test(err.message));
    const abort = await fake.waitFor((r) => fake.requests.indexOf(r) >= before && r.method === 'DELETE' && r.url.includes('uploadId='));
    assert.equal(abort.problem, null);
    assert.equal(fake.uploads.size, 0, 'the parts S3 held are released');
  });
});
