/** The files translators on their own: the contract check, and what each reads from its provider's answers. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { providerProblems, type ProviderTarget } from '../../core/dispatch/provider.ts';
import openai from '../../providers/openai/index.ts';
import gemini from '../../providers/gemini/index.ts';
import anthropic from '../../providers/anthropic/index.ts';

const target = (slug: string, baseUrl: string): ProviderTarget => ({ slug, baseUrl, apiKey: 'k', headers: {}, options: {}, upstreamModel: '' });

describe('files translators', () => {
  test('a provider declaring files without a translator is refused', () => {
    const { files: _files, ...rest } = openai;
    assert.match(providerProblems(rest).join('\n'), /declares files but has no files translator/);
    assert.deepEqual(providerProblems(openai), []);
    assert.match(providerProblems({ ...openai, files: { ...openai.files!, download: 'GET' } }).join('\n'), /files\.download must be a function/);
  });

  test('downloads: the content of one file, its id one escaped segment; gemini\'s File API serves none', () => {
    const request = openai.files!.download!('file/../x', target('openai', 'https://x/v1'));
    assert.deepEqual([request.method, request.path, request.body], ['GET', '/files/file%2F..%2Fx/content', undefined]);
    assert.equal(anthropic.files!.download!('file_1', target('anthropic', 'https://x/v1')).headers['anthropic-beta'], 'files-api-2025-04-14');
    assert.equal(gemini.files!.download, undefined);
  });

  test('gemini sends the bytes only to an upload URL of the start request\'s own origin', () => {
    const t = target('gemini', 'https://generativelanguage.googleapis.com/v1beta');
    const plan = gemini.files!.upload({ filename: 'a.txt', mimeType: 'text/plain', purpose: 'user_data' }, t);
    assert.equal(plan.kind, 'resumable');
    if (plan.kind !== 'resumable') return;
    assert.equal(plan.start.path, 'https://generativelanguage.googleapis.com/upload/v1beta/files');
    assert.equal(plan.start.headers['x-goog-upload-header-content-length'], undefined, 'a streamed upload declares no size');
    const next = plan.bytes({ 'x-goog-upload-url': 'https://generativelanguage.googleapis.com/upload/v1beta/files?upload_id=1' });
    assert.equal(next.headers['x-goog-upload-command'], 'upload, finalize');
    assert.throws(() => plan.bytes({ 'x-goog-upload-url': 'https://attacker.example/collect' }), (err: { code: string }) => err.code === 'UPSTREAM_ERROR');
    assert.throws(() => plan.bytes({}), (err: { code: string }) => err.code === 'UPSTREAM_ERROR');
  });

  test('answers: ids, sizes and expiries; an answer without an id is the provider\'s fault', () => {
    assert.deepEqual(openai.files!.fromUpload({ id: 'file-1', bytes: 3, expires_at: 1_700_000_000 }, target('openai', 'https://x/v1')), { id: 'file-1', bytes: 3, expiresAt: 1_700_000_000_000 });
    assert.deepEqual(anthropic.files!.fromUpload({ id: 'file_1', size_bytes: 5 }, target('anthropic', 'https://x/v1')), { id: 'file_1', bytes: 5, expiresAt: null });
    assert.deepEqual(gemini.files!.fromUpload({ file: { name: 'files/abc', sizeBytes: '7', expirationTime: '2025-01-03T00:00:00Z' } }, target('gemini', 'https://x/v1beta')),
      { id: 'files/abc', bytes: 7, expiresAt: Date.parse('2025-01-03T00:00:00Z') });
    assert.throws(() => openai.files!.fromUpload({ object: 'file' }, target('openai', 'https://x/v1')), (err: { code: string }) => err.code === 'UPSTREAM_ERROR');
    assert.equal(gemini.files!.delete('files/abc', target('gemini', 'https://x/v1beta')).path, '/files/abc');
  });
});
