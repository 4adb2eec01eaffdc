/**
 * SigV4 against AWS's published Signature Version 4 test suite (credentials AKIDEXAMPLE, 2015-08-30T12:36:00Z,
 * us-east-1, service "service"), then what the Bedrock provider signs: the session token, the doubly encoded
 * model id, and the API-key alternative.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletionRequest } from '../../core/canonical/chat.ts';
import type { ProviderIO, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import bedrock from '../../providers/bedrock/index.ts';
import { canonicalPath, canonicalRequest, signRequest } from '../../providers/bedrock/sigv4.ts';
import { sigv4Problem } from '../conformance/wires/bedrock.ts';

const SUITE = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const AT = Date.UTC(2015, 7, 30, 12, 36, 0);
const TOKEN = 'AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==';

interface Vector { name: string; method: string; path: string; headers?: Record<string, string>; body?: string; token?: string; signedHeaders: string; signature: string }

/** Cases of the suite (its .req request and the signature of its .authz), by their suite names. */
const VECTORS: Vector[] = [
  { name: 'get-vanilla', method: 'GET', path: '/', signedHeaders: 'host;x-amz-date', signature: '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31' },
  { name: 'post-vanilla', method: 'POST', path: '/', signedHeaders: 'host;x-amz-date', signature: '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b' },
  { name: 'get-vanilla-query-order-key-case', method: 'GET', path: '/?Param2=value2&Param1=value1', signedHeaders: 'host;x-amz-date', signature: 'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500' },
  { name: 'get-vanilla-query-order-value', method: 'GET', path: '/?Param1=value2&Param1=value1', signedHeaders: 'host;x-amz-date', signature: '5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694' },
  { name: 'get-vanilla-query-unreserved', method: 'GET', path: '/?-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz=-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', signedHeaders: 'host;x-amz-date', signature: '9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197' },
  { name: 'post-vanilla-query', method: 'POST', path: '/?Param1=value1', signedHeaders: 'host;x-amz-date', signature: '28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11' },
  { name: 'get-unreserved', method: 'GET', path: '/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', signedHeaders: 'host;x-amz-date', signature: '07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f' },
  { name: 'normalize-path/get-space', method: 'GET', path: '/example space/', signedHeaders: 'host;x-amz-date', signature: '652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741' },
  { name: 'normalize-path/get-relative-relative', method: 'GET', path: '/example1/example2/../..', signedHeaders: 'host;x-amz-date', signature: '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31' },
  { name: 'normalize-path/get-slash-dot-slash', method: 'GET', path: '/./', signedHeaders: 'host;x-amz-date', signature: '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31' },
  { name: 'normalize-path/get-slash-pointless-dot', method: 'GET', path: '/./example', signedHeaders: 'host;x-amz-date', signature: 'ef75d96142cf21edca26f06005da7988e4f8dc83a165a80865db7089db637ec5' },
  { name: 'post-header-key-sort', method: 'POST', path: '/', headers: { 'My-Header1': 'value1' }, signedHeaders: 'host;my-header1;x-amz-date', signature: 'c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c' },
  { name: 'post-header-value-case', method: 'POST', path: '/', headers: { 'My-Header1': 'VALUE1' }, signedHeaders: 'host;my-header1;x-amz-date', signature: 'cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d' },
  { name: 'get-header-value-trim', method: 'GET', path: '/', headers: { 'My-Header1': ' value1', 'My-Header2': ' "a   b   c"' }, signedHeaders: 'host;my-header1;my-header2;x-amz-date', signature: 'acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736' },
  { name: 'post-x-www-form-urlencoded', method: 'POST', path: '/', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'Param1=value1', signedHeaders: 'content-type;host;x-amz-date', signature: 'ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a' },
  { name: 'post-sts-token/post-sts-header-before', method: 'POST', path: '/', token: TOKEN, signedHeaders: 'host;x-amz-date;x-amz-security-token', signature: '85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead' },
];

describe('SigV4: the AWS test suite', () => {
  for (const v of VECTORS) {
    test(v.name, () => {
      const headers = signRequest({
        method: v.method, url: `https://example.amazonaws.com${v.path}`, headers: v.headers ?? {}, ...(v.body ? { body: v.body } : {}),
        region: 'us-east-1', service: 'service', credentials: { ...SUITE, ...(v.token ? { sessionToken: v.token } : {}) }, now: AT,
      });
      assert.equal(headers.authorization, `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=${v.signedHeaders}, Signature=${v.signature}`);
      assert.equal(headers['x-amz-date'], '20150830T123600Z');
      assert.equal(headers.host, 'example.amazonaws.com');
    });
  }

  test('the canonical requests of get-vanilla and post-x-www-form-urlencoded, line for line', () => {
    const empty = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    assert.equal(
      canonicalRequest({ method: 'GET', path: '/', query: '', headers: { host: 'example.amazonaws.com', 'x-amz-date': '20150830T123600Z' }, payloadHash: empty }).text,
      `GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n${empty}`,
    );
    assert.equal(
      canonicalRequest({ method: 'POST', path: '/', query: '', headers: { 'Content-Type': 'application/x-www-form-urlencoded', host: 'example.amazonaws.com', 'x-amz-date': '20150830T123600Z' }, payloadHash: '9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e' }).text,
      'POST\n/\n\ncontent-type:application/x-www-form-urlencoded\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e',
    );
  });

  test('paths are signed doubly encoded, as every service but S3 expects', () => {
    assert.equal(canonicalPath('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse'), '/model/anthropic.claude-3-5-sonnet-20240620-v1%253A0/converse');
    assert.equal(canonicalPath('/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.x/converse-stream'),
      '/model/arn%253Aaws%253Abedrock%253Aus-east-1%253A123456789012%253Ainference-profile%252Fus.x/converse-stream');
  });
});

