/**
 * /v1/files with provider bedrock, end to end against the fake S3 (every signature checked): the openai client's
 * multipart upload of 20 MiB reaches S3 as three parts, intact, completed with their ETags, and registered under
 * its s3:// id; DELETE removes the object; an upload the client cuts off aborts the S3 multipart upload and
 * leaves no entry.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { resolveFile } from '../../core/store/files.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { ACCESS_KEY, REGION, SECRET, startFakeAws, type FakeAws } from '../providers/bedrock-files-fake.ts';

const MiB = 1024 * 1024;
const md5 = (bytes: Buffer) => `"${createHash('md5').update(bytes).digest('hex')}"`;

const config = (origin: string) => `
providers:
  bedrock:
    baseUrl: ${origin}/runtime
    options:
      region: ${REGION}
      accessKeyId: ${ACCESS_KEY}
      secretAccessKey: ${SECRET}
      s3Bucket: aigw-files
      s3Prefix: uploads/
      s3Endpoint: ${origin}/s3
      controlPlaneUrl: ${origin}/bedrock
pipelines:
  - name: files
    routes: [/v1/files]
    plugins: [auth]
`;

describe('/v1/files on bedrock (S3)', () => {
  let fake: FakeAws;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeAws();
    gw = await startTestGateway(config(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['files'] } });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('20 MiB through the openai client: three parts arrive intact, the completion lists their ETags, DELETE removes the object', async () => {
    const bytes = Buffer.alloc(20 * MiB);
    for (let i = 0; i < bytes.length; i += 4) bytes.writeInt32LE(i ^ 0x1e3779b9, i);
    const before = fake.requests.length;
    const created = await client.files.create({ provider: 'bedrock', purpose: 'batch', file: await toFile(bytes, 'requests.jsonl', { type: 'application/jsonl' }) } as OpenAI.FileCreateParams);
    assert.deepEqual([created.bytes, created.filename, created.purpose, (created as unknown as { provider: string }).provider], [bytes.length, 'requests.jsonl', 'batch', 'bedrock']);

    const sent = fake.requests.slice(before);
    assert.deepEqual(sent.filter((r) => r.problem !== null), [], 'every request signed as S3 checks it');
    const parts = sent.filter((r) => r.method === 'PUT');
    assert.deepEqual(parts.map((r) => [new URLSearchParams(r.url.split('?')[1]).get('partNumber'), r.body.length]), [['1', 8 * MiB], ['2', 8 * MiB], ['3', 4 * MiB]]);
    assert.deepEqual(parts.map((r) => r.body), [bytes.subarray(0, 8 * MiB), bytes.subarray(8 * MiB, 16 * MiB), bytes.subarray(16 * MiB)], 'each part is its slice of the file');
    const complete = sent.find((r) => r.method === 'POST' && /[?&]uploadId=/.test(r.url))!;
    const listed = [...complete.body.toString('utf8').matchAll(/<Part><PartNumber>(\d+)<\/PartNumber><ETag>([^<]+)<\/ETag><\/Part>/g)].map((m) => [m[1], m[2]]);
    assert.deepEqual(listed, parts.map((r, i) => [String(i + 1), md5(r.body)]), 'the completion names every part with the ETag S3 answered');

    const providerId = await resolveFile(gw.gateway.services.db, 'default', created.id, 'bedrock');
    assert.match(providerId, /^s3:\/\/aigw-files\/uploads\/[0-9a-f-]{36}\/requests\.jsonl$/);
    const objectKey = providerId.slice('s3://'.length);
    assert.ok(fake.objects.get(objectKey)!.equals(bytes), 'S3 holds the file');

    assert.deepEqual(await client.files.delete(created.id), { id: created.id, object: 'file', deleted: true });
    assert.equal(fake.objects.has(objectKey), false);
    const deletion = fake.requests.at(-1)!;
    assert.deepEqual([deletion.method, deletion.url, deletion.problem], ['DELETE', `/s3/${objectKey}`, null]);
  });

  test('an upload the client cuts off: the multipart upload is aborted at S3, no object, no entry', async () => {
    const boundary = 'aigw-test-boundary';
    const head = Buffer.from([
      `--${boundary}\r\nContent-Disposition: form-data; name="provider"\r\n\r\nbedrock\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n`,
    ].join(''));
    const before = fake.requests.length;
    const objectsBefore = fake.objects.size;
    const req = httpRequest(`${gw.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + 30 * MiB) },
    });
    req.on('error', () => {}); // cut on purpose
    req.write(head);
    // 9 MiB: the first 8 MiB part goes to S3 once the next byte shows it is not the last.
    req.write(Buffer.alloc(9 * MiB, 0x61));
    const firstPart = await fake.waitFor((r) => fake.requests.indexOf(r) >= before && r.method === 'PUT');
    assert.equal(firstPart.body.length, 8 * MiB);
    req.destroy();
    const abort = await fake.waitFor((r) => fake.requests.indexOf(r) >= before && r.method === 'DELETE' && r.url.includes('uploadId='));
    assert.equal(abort.problem, null);
    assert.equal(new URLSearchParams(abort.url.split('?')[1]).get('uploadId'), new URLSearchParams(firstPart.url.split('?')[1]).get('uploadId'));
    assert.equal(fake.uploads.size, 0, 'S3 holds no parts of it');
    assert.equal(fake.objects.size, objectsBefore);
    assert.ok(!fake.requests.slice(before).some((r) => r.method === 'POST' && /[?&]uploadId=/.test(r.url)), 'never completed');
    const listed = await client.files.list({ purpose: 'batch' });
    assert.ok(!listed.data.some((f) => f.filename === 'cut.jsonl'));
  });
});
