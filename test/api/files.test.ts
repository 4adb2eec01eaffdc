/**
 * /v1/files end to end: the official openai client uploads (multipart), lists, retrieves and deletes through the
 * gateway against a fake openai files API; anthropic, gemini (resumable) and azure-openai uploads against fakes of
 * their wire formats; JSON base64 uploads; id translation for later requests (resolveFile).
 */
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { resolveFile } from '../../core/store/files.ts';
import { filesConfig, startFakeFiles, type FakeFiles } from '../fakes/files.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

describe('/v1/files', () => {
  let fake: FakeFiles;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeFiles();
    gw = await startTestGateway(filesConfig(fake.origin));
    key = await gw.createKey({ scopes: { capabilities: ['files'] } });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('the openai client uploads a stream (multipart), lists, retrieves and deletes through the gateway', async () => {
    const content = 'line one\n'.repeat(5000);
    const path = join(await mkdtemp(join(tmpdir(), 'aigw-files-')), 'input.jsonl');
    await writeFile(path, content);
    // The client streams the form in the order of the object's keys: provider and purpose first.
    const created = await client.files.create({ provider: 'openai', purpose: 'batch', file: createReadStream(path) } as OpenAI.FileCreateParams);
    await rm(dirname(path), { recursive: true });
    assert.match(created.id, /^file-[0-9a-f-]{36}$/);
    assert.equal(created.object, 'file');
    assert.equal(created.bytes, content.length);
    assert.equal(created.filename, 'input.jsonl');
    assert.equal(created.purpose, 'batch');
    assert.equal(created.status, 'processed');
    assert.equal((created as unknown as { provider: string }).provider, 'openai');

    const upload = fake.requests.find((r) => r.method === 'POST' && r.path === '/openai/files')!;
    assert.equal(upload.headers.authorization, 'Bearer sk-upstream-openai');
    assert.ok(!JSON.stringify(upload.headers).includes(key), 'the caller key never goes upstream');
    assert.deepEqual(upload.fields, { purpose: 'batch' });
    assert.deepEqual(upload.partOrder, ['purpose', 'file']);
    assert.equal(upload.file!.bytes, content.length);
    assert.equal(upload.file!.filename, 'input.jsonl');
    assert.equal(upload.file!.head, content.slice(0, 1024));
    assert.equal(fake.stored.size, 1);

    const fetched = await client.files.retrieve(created.id);
    assert.deepEqual(fetched, created);

    const listed = await client.files.list({ purpose: 'batch' });
    assert.ok(listed.data.some((f) => f.id === created.id));

    const deleted = await client.files.delete(created.id);
    assert.deepEqual(deleted, { id: created.id, object: 'file', deleted: true });
    assert.equal(fake.stored.size, 0, 'the provider file is deleted too');
    await assert.rejects(client.files.retrieve(created.id), (err: InstanceType<typeof OpenAI.APIError>) => err.status === 404);
    const again = await fetch(`${gw.url}/v1/files/${created.id}`, { method: 'DELETE', headers: auth(key) });
    assert.equal(again.status, 404);
    assert.equal(((await again.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');
  });

  test('a File object given to the openai client uploads with provider and purpose first; expires_in_seconds and metadata are kept', async () => {
    const file = await toFile(Buffer.from('{"a":1}\n'), 'small.jsonl', { type: 'application/jsonl' });
    const created = await client.files.create({ provider: 'openai', purpose: 'user_data', file, expires_in_seconds: 3600, metadata: { team: 'search' } } as unknown as OpenAI.FileCreateParams);
    const now = Math.floor(Date.now() / 1000);
    assert.ok(created.expires_at! >= now + 3590 && created.expires_at! <= now + 3610, `expires_at ${created.expires_at}`);
    assert.deepEqual((created as unknown as { metadata: unknown }).metadata, { team: 'search' });
    assert.equal(fake.requests.at(-1)!.file!.mimeType, 'application/jsonl');
  });

  test('the file part before provider: 400 naming the order, nothing sent upstream, no entry', async () => {
    const before = fake.requests.length;
    const form = new FormData();
    form.append('file', new Blob(['x']), 'a.txt');
    form.append('provider', 'openai');
    form.append('purpose', 'batch');
    const response = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: auth(key), body: form });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { error: { code: string; details: Array<{ path: string; message: string }> } };
    assert.equal(body.error.code, 'VALIDATION_ERROR');
    assert.match(body.error.details.find((d) => d.path === '/provider')!.message, /before the file part/);
    assert.equal(fake.requests.length, before);
  });

  test('JSON with content_base64 uploads; bad fields are refused with their paths', async () => {
    const bytes = Buffer.from('hello from base64');
    const ok = await postJson(`${gw.url}/v1/files`, { provider: 'openai', purpose: 'assistants', filename: 'h.txt', mime_type: 'text/plain', content_base64: bytes.toString('base64') }, auth(key));
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.bytes, bytes.length);
    assert.equal(ok.body.filename, 'h.txt');
    assert.equal(fake.requests.at(-1)!.file!.head, bytes.toString('latin1'));

    const bad = await postJson(`${gw.url}/v1/files`, { provider: 'openai', purpose: 'nope', filename: '', content_base64: '***', expires_in_seconds: 0 }, auth(key));
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'VALIDATION_ERROR');
    assert.deepEqual(bad.body.error.details.map((d: { path: string }) => d.path).sort(), ['/expires_in_seconds', '/purpose']);
    const noFile = await postJson(`${gw.url}/v1/files`, { provider: 'openai', purpose: 'batch', filename: 'a', content_base64: '***' }, auth(key));
    assert.deepEqual(noFile.body.error.details.map((d: { path: string }) => d.path).sort(), ['/content_base64', '/mime_type']);
  });

  test('anthropic: the Files API with its beta header; the provider id is translated only for anthropic', async () => {
    const form = new FormData();
    form.append('provider', 'anthropic');
    form.append('purpose', 'user_data');
    form.append('file', new Blob(['%PDF-1.4 fake'], { type: 'application/pdf' }), 'doc.pdf');
    const response = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: auth(key), body: form });
    const created = (await response.json()) as { id: string; bytes: number; provider: string };
    assert.equal(response.status, 200, JSON.stringify(created));
    assert.equal(created.provider, 'anthropic');
    const seen = fake.requests.at(-1)!;
    assert.equal(seen.path, '/anthropic/files');
    assert.equal(seen.headers['anthropic-beta'], 'files-api-2025-04-14');
    assert.equal(seen.headers['x-api-key'], 'sk-ant-upstream');
    assert.ok(seen.headers['anthropic-version']);
    assert.deepEqual(seen.partOrder, ['file']);
    assert.equal(seen.file!.mimeType, 'application/pdf');

    const db = gw.gateway.services.db;
    const providerId = await resolveFile(db, 'default', created.id, 'anthropic');
    assert.match(providerId, /^file_/);
    assert.ok(fake.stored.has(providerId));
    await assert.rejects(resolveFile(db, 'default', created.id, 'openai'), (err: { code: string; status: number }) => err.code === 'FILE_PROVIDER_MISMATCH' && err.status === 400);
    await assert.rejects(resolveFile(db, 'default', 'file-00000000-0000-0000-0000-000000000000', 'anthropic'), (err: { code: string }) => err.code === 'NOT_FOUND');
    await assert.rejects(resolveFile(db, 'another-tenant', created.id, 'anthropic'), (err: { code: string }) => err.code === 'NOT_FOUND');
  });

  test('gemini: resumable start with the metadata, then the bytes with upload, finalize; expiry from the provider', async () => {
    const bytes = Buffer.from('gemini bytes '.repeat(100));
    const ok = await postJson(`${gw.url}/v1/files`, { provider: 'gemini', purpose: 'vision', filename: 'g.txt', mime_type: 'text/plain', content_base64: bytes.toString('base64') }, auth(key));
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const [start, upload] = fake.requests.slice(-2);
    assert.equal(start!.path, '/upload/gemini/v1beta/files');
    assert.equal(start!.headers['x-goog-upload-protocol'], 'resumable');
    assert.equal(start!.headers['x-goog-upload-command'], 'start');
    assert.equal(start!.headers['x-goog-upload-header-content-length'], String(bytes.length));
    assert.equal(start!.headers['x-goog-upload-header-content-type'], 'text/plain');
    assert.equal(start!.headers['x-goog-api-key'], 'goog-key');
    assert.deepEqual(start!.fields, { display_name: 'g.txt' });
    assert.match(upload!.path, /^\/upload\/gemini\/v1beta\/files\?upload_id=/);
    assert.equal(upload!.headers['x-goog-upload-command'], 'upload, finalize');
    assert.equal(upload!.file!.bytes, bytes.length);
    const in48h = Math.floor(Date.now() / 1000) + 48 * 3600;
    assert.ok(Math.abs(ok.body.expires_at - in48h) < 30, 'the provider\'s 48 h expiry is the entry\'s');

    const providerId = await resolveFile(gw.gateway.services.db, 'default', ok.body.id, 'gemini');
    assert.match(providerId, /^files\//);
    const deleted = await fetch(`${gw.url}/v1/files/${ok.body.id}`, { method: 'DELETE', headers: auth(key) });
    assert.equal(deleted.status, 200);
    assert.equal(fake.requests.at(-1)!.path, `/gemini/v1beta/${providerId}`);
    assert.ok(!fake.stored.has(providerId));
  });

  test('azure-openai: the OpenAI files API under the resource, with api-version and api-key', async () => {
    const form = new FormData();
    form.append('provider', 'azure-openai');
    form.append('purpose', 'fine-tune');
    form.append('file', new Blob(['{"messages":[]}\n']), 'train.jsonl');
    const response = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: auth(key), body: form });
    assert.equal(response.status, 200);
    const seen = fake.requests.at(-1)!;
    assert.match(seen.path, /^\/azure\/files\?api-version=\d{4}-\d{2}-\d{2}/);
    assert.equal(seen.headers['api-key'], 'azure-key');
    assert.deepEqual(seen.fields, { purpose: 'fine-tune' });
  });

  test('a provider without a files API: 400 CAPABILITY_NOT_SUPPORTED before any I/O; an unknown one: 400', async () => {
    const before = fake.requests.length;
    const cohere = await postJson(`${gw.url}/v1/files`, { provider: 'cohere', purpose: 'batch', filename: 'a', mime_type: 'text/plain', content_base64: 'YQ==' }, auth(key));
    assert.equal(cohere.status, 400);
    assert.equal(cohere.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    const unknown = await postJson(`${gw.url}/v1/files`, { provider: 'nowhere', purpose: 'batch', filename: 'a', mime_type: 'text/plain', content_base64: 'YQ==' }, auth(key));
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.details[0].path, '/provider');
    assert.equal(fake.requests.length, before);
  });

  test('a provider deleting a file it no longer has (404) still removes the entry', async () => {
    const created = await postJson(`${gw.url}/v1/files`, { provider: 'openai', purpose: 'batch', filename: 'a', mime_type: 'text/plain', content_base64: 'YQ==' }, auth(key));
    fake.stored.clear();
    const deleted = await fetch(`${gw.url}/v1/files/${created.body.id}`, { method: 'DELETE', headers: auth(key) });
    assert.equal(deleted.status, 200);
    assert.equal((await fetch(`${gw.url}/v1/files/${created.body.id}`, { headers: auth(key) })).status, 404);
  });

  test('a provider error on upload is the caller\'s error and leaves no entry', async () => {
    const listed = async () => ((await (await fetch(`${gw.url}/v1/files?limit=100`, { headers: auth(key) })).json()) as { data: unknown[] }).data.length;
    const count = await listed();
    fake.failWith(500);
    try {
      const failed = await postJson(`${gw.url}/v1/files`, { provider: 'openai', purpose: 'batch', filename: 'a', mime_type: 'text/plain', content_base64: 'YQ==' }, auth(key));
      assert.equal(failed.status, 502);
      assert.equal(failed.body.error.code, 'UPSTREAM_ERROR');
    } finally {
      fake.failWith(null);
    }
    assert.equal(await listed(), count);
  });

  test('the list pages with limit and cursor (and after=<id>, as the openai client pages), filtered by purpose', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await postJson(`${gw.url}/v1/files`, { provider: 'openai', purpose: 'fine-tune', filename: `p${i}`, mime_type: 'text/plain', content_base64: 'YQ==' }, auth(key));
      ids.push(created.body.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const response = await fetch(`${gw.url}/v1/files?purpose=fine-tune&limit=2${cursor ? `&cursor=${cursor}` : ''}`, { headers: auth(key) });
      const page = (await response.json()) as { object: string; data: Array<{ id: string; purpose: string }>; has_more: boolean; next_cursor: string | null };
      assert.equal(page.object, 'list');
      assert.ok(page.data.length <= 2);
      assert.ok(page.data.every((f) => f.purpose === 'fine-tune'));
      seen.push(...page.data.map((f) => f.id));
      assert.equal(page.has_more, page.next_cursor !== null);
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(seen.filter((id) => ids.includes(id)), ids);

    const paged: string[] = [];
    for await (const file of client.files.list({ purpose: 'fine-tune', limit: 2 })) paged.push(file.id);
    assert.deepEqual(paged.filter((id) => ids.includes(id)), ids);

    const bad = await fetch(`${gw.url}/v1/files?limit=0`, { headers: auth(key) });
    assert.equal(bad.status, 400);
  });

  test('an expired entry is gone for fetch, list and resolveFile', async () => {
    const db = gw.gateway.services.db;
    await db.query(`INSERT INTO files (id, tenant_id, provider, provider_file_id, filename, purpose, bytes, mime_type, expires_at)
      VALUES ('file-00000000-0000-4000-8000-00000000e001', 'default', 'openai', 'file-up', 'old.txt', 'batch', 1, 'text/plain', now() - interval '1 second')`);
    assert.equal((await fetch(`${gw.url}/v1/files/file-00000000-0000-4000-8000-00000000e001`, { headers: auth(key) })).status, 404);
    const page = (await (await fetch(`${gw.url}/v1/files?limit=100`, { headers: auth(key) })).json()) as { data: Array<{ id: string }> };
    assert.ok(!page.data.some((f) => f.id === 'file-00000000-0000-4000-8000-00000000e001'));
    await assert.rejects(resolveFile(db, 'default', 'file-00000000-0000-4000-8000-00000000e001', 'openai'), (err: { code: string }) => err.code === 'NOT_FOUND');
  });

  test('an id that cannot be a gateway id (a NUL, which Postgres refuses) is 404, not a 500', async () => {
    for (const path of ['/v1/files/a%00b', '/v1/files/file-%00']) {
      const response = await fetch(`${gw.url}${path}`, { headers: auth(key) });
      assert.equal(response.status, 404, path);
    }
    const listed = await fetch(`${gw.url}/v1/files?after=a%00b`, { headers: auth(key) });
    assert.equal(listed.status, 400);
  });

  test('a bad field after the file part: 400, and the provider file already made is deleted', async () => {
    const stored = fake.stored.size;
    const form = new FormData();
    form.append('provider', 'openai');
    form.append('purpose', 'batch');
    form.append('file', new Blob(['abc']), 'a.txt');
    form.append('metadata', '{not json');
    const response = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: auth(key), body: form });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: { details: Array<{ path: string }> } }).error.details[0]!.path, '/metadata');
    await eventually(async () => assert.equal(fake.stored.size, stored));
  });

  test('capability files is required: a chat-only key gets 403', async () => {
    const chatOnly = await gw.createKey({ scopes: { capabilities: ['chat'] } });
    const response = await fetch(`${gw.url}/v1/files`, { headers: auth(chatOnly) });
    assert.equal(response.status, 403);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'AUTH_FORBIDDEN');
    const upload = await postJson(`${gw.url}/v1/files`, { provider: 'openai', purpose: 'batch', filename: 'a', mime_type: 'text/plain', content_base64: 'YQ==' }, auth(chatOnly));
    assert.equal(upload.status, 403);
  });
});
