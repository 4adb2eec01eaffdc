/**
 * The audit plugin's records: one per request on every route it is listed on (an answer, a stream, a refusal by
 * auth listed after it, a local endpoint), one per admin write (refused ones too), never a credential; bodies
 * only when configured, redacted; the admin list and NDJSON export with filters and the admin's tenant scope.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { canonicalJson, chainHash, GENESIS_HASH } from '../../plugins/audit/chain.ts';
import { verifyChain } from '../../plugins/audit/verify.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { auditConfig, auditRecordOf, auditRows } from '../helpers/audit.ts';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe('audit records', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let key: string;
  let keyId: string;

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(auditConfig(fake.baseUrl, '- audit:\n    bodies: both\n    maxBodyBytes: 2048', '  - name: passthrough\n    routes: [/proxy]\n    plugins: [audit, auth]\n'));
    const created = await postJson(`${gw.url}/admin/v1/keys`, { name: 'audited' }, admin);
    assert.equal(created.status, 201);
    key = created.body.key;
    keyId = created.body.id;
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  const chat = (id: string, body: Record<string, unknown> = {}, headers: Record<string, string> = { authorization: `Bearer ${key}` }) =>
    postJson(`${gw.url}/v1/chat/completions`, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...body }, { ...headers, 'x-request-id': id });

  test('an answered request: caller, route, models, provider, status, tokens, cost; bodies redacted', async () => {
    const id = randomUUID();
    const r = await chat(id, { messages: [{ role: 'user', content: 'my key is sk-abcdefghijklmnopqrstuvwxyz123456, keep it' }] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const row = await auditRecordOf(gw, id);
    assert.ok(row);
    const rec = row.record;
    assert.equal(rec.type, 'request');
    assert.equal(rec.requestId, id);
    assert.equal(rec.apiKeyId, keyId);
    assert.equal(rec.callerKind, 'api_key');
    assert.equal(rec.tenantId, 'default');
    assert.equal(rec.route, '/v1/chat/completions');
    assert.equal(rec.modelRequested, 'gpt-4o-mini');
    assert.equal(rec.modelResolved, 'gpt-4o-mini');
    assert.equal(rec.provider, 'openai');
    assert.equal(rec.upstreamModel, 'gpt-4o-mini-2024-07-18');
    assert.equal(rec.status, 200);
    assert.equal(rec.outcome, 'completed');
    assert.equal(rec.errorCode, null);
    assert.ok(rec.tokens.total > 0);
    assert.ok(rec.costUsd > 0);
    assert.equal(rec.cache, null);
    assert.deepEqual(rec.guardVerdicts, []);
    assert.ok(rec.clientIp);
    assert.match(rec.requestBody, /\[REDACTED\]/);
    assert.doesNotMatch(rec.requestBody, /sk-abcdefghijklmnop/);
    assert.ok(rec.responseBody.length > 0);
    const text = JSON.stringify(row);
    assert.ok(!text.includes(key), 'the caller\'s key is in no record');
    assert.ok(!text.includes('sk-upstream-secret'), 'the provider key is in no record');
  });

  test('a streamed request is recorded when its stream ends, with what was sent', async () => {
    const id = randomUUID();
    const r = await chat(id, { stream: true, stream_options: { include_usage: true } });
    assert.equal(r.status, 200);
    const rec = (await auditRecordOf(gw, id))!.record;
    assert.equal(rec.stream, true);
    assert.equal(rec.outcome, 'completed');
    assert.equal(rec.status, 200);
    assert.ok(typeof rec.responseBody === 'string' && rec.responseBody.length > 0, JSON.stringify(rec));
  });

  test('a request auth refuses (audit listed first) is recorded with its status and error code, no caller', async () => {
    const id = randomUUID();
    const r = await chat(id, {}, { authorization: 'Bearer aigw_sk_not-a-real-key-at-all' });
    assert.equal(r.status, 401);
    const row = (await auditRecordOf(gw, id))!;
    assert.equal(row.record.status, 401);
    assert.equal(row.record.outcome, 'failed');
    assert.match(row.record.errorCode, /^AUTH_/);
    assert.equal(row.record.apiKeyId, null);
    assert.ok(!JSON.stringify(row).includes('not-a-real-key'), 'the presented credential is not recorded');
  });

  test('a local endpoint (GET /v1/models) is recorded', async () => {
    const id = randomUUID();
    const r = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}`, 'x-request-id': id } });
    assert.equal(r.status, 200);
    const rec = (await auditRecordOf(gw, id))!.record;
    assert.equal(rec.route, '/v1/models');
    assert.equal(rec.method, 'GET');
    assert.equal(rec.status, 200);
  });

  test('the passthrough is recorded under its route', async () => {
    const id = randomUUID();
    const r = await fetch(`${gw.url}/proxy/openai/v1/models`, { headers: { authorization: `Bearer ${key}`, 'x-request-id': id } });
    await r.arrayBuffer();
    const rec = (await auditRecordOf(gw, id))!.record;
    assert.equal(rec.route, '/proxy');
    assert.equal(rec.status, r.status, JSON.stringify(rec));
  });

  test('admin writes are recorded, refused ones too, without bodies', async () => {
    const id = randomUUID();
    const created = await postJson(`${gw.url}/admin/v1/keys`, { name: 'second' }, { ...admin, 'x-request-id': id });
    assert.equal(created.status, 201);
    const refusedId = randomUUID();
    const refused = await postJson(`${gw.url}/admin/v1/keys`, { name: 'x' }, { authorization: 'Bearer wrong', 'x-request-id': refusedId });
    assert.equal(refused.status, 401);
    const row = (await auditRecordOf(gw, id))!;
    assert.equal(row.kind, 'admin');
    assert.equal(row.record.actor, 'admin-token');
    assert.equal(row.record.method, 'POST');
    assert.equal(row.record.route, '/admin/v1/keys');
    assert.equal(row.record.status, 201);
    assert.ok(!JSON.stringify(row).includes(created.body.key), 'the created key\'s secret is not recorded');
    const refusedRow = (await auditRecordOf(gw, refusedId))!;
    assert.equal(refusedRow.record.status, 401);
    assert.equal(refusedRow.record.actor, null);
    assert.match(refusedRow.record.errorCode, /^AUTH_/);
  });

  test('the chain links every record and verifies', async () => {
    const rows = await auditRows(gw);
    assert.ok(rows.length >= 6);
    let prev = GENESIS_HASH;
    rows.forEach((row, i) => {
      assert.equal(row.seq, i + 1);
      assert.equal(row.prev_hash, prev);
      assert.equal(row.hash, chainHash(prev, canonicalJson(row.record)));
      prev = row.hash;
    });
    const result = await verifyChain(gw.gateway.services.db, undefined);
    assert.deepEqual(result, { ok: true, records: rows.length, firstSeq: 1, lastSeq: rows.length, checkpointSeq: null });
  });

  test('GET /admin/v1/audit pages and filters; the export streams NDJSON with the same filters', async () => {
    const all = await auditRows(gw);
    const first = await fetch(`${gw.url}/admin/v1/audit?limit=2`, { headers: admin }).then((r) => r.json()) as any;
    assert.equal(first.data.length, 2);
    assert.equal(first.has_more, true);
    assert.deepEqual(first.data.map((d: any) => d.seq), [1, 2]);
    const second = await fetch(`${gw.url}/admin/v1/audit?limit=2&cursor=${first.next_cursor}`, { headers: admin }).then((r) => r.json()) as any;
    assert.deepEqual(second.data.map((d: any) => d.seq), [3, 4]);
    const refused = await fetch(`${gw.url}/admin/v1/audit?status=401`, { headers: admin }).then((r) => r.json()) as any;
    assert.ok(refused.data.length >= 2 && refused.data.every((d: any) => d.record.status === 401));
    for (const from of ['yesterday', '0000-01-01T00:00:00Z', '10000-01-01T00:00:00Z']) {
      const bad = await fetch(`${gw.url}/admin/v1/audit?from=${from}`, { headers: admin });
      assert.equal(bad.status, 400, from);
    }

    const exported = await fetch(`${gw.url}/admin/v1/audit/export?kind=request`, { headers: admin });
    assert.equal(exported.status, 200);
    assert.match(exported.headers.get('content-type')!, /application\/x-ndjson/);
    const lines = (await exported.text()).trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.seq), all.filter((r) => r.kind === 'request' && r.seq <= lines.at(-1).seq).map((r) => r.seq));
    for (const line of lines) assert.equal(line.hash, chainHash(line.prevHash, canonicalJson(line.record)), 'an export verifies offline');
  });

  test('/openapi.json documents the audit routes', async () => {
    const doc = await fetch(`${gw.url}/openapi.json`).then((r) => r.json()) as any;
    assert.ok(doc.paths['/admin/v1/audit'].get);
    assert.ok(doc.paths['/admin/v1/audit/export'].get.responses['200'].content['application/x-ndjson']);
  });
});
