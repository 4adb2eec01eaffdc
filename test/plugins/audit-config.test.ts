/** The audit plugin's config rules and body redaction: what is refused at load, and what a kept body looks like. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { auditBody, redactCredentials, REDACTED } from '../../plugins/audit/bodies.ts';
import { canonicalJson } from '../../plugins/audit/chain.ts';
import { auditConfig } from '../helpers/audit.ts';
import { parseConfig } from '../helpers/config.ts';

const KEY = 'k'.repeat(32);
const load = (audit: string, extra = '') => parseConfig(auditConfig('http://127.0.0.1:1/v1', audit, extra), { file: '/tmp/pipelines.yaml', env: { AIGW_DATA_DIR: '/tmp/unused' } });

describe('audit config', () => {
  test('defaults: no bodies, 16 KiB, no retention', async () => {
    const loaded = await load('- audit');
    const entry = loaded.config.pipelines[0]!.plugins[0]!;
    assert.deepEqual(entry.config, { bodies: 'none', maxBodyBytes: 16384, flushIntervalMs: 1000, batchSize: 500, maxPending: 100000, pruneIntervalMs: 3600000 });
  });

  test('retentionDays without checkpointKey is refused', async () => {
    await assert.rejects(load('- audit:\n    retentionDays: 30'), /retentionDays needs checkpointKey/);
  });

  test('a checkpointKey shorter than 32 bytes is refused; one from the environment is taken', async () => {
    await assert.rejects(load('- audit:\n    checkpointKey: short'), /checkpointKey/);
    const loaded = await parseConfig(auditConfig('http://127.0.0.1:1/v1', '- audit:\n    retentionDays: 7\n    checkpointKey: ${AIGW_AUDIT_KEY}'), {
      file: '/tmp/pipelines.yaml', env: { AIGW_DATA_DIR: '/tmp/unused', AIGW_AUDIT_KEY: KEY },
    });
    assert.equal(loaded.config.pipelines[0]!.plugins[0]!.config.checkpointKey, KEY);
  });

  test('out-of-range values are refused, not clamped', async () => {
    await assert.rejects(load('- audit:\n    maxBodyBytes: 100'), /maxBodyBytes/);
    await assert.rejects(load('- audit:\n    bodies: all'), /bodies/);
  });

  test('entries must agree on the gateway-wide settings; bodies may differ', async () => {
    const second = '  - name: other\n    routes: [/v1/embeddings]\n    plugins:\n      - auth\n      - audit:\n          bodies: both\n';
    await load('- audit', second);
    await assert.rejects(load('- audit', `${second}          batchSize: 10\n`), /every audit entry shares one recorder/);
  });
});

describe('audit bodies', () => {
  test('credential-looking strings are redacted', () => {
    const text = [
      'Authorization: Bearer abcdefghijklmnop', 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz', 'aigw_sk_0123456789abcdef',
      'AKIAABCDEFGHIJKLMNOP', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop',
      'api_key=supersecretvalue', 'password: "hunter2hunter2"', 'github_pat_11ABCDEFG0123456789abcdefghij', 'xoxb-1234567890-abcdefghij',
      'AIzaSyA1234567890abcdefghijklmnopqrstuv', 'rk_live_abcdefghijklmnopqrstuvwx', '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----',
    ].join(' | ');
    const out = redactCredentials(text);
    for (const secret of ['abcdefghijklmnop', 'sk-ant-api03', 'aigw_sk_0123', 'AKIAABCD', 'ghp_abcd', 'eyJhbGci', 'supersecretvalue', 'hunter2hunter2', 'github_pat_11', 'xoxb-12', 'AIzaSyA1', 'rk_live_', 'MIIEpAIB']) {
      assert.ok(!out.includes(secret), `${secret} is gone: ${out}`);
    }
    assert.match(out, /api_key=\[REDACTED\]/);
    assert.equal(redactCredentials('the weather is fine today'), 'the weather is fine today');
  });

  test('a long body is cut on a character boundary and marked', () => {
    const body = auditBody({ text: 'é'.repeat(400) }, 256);
    assert.equal(body.truncated, true);
    assert.ok(Buffer.byteLength(body.text) <= 256);
    assert.ok(!body.text.includes('\ufffd'));
    assert.deepEqual(auditBody('short', 256), { text: 'short', truncated: false });
    assert.ok(auditBody(`x sk-${'a'.repeat(30)}`, 256).text.endsWith(REDACTED));
  });

  test('canonical JSON sorts keys at every level and drops undefined members', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: null }], c: undefined } }), '{"a":{"d":[1,{"y":null,"z":1}]},"b":1}');
  });
});