describe('bedrock: authorize', () => {
  const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);
  const io: ProviderIO = { now: () => NOW, fetchJson: () => Promise.reject(new Error('no I/O')), cached: () => Promise.reject(new Error('no I/O')) };
  const target = (fields: Partial<ProviderTarget> = {}, options: Record<string, unknown> = {}): ProviderTarget => ({
    slug: 'bedrock', baseUrl: 'https://bedrock-runtime.eu-west-1.amazonaws.com', headers: {},
    options: { region: 'eu-west-1', accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret/key+1', ...options },
    upstreamModel: 'anthropic.claude-3-5-sonnet-20240620-v1:0', ...fields,
  });
  const request = { model: 'm', messages: [{ role: 'user', content: 'hi' }] } as ChatCompletionRequest;
  const signed = async (t: ProviderTarget, stream = false) => bedrock.authorize!(bedrock.chat!.toUpstream(request, t, stream), t, io, new AbortController().signal);
  /** What the service would receive: the signed headers over the same path and body. */
  const received = (built: { method: string; path: string; headers: Record<string, string>; body?: string }) =>
    ({ method: built.method, url: built.path, headers: built.headers, rawBody: built.body ?? '', json: null });

  test('the model id is one percent-encoded path segment; the signature covers it doubly encoded', async () => {
    const built = await signed(target());
    assert.equal(built.path, '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
    assert.equal(built.headers.host, 'bedrock-runtime.eu-west-1.amazonaws.com');
    assert.equal(built.headers['x-amz-date'], '20260102T030405Z');
    assert.match(built.headers.authorization!, /^AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE\/20260102\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=accept;content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/);
    assert.equal(sigv4Problem(received(built), { kind: 'sigv4', accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret/key+1', region: 'eu-west-1' }, NOW), null);
    const arn = 'arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile/a1b2c3';
    const profile = await signed(target({ upstreamModel: arn }), true);
    assert.equal(profile.path, '/model/arn%3Aaws%3Abedrock%3Aeu-west-1%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3/converse-stream');
    assert.equal(sigv4Problem(received(profile), { kind: 'sigv4', accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret/key+1', region: 'eu-west-1' }, NOW), null);
  });

  test('a session token is sent as X-Amz-Security-Token and signed; an empty one is no token', async () => {
    const withToken = await signed(target({}, { sessionToken: 'FwoGZXIvYXdzEBYaDH+token/==' }));
    assert.equal(withToken.headers['x-amz-security-token'], 'FwoGZXIvYXdzEBYaDH+token/==');
    assert.match(withToken.headers.authorization!, /SignedHeaders=accept;content-type;host;x-amz-date;x-amz-security-token,/);
    assert.equal(sigv4Problem(received(withToken), { kind: 'sigv4', accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret/key+1', sessionToken: 'FwoGZXIvYXdzEBYaDH+token/==', region: 'eu-west-1' }, NOW), null);
    const empty = await signed(target({}, { sessionToken: '' }));
    assert.equal(empty.headers['x-amz-security-token'], undefined);
    assert.match(empty.headers.authorization!, /SignedHeaders=accept;content-type;host;x-amz-date,/);
  });

  test('a base URL with a path and a port is signed as sent', async () => {
    const built = await signed(target({ baseUrl: 'http://127.0.0.1:8443/bedrock/' }));
    assert.equal(built.headers.host, '127.0.0.1:8443');
    assert.equal(sigv4Problem({ ...received(built), url: `/bedrock${built.path}` }, { kind: 'sigv4', accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret/key+1', region: 'eu-west-1' }, NOW), null);
  });

  test('the region comes from options, else from an AWS host; with neither the request is refused', async () => {
    const fromHost = await signed(target({ baseUrl: 'https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com' }, { region: undefined }));
    assert.match(fromHost.headers.authorization!, /\/us-gov-west-1\/bedrock\/aws4_request/);
    await assert.rejects(signed(target({ baseUrl: 'https://vpce-0abc.bedrock.internal' }, { region: undefined })),
      (err: unknown) => err instanceof GatewayError && err.code === 'UPSTREAM_ERROR' && /options\.region/.test(err.message));
  });

  test('apiKey is a Bedrock API key: a bearer token, and nothing is signed', async () => {
    const built = await signed(target({ apiKey: 'ABSKexample==' }));
    assert.equal(built.headers.authorization, 'Bearer ABSKexample==');
    assert.equal(built.headers['x-amz-date'], undefined);
  });

  test('without apiKey or AWS credentials the request is refused before it is sent', async () => {
    await assert.rejects(signed(target({}, { accessKeyId: undefined, secretAccessKey: undefined })),
      (err: unknown) => err instanceof GatewayError && err.code === 'UPSTREAM_ERROR' && /no credential/.test(err.message));
  });

  test("the caller's headers are not the upstream's: only the gateway's credential is sent", async () => {
    const built = await signed(target({ headers: { 'x-team': 'search' } }));
    assert.deepEqual(Object.keys(built.headers).sort(), ['accept', 'authorization', 'content-type', 'host', 'x-amz-date', 'x-team']);
  });
});
