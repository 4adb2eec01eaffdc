/**
 * The embeddings wires of Google's two APIs, as fakes speak them. Gemini API: POST
 * /models/{model}:batchEmbedContents with requests[{model, content: {parts: [{text}]}, taskType?,
 * outputDimensionality?}], answered {embeddings: [{values}]} in request order, no token count. Vertex AI: POST
 * .../publishers/google/models/{model}:predict with instances[{content, task_type?}] and parameters
 * {outputDimensionality?, autoTruncate?}, answered predictions[{embeddings: {values, statistics: {token_count,
 * truncated}}}]. Both answer errors as {error: {code, message, status}}.
 */
import assert from 'node:assert/strict';
import type { EmbeddingsWire } from '../modalities.ts';

const GOOGLE_STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' };

export const googleErrorBody = (status: number, message: string) => ({
  body: JSON.stringify({ error: { code: status, message, status: GOOGLE_STATUS[status] ?? 'UNKNOWN' } }),
});

const GEMINI_PATH = /^(.*)\/models\/([^/:?]+):batchEmbedContents$/;

export const geminiEmbeddingsWire: EmbeddingsWire = {
  summarize(req) {
    const match = GEMINI_PATH.exec(req.url);
    assert.ok(match, `not a batchEmbedContents URL: ${req.url}`);
    const model = decodeURIComponent(match[2]!);
    const requests = req.json?.requests as Array<{ model: string; content: { parts: Array<{ text: string }> }; outputDimensionality?: number; taskType?: string }>;
    assert.ok(Array.isArray(requests) && requests.length > 0, 'requests is a non-empty list');
    const dims = new Set(requests.map((r) => r.outputDimensionality));
    assert.equal(dims.size, 1, 'every request asks for the same dimensionality');
    for (const r of requests) {
      assert.equal(r.model, `models/${model}`, 'each request names the model of the URL');
      assert.equal(r.content.parts.length, 1);
      assert.deepEqual(Object.keys(r).filter((k) => !['model', 'content', 'outputDimensionality', 'taskType'].includes(k)), []);
    }
    const [dimensions] = dims;
    return { model, inputs: requests.map((r) => r.content.parts[0]!.text), dimensions: dimensions ?? null };
  },
  // Gemini counts no tokens for embeddings: `tokens` has nowhere to go.
  answer: (vectors) => ({ body: JSON.stringify({ embeddings: vectors.map((values) => ({ values })) }) }),
  errorBody: googleErrorBody,
  assertAuth(req, credential) {
    assert.equal(req.headers['x-goog-api-key'], credential);
    assert.equal(req.headers.authorization, undefined);
  },
};

const VERTEX_PATH = /^(.*)\/publishers\/google\/models\/([^/:?]+):predict$/;

export const vertexEmbeddingsWire: EmbeddingsWire = {
  summarize(req) {
    const match = VERTEX_PATH.exec(req.url);
    assert.ok(match, `not a text embedding predict URL: ${req.url}`);
    const instances = req.json?.instances as Array<{ content: string; task_type?: string }>;
    const parameters = (req.json?.parameters ?? {}) as { outputDimensionality?: number; autoTruncate?: boolean };
    assert.ok(Array.isArray(instances) && instances.length > 0, 'instances is a non-empty list');
    assert.deepEqual(Object.keys(req.json).filter((k) => !['instances', 'parameters'].includes(k)), []);
    return {
      model: decodeURIComponent(match[2]!),
      inputs: instances.map((i) => i.content),
      dimensions: parameters.outputDimensionality ?? null,
    };
  },
  answer(vectors, tokens) {
    // Each prediction counts its own input's tokens; the total is what the gateway bills, so it sits on the first.
    const predictions = vectors.map((values, i) => ({
      embeddings: { values, statistics: { ...(tokens === null ? {} : { token_count: i === 0 ? tokens : 0 }), truncated: false } },
    }));
    return { body: JSON.stringify({ predictions, metadata: { billableCharacterCount: 0 } }) };
  },
  errorBody: googleErrorBody,
  assertAuth(req, credential) {
    assert.equal(req.headers.authorization, `Bearer ${credential}`);
  },
};
