/**
 * Vertex AI's two chat wires, under .../v1/projects/{project}/locations/{location} with a Bearer OAuth token:
 * Gemini models at publishers/google/models/{model}:generateContent / :streamGenerateContent?alt=sse (the
 * generateContent wire), Claude models at publishers/anthropic/models/{model}:rawPredict / :streamRawPredict
 * (the Messages body without `model`, with `anthropic_version: vertex-2023-10-16`; Messages answers).
 */
import assert from 'node:assert/strict';
import type { FamilyWire, RecordedUpstreamRequest } from '../kit.ts';
import { messagesAnswer, messagesErrorBody, messagesStreamEvents, summarizeMessagesBody } from './anthropic.ts';
import { geminiWire } from './gemini.ts';

export const VERTEX_PATH = '/v1/projects/conformance-project/locations/us-east5';

function assertBearer(req: RecordedUpstreamRequest, credential: string): void {
  assert.equal(req.headers.authorization, `Bearer ${credential}`);
  assert.equal(req.headers['x-goog-api-key'], undefined);
  assert.equal(req.headers['x-api-key'], undefined);
}

const gemini = geminiWire(assertBearer);

export const vertexGeminiWire: FamilyWire = {
  ...gemini,
  summarize(req) {
    assert.equal(req.method, 'POST');
    assert.match(req.url, /^\/v1\/projects\/conformance-project\/locations\/us-east5\/publishers\/google\/models\/[^/:]+:(generateContent|streamGenerateContent\?alt=sse)$/);
    return gemini.summarize(req);
  },
};

const CLAUDE_URL = /^\/v1\/projects\/conformance-project\/locations\/us-east5\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/;

export const vertexClaudeWire: FamilyWire = {
  summarize(req) {
    assert.equal(req.method, 'POST');
    const url = CLAUDE_URL.exec(req.url);
    assert.ok(url, `a Claude rawPredict URL: ${req.url}`);
    assert.equal(req.json.anthropic_version, 'vertex-2023-10-16');
    assert.equal(req.json.model, undefined, 'the model is named in the URL, not in the body');
    const streaming = url[2] === 'streamRawPredict';
    assert.equal(req.json.stream === true, streaming, 'stream: true exactly on streamRawPredict');
    return { ...summarizeMessagesBody(req.json), model: decodeURIComponent(url[1]!), stream: streaming };
  },
  isStream: (req) => req.url.includes(':streamRawPredict'),
  answerJson: (answer, req) => ({ body: JSON.stringify(messagesAnswer(answer, { ...req.json, model: 'claude-vertex' })) }),
  answerStream: (answer, req) => ({
    headers: { 'content-type': 'text/event-stream; charset=utf-8' },
    body: new TextEncoder().encode(messagesStreamEvents(answer, { ...req.json, model: 'claude-vertex' }).join('')),
  }),
  errorBody: (status, message) => ({ body: messagesErrorBody(status, message) }),
  assertAuth: assertBearer,
};
