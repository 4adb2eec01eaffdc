/**
 * guards and audit in one pipeline: what the guards found and did reaches the audit record (the verdicts, and a
 * block's status and code); the recorded request body is the redacted one the provider received, and a blocked
 * body is not kept at all.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { auditConfig, auditRecordOf } from '../helpers/audit.ts';

describe('guards and audit together', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let key: string;

  before(async () => {
    fake = await startFakeOpenAI();
    // audit first (it records refusals too), then auth, then guards nearest the provider.
    gw = await startTestGateway(auditConfig(fake.baseUrl, '- audit:\n    bodies: request', '      - guards\n'));
    const created = await postJson(`${gw.url}/admin/v1/keys`, { name: 'guarded' }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    key = created.body.key;
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  const chat = (id: string, content: string) => postJson(`${gw.url}/v1/chat/completions`,
    { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }, { authorization: `Bearer ${key}`, 'x-request-id': id });

  test('a redacted e-mail: the verdict is in the record, and neither the provider nor the record has the address', async () => {
    const id = randomUUID();
    const r = await chat(id, 'write to jane.doe@example.com about the invoice');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const rec = (await auditRecordOf(gw, id))!.record;
    assert.deepEqual(rec.guardVerdicts, [{ guard: 'pii', type: 'email', action: 'redact', direction: 'input', count: 1 }]);
    assert.equal(rec.status, 200);
    assert.ok(!JSON.stringify(rec).includes('jane.doe@example.com'), 'the address is not in the audit record');
    assert.ok(!JSON.stringify(fake.requests.at(-1)).includes('jane.doe@example.com'), 'the provider did not get it');
  });

  test('a blocked card number: 400 GUARD_BLOCKED, recorded with its verdict and code, no provider call', async () => {
    const id = randomUUID();
    const before = fake.requests.length;
    const r = await chat(id, 'charge 4111 1111 1111 1111 please');
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, 'GUARD_BLOCKED');
    assert.equal(fake.requests.length, before);
    const rec = (await auditRecordOf(gw, id))!.record;
    assert.equal(rec.status, 400);
    assert.equal(rec.errorCode, 'GUARD_BLOCKED');
    assert.deepEqual(rec.guardVerdicts.map((v: { type: string; action: string }) => [v.type, v.action]), [['payment_card', 'block']]);
    assert.equal(rec.requestBodyOmitted, 'guard_blocked');
    assert.ok(!JSON.stringify(rec).includes('4111 1111 1111 1111'), 'the card number is not in the audit record');
  });
});
