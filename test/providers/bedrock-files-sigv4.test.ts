/**
 * SigV4 for S3 against the examples of S3's API reference ("Signature calculations for the Authorization header":
 * AKIAIOSFODNN7EXAMPLE, 2013-05-24, us-east-1, examplebucket), then how Bedrock's authorize picks the service, the
 * path rules and the credential from the request's URL: S3, the control plane, the runtime.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ProviderIO, ProviderTarget, UpstreamRequest } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import bedrock from '../../providers/bedrock/index.ts';
import { s3CanonicalPath, signRequest } from '../../providers/bedrock/sigv4.ts';

const EXAMPLES = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const AT = Date.UTC(2013, 4, 24, 0, 0, 0);
const EMPTY = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

interface Example { name: string; method: string; path: string; headers?: Record<string, string>; body?: string; signedHeaders: string; signature: string }

const S3_EXAMPLES: Example[] = [
  { name: 'GET Object (a range of test.txt)', method: 'GET', path: '/test.txt', headers: { Range: 'bytes=0-9' }, signedHeaders: 'host;range;x-amz-content-sha256;x-amz-date', signature: 'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41' },
  {
    name: 'PUT Object (test$file.text, the $ encoded once)', method: 'PUT', path: '/test$file.text', body: 'Welcome to Amazon S3.',
    headers: { Date: 'Fri, 24 May 2013 00:00:00 GMT', 'x-amz-storage-class': 'REDUCED_REDUNDANCY' },
    signedHeaders: 'date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class', signature: '98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd',
  },
  { name: 'GET Bucket lifecycle (?lifecycle)', method: 'GET', path: '/?lifecycle', signedHeaders: 'host;x-amz-content-sha256;x-amz-date', signature: 'fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543' },
  { name: 'GET Bucket (list objects)', method: 'GET', path: '/?max-keys=2&prefix=J', signedHeaders: 'host;x-amz-content-sha256;x-amz-date', signature: '34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7' },
];

describe('SigV4 for S3: the examples of the S3 API reference', () => {
  for (const example of S3_EXAMPLES) {
    test(example.name, () => {
      const headers = signRequest({
        method: example.method, url: `https://examplebucket.s3.amazonaws.com${example.path}`, headers: example.headers ?? {},
        ...(example.body ? { body: example.body } : {}), region: 'us-east-1', service: 's3', credentials: EXAMPLES, now: AT,
      });
      assert.equal(headers.authorization, `AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=${example.signedHeaders}, Signature=${example.signature}`);
      assert.equal(headers['x-amz-content-sha256'], example.body ? '44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072' : EMPTY, 'S3 gets the payload hash on every request');
    });
  }

  test('the canonical path is encoded once and never normalized: a key is not a path to resolve', () => {
    assert.equal(s3CanonicalPath('/test$file.text'), '/test%24file.text');
    assert.equal(s3CanonicalPath('/test%24file.text'), '/test%24file.text', 'sent encoded or not, it signs alike');
    assert.equal(s3CanonicalPath('/bucket/a//b/../c/./d'), '/bucket/a//b/../c/./d');
    assert.equal(s3CanonicalPath('/bucket/my%20file%281%29.jsonl'), '/bucket/my%20file%281%29.jsonl');
  });
});

describe('bedrock: authorize picks S3 or bedrock from the URL', () => {
  const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);
  const io: ProviderIO = { now: () => NOW, fetchJson: () => Promise.reject(new Error('no I/O')), cached: () => Promise.reject(new Error('no I/O')) };
  const target = (options: Record<string, unknown> = {}, fields: Partial<ProviderTarget> = {}): ProviderTarget => ({
    slug: 'bedrock', baseUrl: 'https://bedrock-runtime.eu-west-1.amazonaws.com', headers: {}, upstreamModel: 'm',
    options: { region: 'eu-west-1', accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret', ...options }, ...fields,
  });
  const sign = (request: UpstreamRequest, t: ProviderTarget) => bedrock.authorize!(request, t, io, new AbortController().signal);
  const scope = (headers: Record<string, string>) => /Credential=[^/]+\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/.exec(headers.authorization!)?.slice(1);

  test('S3: service s3, the body\'s hash announced; a streamed part is UNSIGNED-PAYLOAD', async () => {
    const complete = await sign({ method: 'POST', path: 'https://s3.eu-west-1.amazonaws.com/files/aigw/k?uploadId=u', headers: { 'content-type': 'application/xml' }, body: '<x/>' }, target());
    assert.deepEqual(scope(complete.headers), ['eu-west-1', 's3']);
    assert.match(complete.headers['x-amz-content-sha256']!, /^[0-9a-f]{64}$/);
    assert.match(complete.headers.authorization!, /SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date,/);
    const part = await sign({ method: 'PUT', path: 'https://s3.eu-west-1.amazonaws.com/files/aigw/k?partNumber=1&uploadId=u', headers: { 'content-length': '5' }, bodyStreamed: true }, target());
    assert.equal(part.headers['x-amz-content-sha256'], 'UNSIGNED-PAYLOAD');
  });

  test('the control plane and the runtime: service bedrock; an API key is their bearer token, never S3\'s', async () => {
    const job = await sign({ method: 'GET', path: 'https://bedrock.eu-west-1.amazonaws.com/model-invocation-job/abc123def456', headers: {} }, target());
    assert.deepEqual(scope(job.headers), ['eu-west-1', 'bedrock']);
    assert.equal(job.headers['x-amz-content-sha256'], undefined);
    const keyed = target({}, { apiKey: 'ABSKexample==' });
    assert.equal((await sign({ method: 'GET', path: 'https://bedrock.eu-west-1.amazonaws.com/model-invocation-job/x', headers: {} }, keyed)).headers.authorization, 'Bearer ABSKexample==');
    const s3 = await sign({ method: 'GET', path: 'https://s3.eu-west-1.amazonaws.com/out/a.out', headers: {} }, keyed);
    assert.deepEqual(scope(s3.headers), ['eu-west-1', 's3'], 'S3 is signed with the AWS credentials even with an API key');
    const keyOnly = target({ accessKeyId: undefined, secretAccessKey: undefined }, { apiKey: 'ABSKexample==' });
    await assert.rejects(sign({ method: 'GET', path: 'https://s3.eu-west-1.amazonaws.com/out/a.out', headers: {} }, keyOnly),
      (err: unknown) => err instanceof GatewayError && err.code === 'UPSTREAM_ERROR' && /S3 does not take a Bedrock API key/.test(err.message));
  });

  test('s3Endpoint and controlPlaneUrl decide which is which; the region comes from options, else from the S3 host', async () => {
    const custom = target({ region: undefined, s3Endpoint: 'https://s3.eu-central-1.amazonaws.com/', controlPlaneUrl: 'https://vpce-1.bedrock.internal' });
    const object = await sign({ method: 'GET', path: 'https://s3.eu-central-1.amazonaws.com/b/k', headers: {} }, custom);
    assert.deepEqual(scope(object.headers), ['eu-central-1', 's3']);
    const proxied = target({ s3Endpoint: 'http://127.0.0.1:9000/s3', controlPlaneUrl: 'http://127.0.0.1:9000/s3x' });
    assert.deepEqual(scope((await sign({ method: 'GET', path: 'http://127.0.0.1:9000/s3/b/k', headers: {} }, proxied)).headers), ['eu-west-1', 's3']);
    assert.deepEqual(scope((await sign({ method: 'GET', path: 'http://127.0.0.1:9000/s3x/model-invocation-job/x', headers: {} }, proxied)).headers), ['eu-west-1', 'bedrock'],
      'a path that only begins like the S3 endpoint\'s is not S3');
    const chat = await sign(bedrock.chat!.toUpstream({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, proxied, false), proxied);
    assert.deepEqual(scope(chat.headers), ['eu-west-1', 'bedrock']);
  });
});
