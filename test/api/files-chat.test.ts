/**
 * Chat `file` parts (and Messages `document` blocks with a file source) naming gateway files: the upstream gets the
 * provider's own id, in its own wire format; a file of another provider, an unknown or expired id, a provider's id
 * and a provider without file inputs are refused before any upstream call.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { insertFile } from '../../core/store/files.ts';
import { startFakeFiles, type FakeFiles } from '../fakes/files.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const config = (origin: string) => `
providers:
  openai: { baseUrl: ${origin}/openai, apiKey: sk-upstream-openai }
  anthropic: { baseUrl: ${origin}/anthropic, apiKey: sk-ant-upstream }
  gemini: { baseUrl: ${origin}/gemini/v1beta, apiKey: goog-key }
  cohere: { baseUrl: ${origin}/cohere, apiKey: co-key }
models:
  - id: gpt
    provider: openai
  - id: claude
    provider: anthropic
  - id: command
    provider: cohere
  - id: flash
    provider: gemini
  - id: claude-then-gpt
    targets: [{ provider: anthropic }, { provider: openai }]
pipelines:
  - name: files
    routes: [/v1/files, /v1/chat/completions, /v1/messages]
    plugins: [auth]
`;

const UNKNOWN = 'file-00000000-0000-4000-8000-000000000000';

describe('file parts in chat requests', () => {
  let fake: FakeFiles;
  let gw: TestGateway;
  let auth: Record<string, string>;
  let openaiFile: { id: string; providerId: string };
  let anthropicFile: { id: string; providerId: string };

  const chatRequests = () => fake.requests.filter((r) => r.path === '/openai/chat/completions' || r.path === '/anthropic/messages');
  const ask = (model: string, part: unknown) =>
    postJson(`${gw.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarize this.' }, part] }] }, auth);
  const filePart = (fileId: string) => ({ type: 'file', file: { file_id: fileId } });

  async function upload(provider: string): Promise<{ id: string; providerId: string }> {
    const response = await postJson(`${gw.url}/v1/files`, {
      provider, purpose: 'user_data', filename: 'report.pdf', mime_type: 'application/pdf', content_base64: Buffer.from('%PDF-1.4 report').toString('base64'),
    }, auth);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const providerId = [...fake.stored.keys()].at(-1)!;
    return { id: response.body.id, providerId };
  }

  before(async () => {
    fake = await startFakeFiles();
    gw = await startTestGateway(config(fake.origin));
    auth = { authorization: `Bearer ${await gw.createKey({ scopes: { capabilities: ['files', 'chat'] } })}` };
    openaiFile = await upload('openai');
    anthropicFile = await upload('anthropic');
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('openai: the file part goes upstream naming the provider id; the gateway id never leaves', async () => {
    const response = await ask('gpt', { type: 'file', file: { file_id: openaiFile.id, filename: 'report.pdf' } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.choices[0].message.content, 'read it');
    const sent = chatRequests().at(-1)!;
    assert.equal(sent.path, '/openai/chat/completions');
    assert.deepEqual(sent.json.messages[0].content[1], { type: 'file', file: { file_id: openaiFile.providerId, filename: 'report.pdf' } });
    assert.ok(!JSON.stringify(sent.json).includes(openaiFile.id));
  });

  test('openai: inline file_data passes through as sent', async () => {
    const part = { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } };
    const response = await ask('gpt', part);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.deepEqual(chatRequests().at(-1)!.json.messages[0].content[1], part);
  });

  test('anthropic: a document block with a file source and the Files API beta header', async () => {
    const response = await ask('claude', { type: 'file', file: { file_id: anthropicFile.id, filename: 'report.pdf' } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const sent = chatRequests().at(-1)!;
    assert.equal(sent.path, '/anthropic/messages');
    assert.deepEqual(sent.json.messages[0].content[1], { type: 'document', source: { type: 'file', file_id: anthropicFile.providerId }, title: 'report.pdf' });
    assert.match(String(sent.headers['anthropic-beta']), /files-api-2025-04-14/);
  });

  test('anthropic: inline PDF data becomes a base64 document; other media types are refused with their path', async () => {
    const ok = await ask('claude', { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=' } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const sent = chatRequests().at(-1)!;
    assert.deepEqual(sent.json.messages[0].content[1], { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } });
    assert.equal(sent.headers['anthropic-beta'], undefined, 'no beta header without an uploaded file');

    const before = chatRequests().length;
    const bad = await ask('claude', { type: 'file', file: { file_data: 'data:image/tiff;base64,AAAA' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'VALIDATION_ERROR');
    assert.equal(bad.body.error.details[0].path, '/messages/0/content/1/file/file_data');
    assert.equal(chatRequests().length, before);
  });

  test('/v1/messages: a document block naming a gateway file reaches anthropic with the provider id', async () => {
    const response = await postJson(`${gw.url}/v1/messages`, {
      model: 'claude', max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: anthropicFile.id } }, { type: 'text', text: 'Summarize.' }] }],
    }, auth);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.content[0].text, 'read it');
    const sent = chatRequests().at(-1)!;
    assert.deepEqual(sent.json.messages[0].content[0], { type: 'document', source: { type: 'file', file_id: anthropicFile.providerId } });
    assert.match(String(sent.headers['anthropic-beta']), /files-api-2025-04-14/);
  });

  test("a file of another provider: 400 FILE_PROVIDER_MISMATCH before any upstream call", async () => {
    const before = chatRequests().length;
    const response = await ask('claude', filePart(openaiFile.id));
    assert.equal(response.status, 400);
    assert.equal(response.body.error.code, 'FILE_PROVIDER_MISMATCH');
    assert.equal(response.body.error.details.fileProvider, 'openai');
    assert.equal(response.body.error.details.provider, 'anthropic');
    assert.equal(chatRequests().length, before);
  });

  test("with several targets, those on another provider than the file's are skipped", async () => {
    const before = chatRequests().length;
    const response = await ask('claude-then-gpt', filePart(openaiFile.id));
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.headers.get('x-provider'), 'openai');
    const sent = chatRequests().slice(before);
    assert.deepEqual(sent.map((r) => r.path), ['/openai/chat/completions']);
    assert.equal(sent[0]!.json.messages[0].content[1].file.file_id, openaiFile.providerId);
  });

  test('an unknown or expired gateway id: 404 NOT_FOUND before any upstream call', async () => {
    const expired = 'file-11111111-1111-4111-8111-111111111111';
    await insertFile(gw.gateway.services.db, expired, {
      tenantId: 'default', provider: 'openai', providerFileId: 'file-gone', filename: 'old.pdf', purpose: 'user_data', bytes: 3,
      mimeType: 'application/pdf', metadata: null, expiresAt: Date.now() - 1000, apiKeyId: null, userId: null,
    });
    const before = chatRequests().length;
    for (const id of [UNKNOWN, expired]) {
      const response = await ask('gpt', filePart(id));
      assert.equal(response.status, 404, id);
      assert.equal(response.body.error.code, 'NOT_FOUND');
      assert.equal(response.body.error.details.id, id);
    }
    assert.equal(chatRequests().length, before);
  });

  test("a provider's own file id is refused: it would bypass the registry", async () => {
    const before = chatRequests().length;
    const response = await ask('gpt', filePart(openaiFile.providerId));
    assert.equal(response.status, 400);
    assert.equal(response.body.error.code, 'VALIDATION_ERROR');
    assert.ok(response.body.error.details.some((d: { path: string }) => d.path === '/messages/0/content/1/file/file_id'), JSON.stringify(response.body.error.details));
    const both = await ask('gpt', { type: 'file', file: { file_id: openaiFile.id, file_data: 'data:application/pdf;base64,JVBERi0=' } });
    assert.equal(both.status, 400, 'file_id or file_data, not both');
    assert.equal(chatRequests().length, before);
  });

  test('a provider without file inputs: 400 CAPABILITY_NOT_SUPPORTED before any I/O', async () => {
    const before = fake.requests.length;
    for (const model of ['command', 'flash']) {
      const response = await ask(model, filePart(UNKNOWN));
      assert.equal(response.status, 400, model);
      assert.equal(response.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
      assert.equal(response.body.error.details.capability, 'files');
    }
    assert.equal(fake.requests.length, before);
  });
});
