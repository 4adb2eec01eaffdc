/** The webhook signature (spec: Events), the per-batch secret and the batch.completed payload. */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { batchCompletedPayload, type TerminalBatch } from '../../core/webhooks/payload.ts';
import { newWebhookSecret, sign } from '../../core/webhooks/sign.ts';
import { docVerifier } from '../helpers/webhook-receiver.ts';

const SECRET = 'whsec_c2lnbmluZy1rZXktZm9yLXRlc3Rz';
const T = 1_700_000_000;
const BODY = '{"type":"batch.completed","batch_id":"batch-1"}';
// `printf '%s' '<T>.<BODY>' | openssl dgst -sha256 -hmac <SECRET>`: computed outside Node.
const OPENSSL_HEX = '63ed35a551018cf5b7d59eceef185e983ef88cb9c2901a3986a6d41525a3477c';

describe('sign', () => {
  test('a fixed secret, timestamp and body give the known signature', () => {
    assert.equal(sign(SECRET, T, BODY), `t=${T},v1=${OPENSSL_HEX}`);
  });

  test('it is HMAC-SHA256 over "<timestamp>.<body>" in lower-case hex', () => {
    const body = JSON.stringify({ unicode: 'é✓', nested: { a: [1, 2] } });
    const hex = createHmac('sha256', SECRET).update(`${T + 7}.${body}`, 'utf8').digest('hex');
    assert.equal(sign(SECRET, T + 7, body), `t=${T + 7},v1=${hex}`);
  });

  test('the timestamp must be whole unix seconds', () => {
    assert.throws(() => sign(SECRET, 1.5, BODY), RangeError);
    assert.throws(() => sign(SECRET, -1, BODY), RangeError);
  });
});

describe('the receiver-side check of the docs', () => {
  const nowMs = T * 1000;

  test('accepts the gateway\'s signature within +/- 5 minutes, refuses it outside', async () => {
    const verify = await docVerifier();
    const header = sign(SECRET, T, BODY);
    assert.equal(verify(SECRET, header, BODY, nowMs), true);
    assert.equal(verify(SECRET, header, BODY, nowMs + 300_000), true, 'exactly 5 minutes later');
    assert.equal(verify(SECRET, header, BODY, nowMs - 300_000), true, 'exactly 5 minutes earlier');
    assert.equal(verify(SECRET, header, BODY, nowMs + 301_000), false, 'past the tolerance');
    assert.equal(verify(SECRET, header, BODY, nowMs - 301_000), false, 'before the tolerance');
  });

  test('refuses another body, another secret, a moved timestamp and malformed headers', async () => {
    const verify = await docVerifier();
    const header = sign(SECRET, T, BODY);
    assert.equal(verify(SECRET, header, `${BODY} `, nowMs), false);
    assert.equal(verify(`${SECRET}x`, header, BODY, nowMs), false);
    assert.equal(verify(SECRET, header.replace(`t=${T}`, `t=${T + 1}`), BODY, nowMs), false);
    for (const bad of ['', 'v1=' + OPENSSL_HEX, `t=${T}`, `t=${T},v1=${OPENSSL_HEX.slice(2)}`, `t=abc,v1=${OPENSSL_HEX}`, `t=${T},v1=${OPENSSL_HEX.toUpperCase()}`]) {
      assert.equal(verify(SECRET, bad, BODY, nowMs), false, bad);
    }
  });
});

describe('newWebhookSecret', () => {
  test('is whsec_ and 32 random bytes in base64url, new every time', () => {
    const secrets = new Set(Array.from({ length: 50 }, () => newWebhookSecret()));
    assert.equal(secrets.size, 50);
    for (const secret of secrets) {
      assert.match(secret, /^whsec_[A-Za-z0-9_-]{43}$/);
      assert.equal(Buffer.from(secret.slice('whsec_'.length), 'base64url').length, 32);
    }
  });
});

describe('batchCompletedPayload', () => {
  const batch: TerminalBatch = {
    id: 'batch-6f1c9e52-3b0a-4d7e-9a51-2f0c8d4b7a10',
    provider: 'openai',
    endpoint: '/v1/chat/completions',
    status: 'completed',
    requestCounts: { total: 3, completed: 2, failed: 1 },
    providerBatchId: 'batch_abc',
    outputProviderFileId: 'file-out1',
    errorProviderFileId: null,
    completedAt: Date.UTC(2025, 0, 2, 3, 4, 5, 678),
    metadata: { job: 'nightly' },
  };

  test('has every field of the spec, in its wire names', () => {
    assert.deepEqual(batchCompletedPayload(batch), {
      type: 'batch.completed',
      batch_id: batch.id,
      provider: 'openai',
      endpoint: '/v1/chat/completions',
      status: 'completed',
      request_counts: { total: 3, completed: 2, failed: 1 },
      provider_batch_id: 'batch_abc',
      output_file_url: '/v1/files/file-out1/content',
      error_file_url: null,
      completed_at: '2025-01-02T03:04:05.678Z',
      metadata: { job: 'nightly' },
    });
  });

  test('every terminal state sends batch.completed with its status; a provider id is escaped into the path', () => {
    const payload = batchCompletedPayload({ ...batch, status: 'expired', outputProviderFileId: null, errorProviderFileId: 'files/a b', metadata: null });
    assert.equal(payload.type, 'batch.completed');
    assert.equal(payload.status, 'expired');
    assert.equal(payload.output_file_url, null);
    assert.equal(payload.error_file_url, '/v1/files/files%2Fa%20b/content');
    assert.equal(payload.metadata, null);
  });
});
