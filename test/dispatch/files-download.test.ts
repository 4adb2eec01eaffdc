/**
 * Reading a provider file's bytes back (downloadFile), for the files APIs on the loopback files fake: OpenAI, Azure
 * OpenAI and Anthropic files uploaded through the core come back byte for byte; a file the provider does not have
 * is its mapped 404; Anthropic refuses the content of uploaded files; a file past the limit is 413 and its body is
 * dropped, not read on (declared or chunked); an abort stops the read; Gemini, which serves no content, is refused
 * before any request.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { canDownload, deleteProviderFile, downloadFile, uploadFile } from '../../core/dispatch/files-call.ts';
import type { ProviderDefinition, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import anthropic from '../../providers/anthropic/index.ts';
import { azureOpenAi } from '../../providers/azure-openai/index.ts';
import bedrock from '../../providers/bedrock/index.ts';
import cohere from '../../providers/cohere/index.ts';
import gemini from '../../providers/gemini/index.ts';
import openai from '../../providers/openai/index.ts';
import vertexAi from '../../providers/vertex-ai/index.ts';
import { KEEP_WHOLE, startFakeFiles, type FakeFiles, type FileRequest } from '../fakes/files.ts';
import { testCallDeps } from '../helpers/call-deps.ts';

const MiB = 1024 * 1024;
const signal = () => AbortSignal.timeout(20_000);
const isError = (code: string, check: (err: GatewayError) => boolean = () => true) => (err: unknown) => err instanceof GatewayError && err.code === code && check(err);
const upstreamStatus = (err: GatewayError) => (err.details as { upstreamStatus?: number }).upstreamStatus;

describe('downloadFile against the files fake', () => {
  let fake: FakeFiles;
  let deps: ReturnType<typeof testCallDeps>;
  const target = (slug: string, apiKey: string, options: Record<string, unknown> = {}): ProviderTarget =>
    ({ slug, baseUrl: `${fake.origin}/${slug === 'azure-openai' ? 'azure' : slug}`, apiKey, headers: {}, options, upstreamModel: '' });
  const providers: Array<[ProviderDefinition, () => ProviderTarget]> = [
    [openai, () => target('openai', 'sk-upstream')],
    [azureOpenAi, () => target('azure-openai', 'azure-key', { apiVersion: '2024-10-21' })],
    [anthropic, () => target('anthropic', 'sk-ant-upstream')],
  ];
  async function* inChunks(bytes: Buffer, size = 100_003): AsyncGenerator<Buffer> {
    for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
  }
  const upload = async (provider: ProviderDefinition, t: ProviderTarget, bytes: Buffer) =>
    (await uploadFile(deps, provider, t, { filename: 'notes.txt', mimeType: 'text/plain', purpose: 'assistants' }, { bytes: inChunks(bytes), callerFault: () => undefined }, signal())).id;
  const lastContentRequest = (): FileRequest => fake.requests.filter((r) => r.method === 'GET' && r.path.includes('/content')).at(-1)!;

  before(async () => {
    fake = await startFakeFiles();
    deps = testCallDeps();
  });
  after(async () => {
    await deps?.close();
    await fake?.close();
  });

  test('canDownload: every files provider but Gemini, whose File API serves no content; none without a files API', () => {
    assert.deepEqual([openai, azureOpenAi, anthropic, bedrock, vertexAi, gemini, cohere].map((p) => [p.slug, canDownload(p)]),
      [['openai', true], ['azure-openai', true], ['anthropic', true], ['bedrock', true], ['vertex-ai', true], ['gemini', false], ['cohere', false]]);
  });

  for (const [provider, targetOf] of providers) {
    test(`${provider.slug}: an uploaded file comes back byte for byte; one the provider does not have is its mapped 404`, async () => {
      const t = targetOf();
      const bytes = randomBytes(KEEP_WHOLE - 7);
      const id = await upload(provider, t, bytes);
      // Uploads to Anthropic are not downloadable: here the file stands for one code execution made.
      if (provider === anthropic) fake.downloadable.add(id);
      const downloaded = await downloadFile(deps, provider, t, id, { maxBytes: KEEP_WHOLE, signal: signal() });
      assert.ok(downloaded.equals(bytes), 'the same bytes (more than upstream.maxBodyBytes: the caller\'s limit is the one that counts)');
      const sent = lastContentRequest();
      if (provider === openai) {
        assert.equal(sent.path, `/openai/files/${id}/content`);
        assert.equal(sent.headers.authorization, 'Bearer sk-upstream');
      } else if (provider === azureOpenAi) {
        assert.equal(sent.path, `/azure/files/${id}/content?api-version=2024-10-21`);
        assert.equal(sent.headers['api-key'], 'azure-key');
      } else {
        assert.equal(sent.path, `/anthropic/files/${id}/content`);
        assert.deepEqual([sent.headers['x-api-key'], sent.headers['anthropic-beta']], ['sk-ant-upstream', 'files-api-2025-04-14']);
      }
      assert.equal(sent.headers['content-type'], undefined, 'a GET has no body to type');

      await deleteProviderFile(deps, provider, t, id, signal());
      await assert.rejects(downloadFile(deps, provider, t, id, { maxBytes: KEEP_WHOLE, signal: signal() }),
        isError('UPSTREAM_BAD_REQUEST', (err) => upstreamStatus(err) === 404));
    });
  }

  test('anthropic: the content of an uploaded file is refused (the caller skips it), as Anthropic serves only files it made', async () => {
    const t = target('anthropic', 'sk-ant-upstream');
    const id = await upload(anthropic, t, Buffer.from('uploaded, never downloadable'));
    await assert.rejects(downloadFile(deps, anthropic, t, id, { maxBytes: MiB, signal: signal() }),
      isError('UPSTREAM_BAD_REQUEST', (err) => upstreamStatus(err) === 400 && /not downloadable/.test(err.message)));
  });

  test('an upstream failure is mapped as the provider maps it; a success other than 200 carries no file', async () => {
    const t = target('openai', 'sk-upstream');
    const id = await upload(openai, t, Buffer.from('abc'));
    fake.failWith(503);
    try {
      await assert.rejects(downloadFile(deps, openai, t, id, { maxBytes: MiB, signal: signal() }), isError('UPSTREAM_ERROR', (err) => upstreamStatus(err) === 503));
      fake.failWith(204);
      await assert.rejects(downloadFile(deps, openai, t, id, { maxBytes: MiB, signal: signal() }), isError('UPSTREAM_ERROR', (err) => /a 204 answer to a file download/.test(err.message)));
    } finally {
      fake.failWith(null);
    }
  });

  for (const chunked of [false, true]) {
    test(`past maxBytes (${chunked ? 'chunked: counted as read' : 'declared by content-length'}): 413 naming the limit, the body dropped, not read on`, async () => {
      const t = target('openai', 'sk-upstream');
      const failures = () => deps.breakers.states().find((b) => b.provider === 'openai')?.failures ?? 0;
      const failedBefore = failures();
      // Larger than the fake keeps of an upload, and than socket buffers hold of an answer no one reads: stored as
      // the provider's own, so that what went out shows whether the gateway read on.
      const bytes = randomBytes(6 * KEEP_WHOLE);
      const id = `file-large${chunked ? 'chunked' : 'declared'}`;
      fake.stored.set(id, bytes.length);
      fake.contents.set(id, bytes);
      fake.chunkedContent = chunked;
      try {
        assert.ok((await downloadFile(deps, openai, t, id, { maxBytes: bytes.length, signal: signal() })).equals(bytes), 'exactly the limit is within it');
        await assert.rejects(downloadFile(deps, openai, t, id, { maxBytes: MiB, signal: signal() }),
          isError('PAYLOAD_TOO_LARGE', (err) => (err.details as { limitBytes?: number }).limitBytes === MiB && err.message.includes(String(MiB))));
        const served = lastContentRequest().served!;
        await served.ended;
        assert.equal(served.complete, false, 'the connection was dropped before the fake could send it all');
        assert.ok(served.bytes < bytes.length / 2, `${served.bytes} of ${bytes.length} bytes went out before the gateway stopped`);
      } finally {
        fake.chunkedContent = false;
      }
      assert.equal(failures(), failedBefore, 'a file over the caller\'s limit says nothing of the upstream\'s health');
    });
  }

  test('an abort of the signal stops a download in the middle of its body', async () => {
    const t = target('openai', 'sk-upstream');
    const id = await upload(openai, t, randomBytes(2 * MiB));
    let release = () => {};
    fake.contentGate = new Promise<void>((resolve) => (release = resolve));
    const controller = new AbortController();
    try {
      const started = fake.nextContent();
      const download = downloadFile(deps, openai, t, id, { maxBytes: 8 * MiB, signal: controller.signal });
      const record = await started;
      controller.abort();
      await assert.rejects(download, (err: Error) => err.name === 'AbortError');
      release();
      await record.served!.ended;
      assert.equal(record.served!.complete, false);
    } finally {
      fake.contentGate = null;
      release();
    }
  });

  test('gemini: 400 CAPABILITY_NOT_SUPPORTED before any request', async () => {
    const before = fake.requests.length;
    const t: ProviderTarget = { slug: 'gemini', baseUrl: `${fake.origin}/gemini/v1beta`, apiKey: 'goog-key', headers: {}, options: {}, upstreamModel: '' };
    await assert.rejects(downloadFile(deps, gemini, t, 'files/abc', { maxBytes: MiB, signal: signal() }),
      isError('CAPABILITY_NOT_SUPPORTED', (err) => (err.details as { provider?: string }).provider === 'gemini'));
    await assert.rejects(downloadFile(deps, cohere, { ...t, slug: 'cohere' }, 'x', { maxBytes: MiB, signal: signal() }), isError('CAPABILITY_NOT_SUPPORTED'));
    assert.equal(fake.requests.length, before);
  });
});
